# DCGAN (Radford et al. 2016) on 64x64 RGB images: a generator of 4x4 stride-2 transposed convolutions with BatchNorm
# and ReLU, a discriminator of strided convolutions with LeakyReLU, BCE-with-logits losses, two Adam optimisers
# (lr 2e-4, betas 0.5 / 0.999); bf16 autocast and channels_last on a GPU. One step: a discriminator update, then a
# generator update. Random images stand in for a dataset.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=256)
ap.add_argument("--nz", type=int, default=128)
ap.add_argument("--width", type=int, default=128, help="generator / discriminator base width (channels)")
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
fmt = torch.channels_last if dev == "cuda" else torch.contiguous_format


def autocast():
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


w = a.width
G = nn.Sequential(
    nn.ConvTranspose2d(a.nz, 8 * w, 4, 1, 0, bias=False), nn.BatchNorm2d(8 * w), nn.ReLU(True),   # 4x4
    nn.ConvTranspose2d(8 * w, 4 * w, 4, 2, 1, bias=False), nn.BatchNorm2d(4 * w), nn.ReLU(True),  # 8x8
    nn.ConvTranspose2d(4 * w, 2 * w, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * w), nn.ReLU(True),  # 16x16
    nn.ConvTranspose2d(2 * w, w, 4, 2, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(True),  # 32x32
    nn.ConvTranspose2d(w, 3, 4, 2, 1, bias=False), nn.Tanh(),  # 64x64
).to(dev).to(memory_format=fmt)
D = nn.Sequential(
    nn.Conv2d(3, w, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True),
    nn.Conv2d(w, 2 * w, 4, 2, 1, bias=False), nn.BatchNorm2d(2 * w), nn.LeakyReLU(0.2, True),
    nn.Conv2d(2 * w, 4 * w, 4, 2, 1, bias=False), nn.BatchNorm2d(4 * w), nn.LeakyReLU(0.2, True),
    nn.Conv2d(4 * w, 8 * w, 4, 2, 1, bias=False), nn.BatchNorm2d(8 * w), nn.LeakyReLU(0.2, True),
    nn.Conv2d(8 * w, 1, 4, 1, 0, bias=False), nn.Flatten(),
).to(dev).to(memory_format=fmt)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
real = (torch.rand(a.batch, 3, 64, 64, device=dev) * 2 - 1).to(memory_format=fmt)
ones = torch.ones(a.batch, 1, device=dev)
zeros = torch.zeros(a.batch, 1, device=dev)
for step in range(a.steps):
    z = torch.randn(a.batch, a.nz, 1, 1, device=dev)
    with autocast():
        fake = G(z)
        loss_d = F.binary_cross_entropy_with_logits(D(real).float(), ones) + \
            F.binary_cross_entropy_with_logits(D(fake.detach()).float(), zeros)
    opt_d.zero_grad(set_to_none=True)
    loss_d.backward()
    opt_d.step()
    with autocast():
        loss_g = F.binary_cross_entropy_with_logits(D(fake).float(), ones)
    opt_g.zero_grad(set_to_none=True)
    loss_g.backward()
    opt_g.step()
    if step % 20 == 0:
        print(f"step {step} loss_d {loss_d.item():.3f} loss_g {loss_g.item():.3f}")
