# Selective state-space (Mamba-style) language model trained in plain eager PyTorch: each block projects to two
# branches, runs a causal depthwise conv1d and SiLU on one, computes input-dependent step sizes (softplus), B and C,
# and scans the diagonal state recurrence h_t = exp(dt A) h_{t-1} + dt B x_t chunk by chunk: inside a chunk through
# cumulative sums of the log-decays (parallel), across chunks sequentially (a Python loop). bf16 autocast with the
# scan in fp32, RMSNorm, AdamW, gradient clipping; random tokens.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--seq", type=int, default=1024)
ap.add_argument("--dim", type=int, default=768)
ap.add_argument("--layers", type=int, default=8)
ap.add_argument("--state", type=int, default=16)
ap.add_argument("--chunk", type=int, default=64)
ap.add_argument("--vocab", type=int, default=32000)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * self.w


def chunked_scan(x, dt, A, B, C, chunk):
    """y_t = C_t . h_t with h_t = exp(dt_t A) h_{t-1} + dt_t B_t x_t; x, dt: [b, l, d]; A: [d, n]; B, C: [b, l, n]."""
    b, l, d = x.shape
    n = A.shape[1]
    h = x.new_zeros(b, d, n, dtype=torch.float32)
    ys = []
    for s in range(0, l, chunk):
        xs, dts = x[:, s:s + chunk].float(), dt[:, s:s + chunk].float()
        Bs, Cs = B[:, s:s + chunk].float(), C[:, s:s + chunk].float()
        log_a = dts[..., None] * A  # [b, c, d, n], <= 0
        cum = log_a.cumsum(1)
        u = dts[..., None] * Bs[:, :, None, :] * xs[..., None]  # input to the state
        # h_t = exp(cum_t) (h_0 + sum_{s<=t} exp(-cum_s) u_s): stable for short chunks
        inner = (torch.exp(-cum.clamp(min=-30)) * u).cumsum(1)
        hs = torch.exp(cum) * (h[:, None] + inner)
        ys.append((hs * Cs[:, :, None, :]).sum(-1))
        h = hs[:, -1]
    return torch.cat(ys, 1)


class MambaBlock(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        e = 2 * d
        self.norm = RMSNorm(d)
        self.inp = nn.Linear(d, 2 * e, bias=False)
        self.conv = nn.Conv1d(e, e, 4, groups=e, padding=3)
        self.x_proj = nn.Linear(e, 48 + 2 * n, bias=False)
        self.dt_proj = nn.Linear(48, e)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(e, 1))
        self.D = nn.Parameter(torch.ones(e))
        self.out = nn.Linear(e, d, bias=False)
        self.n = n

    def forward(self, x):
        l = x.shape[1]
        u, z = self.inp(self.norm(x)).chunk(2, -1)
        u = F.silu(self.conv(u.transpose(1, 2))[..., :l].transpose(1, 2))
        dt, B, C = self.x_proj(u).split([48, self.n, self.n], -1)
        dt = F.softplus(self.dt_proj(dt))
        y = chunked_scan(u, dt, -torch.exp(self.A_log), B, C, a.chunk).to(u.dtype)
        return x + self.out((y + u * self.D) * F.silu(z))


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.dim)
        self.blocks = nn.ModuleList(MambaBlock(a.dim, a.state) for _ in range(a.layers))
        self.norm = RMSNorm(a.dim)

    def forward(self, t):
        x = self.emb(t)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x) @ self.emb.weight.t()


model = LM().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
for step in range(a.steps):
    tok = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
    with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
        logits = model(tok[:, :-1])
    loss = F.cross_entropy(logits.float().view(-1, a.vocab), tok[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
