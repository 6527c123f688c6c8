# Image classification with the augmentation done on the GPU (the DALI / Kornia habit, in plain PyTorch): uint8
# 256 x 256 images already on the device, per-sample random affine warps (rotation, scale, shear, translation) by
# affine_grid + grid_sample (bilinear), random horizontal flips, a bicubic resize to 160 x 160, brightness / contrast /
# saturation jitter, normalisation, then a ResNet-18-shaped network trained with SGD + Nesterov momentum, label
# smoothing and bf16 autocast, channels_last. One optimizer step per batch.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--batch", type=int, default=128)
ap.add_argument("--source", type=int, default=256)
ap.add_argument("--size", type=int, default=160)
ap.add_argument("--classes", type=int, default=100)
ap.add_argument("--pool", type=int, default=2048, help="images held on the device")
ap.add_argument("--width", type=int, default=64)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
amp = torch.bfloat16
mean = torch.tensor([0.485, 0.456, 0.406], device=dev).view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225], device=dev).view(1, 3, 1, 1)


def augment(img_u8):
    b = img_u8.shape[0]
    x = img_u8.float() / 255.0
    angle = (torch.rand(b, device=dev) - 0.5) * (math.pi / 6)
    scale = 0.8 + 0.4 * torch.rand(b, device=dev)
    shear = (torch.rand(b, device=dev) - 0.5) * 0.2
    shift = (torch.rand(b, 2, device=dev) - 0.5) * 0.2
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    theta = torch.stack([torch.stack([cos, -sin + shear, shift[:, 0]], 1),
                         torch.stack([sin, cos, shift[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    flip = torch.rand(b, device=dev) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(3), x)
    x = F.interpolate(x, size=(a.size, a.size), mode="bicubic", align_corners=False)
    brightness = 0.8 + 0.4 * torch.rand(b, 1, 1, 1, device=dev)
    contrast = 0.8 + 0.4 * torch.rand(b, 1, 1, 1, device=dev)
    saturation = 0.8 + 0.4 * torch.rand(b, 1, 1, 1, device=dev)
    x = x * brightness
    x = (x - x.mean((1, 2, 3), keepdim=True)) * contrast + x.mean((1, 2, 3), keepdim=True)
    gray = (0.299 * x[:, :1] + 0.587 * x[:, 1:2] + 0.114 * x[:, 2:]).expand_as(x)
    x = (gray + (x - gray) * saturation).clamp(0, 1)
    return ((x - mean) / std).contiguous(memory_format=torch.channels_last)


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.skip = nn.Sequential()
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + self.skip(x))


def resnet18(w, classes):
    layers = [nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = w
    for i, cout in enumerate([w, 2 * w, 4 * w, 8 * w]):
        layers += [Basic(cin, cout, 1 if i == 0 else 2), Basic(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes))


# a pool of synthetic images with class-dependent colour blobs, kept as uint8 on the device
labels_pool = torch.randint(0, a.classes, (a.pool,), device=dev)
yy, xx = torch.meshgrid(torch.linspace(-1, 1, a.source, device=dev), torch.linspace(-1, 1, a.source, device=dev),
                        indexing="ij")
centre = torch.rand(a.classes, 2, device=dev) * 1.2 - 0.6
colour = torch.rand(a.classes, 3, device=dev)
blob = torch.exp(-((xx[None] - centre[labels_pool, 0, None, None]) ** 2 + (yy[None] - centre[labels_pool, 1, None, None]) ** 2) / 0.1)
pool = ((blob[:, None] * colour[labels_pool][:, :, None, None] + 0.2 * torch.rand(a.pool, 3, a.source, a.source, device=dev))
        .clamp(0, 1) * 255).to(torch.uint8)
del blob

model = resnet18(a.width, a.classes).to(dev).to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-5)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
for step in range(a.steps):
    idx = torch.randint(0, a.pool, (a.batch,), device=dev)
    x, y = augment(pool[idx]), labels_pool[idx]
    with torch.autocast(dev, dtype=amp, enabled=dev == "cuda"):
        loss = loss_fn(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.4f}")
