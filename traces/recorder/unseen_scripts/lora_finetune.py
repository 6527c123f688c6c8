# LoRA fine-tuning of a GPT-style decoder (the PEFT recipe in plain PyTorch): the base model's weights frozen in bf16,
# rank-16 adapters (fp32 parameters, alpha 32, dropout 0.05) on the attention's query and value projections and on
# both MLP projections, SDPA causal attention, bf16 autocast, AdamW on the adapters only; the loss only on the answer
# half of each sequence. The backward computes no gradient for the frozen weights: input gradients only.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--seq", type=int, default=1024)
ap.add_argument("--dim", type=int, default=1536)
ap.add_argument("--layers", type=int, default=16)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--rank", type=int, default=16)
ap.add_argument("--vocab", type=int, default=32000)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def causal_attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])  # older PyTorch (a CPU try-out)
    mask = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1)
    return s.masked_fill(mask, float("-inf")).softmax(-1) @ v


class LoRALinear(nn.Module):
    def __init__(self, din, dout):
        super().__init__()
        self.base = nn.Linear(din, dout, bias=False)
        self.base.weight.requires_grad_(False)
        self.A = nn.Parameter(torch.randn(a.rank, din) / math.sqrt(din))
        self.B = nn.Parameter(torch.zeros(dout, a.rank))
        self.drop = nn.Dropout(0.05)

    def forward(self, x):
        return self.base(x) + (self.drop(x) @ self.A.t() @ self.B.t()) * (32 / a.rank)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        d = a.dim
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v = LoRALinear(d, d), nn.Linear(d, d, bias=False), LoRALinear(d, d)
        self.o = nn.Linear(d, d, bias=False)
        self.up, self.down = LoRALinear(d, 4 * d), LoRALinear(4 * d, d)

    def forward(self, x):
        b, l, d = x.shape
        h = self.ln1(x)
        q, k, v = (p(h).view(b, l, a.heads, d // a.heads).transpose(1, 2) for p in (self.q, self.k, self.v))
        x = x + self.o(causal_attention(q, k, v).transpose(1, 2).reshape(b, l, d))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.dim)
        self.pos = nn.Embedding(a.seq, a.dim)
        self.blocks = nn.ModuleList(Block() for _ in range(a.layers))
        self.ln = nn.LayerNorm(a.dim)

    def forward(self, t):
        x = self.emb(t) + self.pos(torch.arange(t.shape[1], device=t.device))
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.emb.weight.t()


model = GPT().to(dev)
for n, p in model.named_parameters():  # the base model is frozen and held in bf16; adapters train in fp32
    if not (n.endswith(".A") or n.endswith(".B")):
        p.requires_grad_(False)
        p.data = p.data.to(torch.bfloat16) if dev == "cuda" else p.data
adapters = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.AdamW(adapters, lr=2e-4)
print(f"trainable {sum(p.numel() for p in adapters) / 1e6:.2f} M of {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M")
for step in range(a.steps):
    tok = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
    labels = tok[:, 1:].clone()
    labels[:, : a.seq // 2] = -100  # the prompt half carries no loss
    with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
        logits = model(tok[:, :-1])
    loss = F.cross_entropy(logits.float().view(-1, a.vocab), labels.reshape(-1), ignore_index=-100)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
