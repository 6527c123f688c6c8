# Training a GPT-2-small-sized language model (12 layers, d=768, 1,024-token context) through torch.compile, as
# nanoGPT does: the whole model, loss included, compiled by Inductor (its Triton kernels in the forward and the
# backward), bf16 autocast, fused AdamW with weight decay on the matrices only, cosine learning rate with warm-up.
import argparse
import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--seq", type=int, default=1024)
ap.add_argument("--d-model", type=int, default=768)
ap.add_argument("--layers", type=int, default=12)
ap.add_argument("--vocab", type=int, default=50304)  # GPT-2's 50,257 padded to a multiple of 64
ap.add_argument("--no-compile", action="store_true", help="run eagerly (e.g. a quick try on a CPU)")
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def autocast():  # bf16 mixed precision on the GPU, plain fp32 on a CPU
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch < 2.0
            s = q @ k.transpose(-1, -2) / math.sqrt(k.shape[-1])
            y = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf")).softmax(-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate="tanh"), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, ctx, d, layers):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.h = nn.ModuleList(Block(d, d // 64) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init)

    def _init(self, m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, idx, targets):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.h:
            x = blk(x)
        logits = self.lm_head(self.ln_f(x))
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), targets.reshape(-1))


model = GPT(a.vocab, a.seq, a.d_model, a.layers).to(dev)
decay = [p for p in model.parameters() if p.dim() >= 2]
no_decay = [p for p in model.parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=6e-4, betas=(0.9, 0.95), **({"fused": True} if dev == "cuda" else {}))
if not a.no_compile and hasattr(torch, "compile"):
    model = torch.compile(model)
warmup = min(100, a.steps // 10 + 1)


def lr_at(it):
    if it < warmup:
        return 6e-4 * (it + 1) / warmup
    return 6e-5 + 0.5 * (6e-4 - 6e-5) * (1 + math.cos(math.pi * (it - warmup) / max(1, a.steps - warmup)))


# A synthetic token stream with some structure (repeated n-grams), standing in for a tokenised corpus.
corpus = torch.randint(0, a.vocab, (1 << 16,), device=dev)
corpus = torch.cat([corpus, corpus.roll(7), corpus[::2]])
for step in range(a.steps):
    for g in opt.param_groups:
        g["lr"] = lr_at(step)
    start = torch.randint(0, corpus.numel() - a.seq - 1, (a.batch,), device=dev)
    offs = start[:, None] + torch.arange(a.seq + 1, device=dev)
    chunk = corpus[offs]
    x, y = chunk[:, :-1], chunk[:, 1:]
    with autocast():
        logits, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
