# A UNet (Ronneberger et al. 2015) for semantic segmentation: four levels of double 3x3 convolutions with BatchNorm
# and ReLU, max-pooling down, 2x2 stride-2 transposed convolutions up with skip concatenations, 21 classes, per-pixel
# cross-entropy, SGD with momentum and weight decay, fp16 autocast with a gradient scaler, NCHW. Random images and
# masks stand in for a dataset.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--size", type=int, default=256)
ap.add_argument("--width", type=int, default=64)
ap.add_argument("--classes", type=int, default=21)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def autocast():
    return torch.autocast(device_type="cuda", dtype=torch.float16) if dev == "cuda" else contextlib.nullcontext()


def double_conv(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, width, classes, levels=4):
        super().__init__()
        chans = [width * 2 ** i for i in range(levels + 1)]
        self.inc = double_conv(3, chans[0])
        self.downs = nn.ModuleList(double_conv(chans[i], chans[i + 1]) for i in range(levels))
        self.ups = nn.ModuleList(nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2) for i in reversed(range(levels)))
        self.up_convs = nn.ModuleList(double_conv(2 * chans[i], chans[i]) for i in reversed(range(levels)))
        self.out = nn.Conv2d(chans[0], classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for up, conv in zip(self.ups, self.up_convs):
            x = conv(torch.cat([skips.pop(), up(x)], dim=1))
        return self.out(x)


model = UNet(a.width, a.classes).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
scaler = torch.cuda.amp.GradScaler(enabled=dev == "cuda")
for step in range(a.steps):
    images = torch.randn(a.batch, 3, a.size, a.size, device=dev)
    masks = torch.randint(0, a.classes, (a.batch, a.size, a.size), device=dev)
    with autocast():
        loss = F.cross_entropy(model(images), masks)
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
