# Training a small mixture-of-experts transformer: top-2 token routing over 8 expert MLPs (tokens gathered per
# expert with index_select, results scattered back with index_add_), a load-balancing loss, bf16 autocast, AdamW.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=80)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--seq", type=int, default=512)
ap.add_argument("--d-model", type=int, default=1024)
ap.add_argument("--layers", type=int, default=4)
ap.add_argument("--experts", type=int, default=8)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def autocast():  # bf16 mixed precision on the GPU, plain fp32 on a CPU
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


class MoE(nn.Module):
    def __init__(self, d, experts, k=2):
        super().__init__()
        self.k = k
        self.router = nn.Linear(d, experts, bias=False)
        self.w1 = nn.ModuleList(nn.Linear(d, 4 * d) for _ in range(experts))
        self.w2 = nn.ModuleList(nn.Linear(4 * d, d) for _ in range(experts))

    def forward(self, x):
        flat = x.reshape(-1, x.shape[-1])
        probs = self.router(flat).float().softmax(-1)
        weight, expert = probs.topk(self.k, dim=-1)
        weight = weight / weight.sum(-1, keepdim=True)
        out = torch.zeros_like(flat)
        for e in range(len(self.w1)):
            token, slot = (expert == e).nonzero(as_tuple=True)
            h = self.w2[e](F.gelu(self.w1[e](flat.index_select(0, token))))
            out.index_add_(0, token, (h * weight[token, slot, None]).to(out.dtype))
        balance = len(self.w1) * (probs.mean(0) * F.one_hot(expert[:, 0], len(self.w1)).float().mean(0)).sum()
        return out.view_as(x), balance


class Layer(nn.Module):
    def __init__(self, d, experts):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, d // 64, batch_first=True)
        self.moe = MoE(d, experts)

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        y, balance = self.moe(self.ln2(x))
        return x + y, balance


class Model(nn.Module):
    def __init__(self, vocab=32000):
        super().__init__()
        self.emb = nn.Embedding(vocab, a.d_model)
        self.layers = nn.ModuleList(Layer(a.d_model, a.experts) for _ in range(a.layers))
        self.head = nn.Linear(a.d_model, vocab, bias=False)

    def forward(self, ids):
        mask = torch.ones(ids.shape[1], ids.shape[1], dtype=torch.bool, device=ids.device).triu(1)
        x, aux = self.emb(ids), 0.0
        for layer in self.layers:
            x, balance = layer(x, mask)
            aux = aux + balance
        return self.head(x), aux


model = Model().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(a.steps):
    ids = torch.randint(0, 32000, (a.batch, a.seq + 1), device=dev)
    with autocast():
        logits, aux = model(ids[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)) + 0.01 * aux
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
