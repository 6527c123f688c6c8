# Training a NeRF (Mildenhall et al. 2020) MLP on random rays: positional encoding of sample points and view
# directions, an 8-layer 256-wide MLP with a skip connection, stratified sampling and volume rendering (cumprod);
# fp32 with TF32 matmuls, as the common PyTorch ports set it.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--rays", type=int, default=4096)
ap.add_argument("--samples", type=int, default=128)
ap.add_argument("--width", type=int, default=256)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
torch.set_float32_matmul_precision("high")


def encode(x, freqs):
    bands = 2.0 ** torch.arange(freqs, device=x.device) * torch.pi
    xb = x[..., None] * bands
    return torch.cat([x, torch.sin(xb).flatten(-2), torch.cos(xb).flatten(-2)], dim=-1)


class NeRF(nn.Module):
    def __init__(self, w):
        super().__init__()
        cin, cdir = 3 + 3 * 2 * 10, 3 + 3 * 2 * 4
        self.pts = nn.ModuleList([nn.Linear(cin, w)] + [nn.Linear(w + (cin if i == 4 else 0), w) for i in range(7)])
        self.sigma = nn.Linear(w, 1)
        self.feature = nn.Linear(w, w)
        self.rgb = nn.Sequential(nn.Linear(w + cdir, w // 2), nn.ReLU(), nn.Linear(w // 2, 3))

    def forward(self, p, d):
        ep, ed = encode(p, 10), encode(d, 4)
        h = ep
        for i, layer in enumerate(self.pts):
            if i == 5:
                h = torch.cat([ep, h], -1)
            h = F.relu(layer(h))
        return F.relu(self.sigma(h)).squeeze(-1), torch.sigmoid(self.rgb(torch.cat([self.feature(h), ed], -1)))


def render(model, origins, dirs, near=2.0, far=6.0):
    t = torch.linspace(near, far, a.samples, device=dev).expand(origins.shape[0], a.samples)
    mids = 0.5 * (t[:, 1:] + t[:, :-1])
    t = torch.cat([t[:, :1], mids], -1) + torch.rand_like(t) * (far - near) / a.samples  # stratified
    pts = origins[:, None] + dirs[:, None] * t[..., None]
    sigma, rgb = model(pts, dirs[:, None].expand_as(pts))
    delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full_like(t[:, :1], 1e10)], -1)
    alpha = 1 - torch.exp(-sigma * delta)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha + 1e-10], -1), -1)[:, :-1]
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(1)


model = NeRF(a.width).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=5e-4)
for step in range(a.steps):
    origins = torch.randn(a.rays, 3, device=dev) * 0.1 + torch.tensor([0.0, 0.0, 4.0], device=dev)
    dirs = F.normalize(torch.randn(a.rays, 3, device=dev) * 0.2 + torch.tensor([0.0, 0.0, -1.0], device=dev), dim=-1)
    target = torch.rand(a.rays, 3, device=dev)
    loss = F.mse_loss(render(model, origins, dirs), target)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} psnr {-10 * torch.log10(loss).item():.2f}")
