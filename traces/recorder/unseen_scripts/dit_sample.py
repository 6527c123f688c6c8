# Class-conditional latent diffusion sampling with a DiT (Peebles & Xie's Diffusion Transformer, the DiT-B/2 shape):
# 32 x 32 x 4 latents patchified 2 x 2 into 256 tokens, 12 blocks of width 768 with adaLN-Zero modulation from the
# timestep + class embedding, classifier-free guidance (conditional and null-class halves in one batch), a DDIM
# update per denoising step. bf16 weights, batch 8 images (16 with guidance). One denoising step is one call of the
# model (inference_mode).
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--images", type=int, default=8)
ap.add_argument("--sampling-steps", type=int, default=50)
ap.add_argument("--runs", type=int, default=20)
ap.add_argument("--dim", type=int, default=768)
ap.add_argument("--depth", type=int, default=12)
ap.add_argument("--heads", type=int, default=12)
ap.add_argument("--latent", type=int, default=32)
ap.add_argument("--classes", type=int, default=1000)
ap.add_argument("--guidance", type=float, default=4.0)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if dev == "cuda" else torch.float32
P, C = 2, 4


def attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v)
    return ((q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])).softmax(-1) @ v  # older PyTorch (a CPU try-out)


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


def modulate(x, shift, scale):
    return x * (1 + scale[:, None]) + shift[:, None]


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(d, 6 * d))

    def forward(self, x, c):
        b, n, d = x.shape
        s1, sc1, g1, s2, sc2, g2 = self.ada(c).chunk(6, dim=1)
        q, k, v = self.qkv(modulate(self.norm1(x), s1, sc1)).view(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        x = x + g1[:, None] * self.proj(attention(q, k, v).transpose(1, 2).reshape(b, n, d))
        return x + g2[:, None] * self.fc2(F.gelu(self.fc1(modulate(self.norm2(x), s2, sc2)), approximate="tanh"))


class DiT(nn.Module):
    def __init__(self):
        super().__init__()
        d = a.dim
        self.patch = nn.Conv2d(C, d, P, stride=P)
        self.pos = nn.Parameter(torch.randn(1, (a.latent // P) ** 2, d) * 0.02)
        self.t_mlp = nn.Sequential(nn.Linear(256, d), nn.SiLU(), nn.Linear(d, d))
        self.y_emb = nn.Embedding(a.classes + 1, d)  # the last row is the null class
        self.blocks = nn.ModuleList(Block(d, a.heads) for _ in range(a.depth))
        self.norm = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(d, 2 * d))
        self.out = nn.Linear(d, P * P * 2 * C)  # noise and variance channels, as DiT predicts both

    def forward(self, z, t, y):
        b = z.shape[0]
        x = self.patch(z).flatten(2).transpose(1, 2) + self.pos
        c = self.t_mlp(timestep_embedding(t, 256).to(z.dtype)) + self.y_emb(y)
        for blk in self.blocks:
            x = blk(x, c)
        shift, scale = self.ada(c).chunk(2, dim=1)
        x = self.out(modulate(self.norm(x), shift, scale))
        g = a.latent // P
        x = x.view(b, g, g, P, P, 2 * C).permute(0, 5, 1, 3, 2, 4).reshape(b, 2 * C, a.latent, a.latent)
        return x[:, :C]


model = DiT().to(dev, dtype).eval()
betas = torch.linspace(1e-4, 0.02, 1000, device=dev, dtype=torch.float64)
alphas = torch.cumprod(1 - betas, 0)
ts = torch.linspace(999, 0, a.sampling_steps, device=dev).long()
with torch.inference_mode():
    for run in range(a.runs):
        y = torch.randint(0, a.classes, (a.images,), device=dev)
        y_all = torch.cat([y, torch.full_like(y, a.classes)])
        z = torch.randn(a.images, C, a.latent, a.latent, device=dev, dtype=dtype)
        for i, t in enumerate(ts):
            eps = model(torch.cat([z, z]), t.repeat(2 * a.images), y_all)
            cond, uncond = eps.chunk(2)
            eps = uncond + a.guidance * (cond - uncond)
            a_t = alphas[t].to(torch.float32)
            a_prev = alphas[ts[i + 1]].to(torch.float32) if i + 1 < len(ts) else torch.ones((), device=dev)
            x0 = (z.float() - (1 - a_t).sqrt() * eps.float()) / a_t.sqrt()
            z = (a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps.float()).to(dtype)
        print(f"run {run} latent std {z.float().std().item():.4f}")
