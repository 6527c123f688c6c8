# Training a ConvNeXt (Liu et al. 2022; tiny widths, fewer blocks) image classifier: depthwise 7x7 convolutions,
# LayerNorm over channels in channels-last, inverted-bottleneck GELU MLPs as Linear layers, layer scale; bf16 autocast,
# channels_last, AdamW, label smoothing.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--size", type=int, default=224)
ap.add_argument("--depths", default="2,2,4,2")
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def autocast():
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y))))
        return x + (self.gamma * y).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, depths, dims=(96, 192, 384, 768), classes=1000):
        super().__init__()
        self.down = nn.ModuleList([nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0], eps=1e-6))])
        for i in range(3):
            self.down.append(nn.Sequential(LayerNorm2d(dims[i], eps=1e-6), nn.Conv2d(dims[i], dims[i + 1], 2, 2)))
        self.stages = nn.ModuleList(nn.Sequential(*[Block(dims[i]) for _ in range(d)]) for i, d in enumerate(depths))
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], classes)

    def forward(self, x):
        for down, stage in zip(self.down, self.stages):
            x = stage(down(x))
        return self.head(self.norm(x.mean((-2, -1))))


model = ConvNeXt([int(d) for d in a.depths.split(",")]).to(dev).to(memory_format=torch.channels_last)
opt = torch.optim.AdamW(model.parameters(), lr=4e-3, weight_decay=0.05)
for step in range(a.steps):
    images = torch.randn(a.batch, 3, a.size, a.size, device=dev).to(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (a.batch,), device=dev)
    with autocast():
        loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
