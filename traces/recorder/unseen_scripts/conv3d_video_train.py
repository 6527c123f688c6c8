# Training a small 3-D ResNet (R3D-18-style, fewer blocks) for action recognition on 16-frame 112x112 clips: Conv3d,
# BatchNorm3d, ReLU, strided 3-D downsampling, clips normalised on the GPU; fp16 autocast, SGD with momentum.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--frames", type=int, default=16)
ap.add_argument("--size", type=int, default=112)
ap.add_argument("--classes", type=int, default=400)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cudnn.benchmark = True


def autocast():
    return torch.autocast(device_type="cuda", dtype=torch.float16) if dev == "cuda" else contextlib.nullcontext()


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv3d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm3d(cout)
        self.c2 = nn.Conv3d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm3d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv3d(cin, cout, 1, stride, bias=False), nn.BatchNorm3d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)), inplace=True)
        y = self.b2(self.c2(y))
        return F.relu(y + (x if self.down is None else self.down(x)), inplace=True)


class R3D(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv3d(3, 64, (3, 7, 7), (1, 2, 2), (1, 3, 3), bias=False), nn.BatchNorm3d(64),
                                  nn.ReLU(inplace=True))
        self.layers = nn.Sequential(Block(64, 64, 1), Block(64, 128, 2), Block(128, 256, 2), Block(256, 512, 2))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool3d(x, 1).flatten(1))


model = R3D(a.classes).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4, nesterov=True)
scaler = torch.cuda.amp.GradScaler(enabled=dev == "cuda")
mean = torch.tensor([0.43, 0.40, 0.37], device=dev).view(1, 3, 1, 1, 1)
std = torch.tensor([0.23, 0.22, 0.22], device=dev).view(1, 3, 1, 1, 1)
model.train()
for step in range(a.steps):
    clips = torch.randint(0, 256, (a.batch, 3, a.frames, a.size, a.size), dtype=torch.uint8, device=dev)
    labels = torch.randint(0, a.classes, (a.batch,), device=dev)
    x = (clips.float() / 255 - mean) / std
    with autocast():
        loss = F.cross_entropy(model(x), labels)
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
