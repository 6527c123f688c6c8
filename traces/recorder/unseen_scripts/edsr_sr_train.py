# EDSR-baseline super-resolution training (x2), as the image-restoration repositories write it: 16 residual blocks of
# two 3x3 convolutions at 64 channels with a 0.1 residual scale and no normalisation, a sub-pixel (PixelShuffle)
# upsampler, L1 loss, Adam. High-resolution 96x96 patches are cut on the GPU from a pool of smooth synthetic images and
# bicubic-downsampled to make the inputs. fp32 (PyTorch's defaults: cuDNN may use TF32).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--patch", type=int, default=96)
ap.add_argument("--channels", type=int, default=64)
ap.add_argument("--blocks", type=int, default=16)
ap.add_argument("--pool", type=int, default=64)
ap.add_argument("--source", type=int, default=512)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(c, c, 3, padding=1))

    def forward(self, x):
        return x + 0.1 * self.body(x)


class EDSR(nn.Module):
    def __init__(self, c, blocks):
        super().__init__()
        self.head = nn.Conv2d(3, c, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(c) for _ in range(blocks)], nn.Conv2d(c, c, 3, padding=1))
        self.tail = nn.Sequential(nn.Conv2d(c, 4 * c, 3, padding=1), nn.PixelShuffle(2), nn.Conv2d(c, 3, 3, padding=1))
        self.register_buffer("mean", torch.tensor([0.45, 0.44, 0.40]).view(1, 3, 1, 1))

    def forward(self, lr):
        h = self.head(lr - self.mean)
        return self.tail(h + self.body(h)) + self.mean


model = EDSR(a.channels, a.blocks).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.999))
images = F.interpolate(torch.rand(a.pool, 3, a.source // 8, a.source // 8, device=dev), size=a.source, mode="bicubic",
                       align_corners=False).clamp(0, 1)  # smooth synthetic photographs
for step in range(a.steps):
    which = torch.randint(0, a.pool, (a.batch,), device=dev)
    y0, x0 = torch.randint(0, a.source - a.patch, (2,)).tolist()
    hr = images[which, :, y0:y0 + a.patch, x0:x0 + a.patch]
    if torch.rand(()) < 0.5:
        hr = hr.flip(3)
    lr = F.interpolate(hr, scale_factor=0.5, mode="bicubic", align_corners=False, antialias=True)
    loss = F.l1_loss(model(lr), hr)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} L1 {loss.item():.4f}")
