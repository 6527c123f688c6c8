# Training a MobileNetV2 (inverted residuals, depthwise 3x3 convolutions, ReLU6) on 160x160 crops: bf16 autocast,
# channels_last, SGD with Nesterov momentum and label smoothing, random flips on the GPU.
import argparse
import contextlib

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=80)
ap.add_argument("--batch", type=int, default=128)
ap.add_argument("--size", type=int, default=160)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def autocast():  # bf16 mixed precision on the GPU, plain fp32 on a CPU
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


def conv_bn(cin, cout, k, stride, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, nn.ReLU6(inplace=True)) if act else nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        mid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.body = nn.Sequential(*([conv_bn(cin, mid, 1, 1)] if expand != 1 else []),
                                  conv_bn(mid, mid, 3, stride, groups=mid), conv_bn(mid, cout, 1, 1, act=False))

    def forward(self, x):
        return x + self.body(x) if self.use_res else self.body(x)


def mobilenet_v2(classes=1000):
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    layers, cin = [conv_bn(3, 32, 3, 2)], 32
    for t, c, n, s in cfg:
        for i in range(n):
            layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += [conv_bn(cin, 1280, 1, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(1280, classes)]
    return nn.Sequential(*layers)


model = mobilenet_v2().to(dev).to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=4e-5)
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
data = torch.randint(0, 256, (512, 3, a.size, a.size), dtype=torch.uint8, device=dev)
mean = torch.tensor([0.485, 0.456, 0.406], device=dev)[None, :, None, None] * 255
std = torch.tensor([0.229, 0.224, 0.225], device=dev)[None, :, None, None] * 255
for step in range(a.steps):
    idx = torch.randint(0, 512, (a.batch,), device=dev)
    x = ((data[idx].float() - mean) / std)
    flip = torch.rand(a.batch, device=dev) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(3), x).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (a.batch,), device=dev)
    with autocast():
        loss = loss_fn(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
