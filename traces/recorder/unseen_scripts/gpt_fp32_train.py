# Training a GPT-2-small-sized language model in plain fp32 (no autocast, PyTorch's default full-precision matmuls),
# minGPT-style: attention written out as matmul + masked_fill + softmax, GELU MLPs, weight tying, AdamW with
# decoupled weight decay groups, gradient clipping; small batch.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--block", type=int, default=512)
ap.add_argument("--layers", type=int, default=12)
ap.add_argument("--d-model", type=int, default=768)
ap.add_argument("--vocab", type=int, default=50257)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.heads = heads
        self.drop = nn.Dropout(0.1)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, block)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        d = a.d_model
        self.wte = nn.Embedding(a.vocab, d)
        self.wpe = nn.Embedding(a.block, d)
        self.blocks = nn.Sequential(*[Block(d, d // 64, a.block) for _ in range(a.layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, a.vocab, bias=False)
        self.head.weight = self.wte.weight
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        return self.head(self.ln_f(self.blocks(self.wte(idx) + self.wpe(pos))))


model = GPT().to(dev)
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=6e-4, betas=(0.9, 0.95))
for step in range(a.steps):
    data = torch.randint(0, a.vocab, (a.batch, a.block + 1), device=dev)
    x, y = data[:, :-1], data[:, 1:]
    loss = F.cross_entropy(model(x).view(-1, a.vocab), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
