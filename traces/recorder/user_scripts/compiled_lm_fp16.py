# Train a small causal LM the way many users write it today: torch.compile on the model, autocast with its CUDA
# default (float16) and a GradScaler, fused AdamW. Written for issue 16's fifth round (a user's compiled fp16 job:
# Triton kernels from Inductor beside cuBLAS GEMMs, and fp16 tensor-core work) in the plain-PyTorch style of this
# folder. Picks cuda when there is one; on the CPU it runs eager in float32 (the tests record it tiny there).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=12)
p.add_argument("--hidden", type=int, default=1024)
p.add_argument("--heads", type=int, default=16)
p.add_argument("--seq-len", type=int, default=1024)
p.add_argument("--vocab", type=int, default=32000)
p.add_argument("--batch", type=int, default=8)
p.add_argument("--steps", type=int, default=40)
p.add_argument("--no-compile", action="store_true")
args = p.parse_args()
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
cuda = device.type == "cuda"


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.h = h

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        if hasattr(F, "scaled_dot_product_attention"):  # PyTorch >= 2.0 (flash attention)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / k.shape[-1] ** 0.5
            a = att.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf")).softmax(-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


class LM(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.embed = nn.Embedding(a.vocab, a.hidden)
        self.pos = nn.Parameter(torch.zeros(a.seq_len, a.hidden))
        self.blocks = nn.ModuleList(Block(a.hidden, a.heads) for _ in range(a.layers))
        self.norm = nn.LayerNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.pos[: ids.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]).float(), ids[:, 1:].reshape(-1))


model = LM(args).to(device)
step_fn = model if (args.no_compile or not cuda) else torch.compile(model)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, **({"fused": True} if cuda else {}))
scaler = torch.cuda.amp.GradScaler(enabled=cuda)
print(f"{sum(x.numel() for x in model.parameters()) / 1e6:.1f}M parameters on {device}, compiled {step_fn is not model}")
for step in range(args.steps):
    ids = torch.randint(0, args.vocab, (args.batch, args.seq_len), device=device)
    with torch.autocast(device_type=device.type, enabled=cuda):  # CUDA's default autocast dtype: float16
        loss = step_fn(ids)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.3f}", flush=True)
print("training done")
