# Training a small diffusion denoiser (a UNet with GroupNorm, SiLU and a time embedding) on 64x64 images:
# bf16 autocast, channels_last, AdamW, the epsilon-prediction MSE loss.
import argparse
import contextlib
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=100)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--size", type=int, default=64)
ap.add_argument("--width", type=int, default=128)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def autocast():  # bf16 mixed precision on the GPU, plain fp32 on a CPU
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


def timestep_embedding(t, dim):
    freqs = torch.exp(-math.log(10000) * torch.arange(dim // 2, device=t.device) / (dim // 2))
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x))) + self.t(temb)[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.tdim = 4 * w
        self.temb = nn.Sequential(nn.Linear(w, self.tdim), nn.SiLU(), nn.Linear(self.tdim, self.tdim))
        self.inp = nn.Conv2d(3, w, 3, padding=1)
        chans = [w, 2 * w, 2 * w, 4 * w]
        self.down, self.pool = nn.ModuleList(), nn.ModuleList()
        c = w
        for co in chans:
            self.down.append(ResBlock(c, co, self.tdim))
            self.pool.append(nn.Conv2d(co, co, 3, stride=2, padding=1))
            c = co
        self.mid = ResBlock(c, c, self.tdim)
        self.up = nn.ModuleList()
        for co in reversed(chans):
            self.up.append(ResBlock(c + co, co, self.tdim))
            c = co
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

    def forward(self, x, t):
        temb = self.temb(timestep_embedding(t, self.tdim // 4))
        h, skips = self.inp(x), []
        for block, pool in zip(self.down, self.pool):
            h = block(h, temb)
            skips.append(h)
            h = pool(h)
        h = self.mid(h, temb)
        for block in self.up:
            h = F.interpolate(h, scale_factor=2, mode="nearest")
            h = block(torch.cat([h, skips.pop()], dim=1), temb)
        return self.out(h)


model = UNet(a.width).to(dev).to(memory_format=torch.channels_last)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
betas = torch.linspace(1e-4, 0.02, 1000, device=dev)
alphas_bar = torch.cumprod(1 - betas, dim=0)
images = torch.rand(256, 3, a.size, a.size, device=dev) * 2 - 1
for step in range(a.steps):
    x0 = images[torch.randint(0, 256, (a.batch,), device=dev)].contiguous(memory_format=torch.channels_last)
    t = torch.randint(0, 1000, (a.batch,), device=dev)
    noise = torch.randn_like(x0)
    ab = alphas_bar[t][:, None, None, None]
    xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
    with autocast():
        loss = F.mse_loss(model(xt, t).float(), noise)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.4f}")
