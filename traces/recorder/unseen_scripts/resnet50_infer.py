# ResNet-50 image classification serving: fp16 weights, channels_last, batches of 32 under inference_mode,
# top-5 indices copied back to the host after every batch (no torchvision: the bottleneck network written out).
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--batches", type=int, default=400)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--size", type=int, default=224)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, stride):
        super().__init__()
        cout = 4 * mid
        self.body = nn.Sequential(
            nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, mid, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(mid), nn.ReLU(inplace=True),
            nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
                      if stride != 1 or cin != cout else nn.Identity())
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.body(x) + self.short(x))


def resnet50(classes=1000):
    layers, cin = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                   nn.MaxPool2d(3, 2, 1)], 64
    for mid, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            layers.append(Bottleneck(cin, mid, stride if i == 0 else 1))
            cin = 4 * mid
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes))


model = resnet50().to(dev).eval()
dtype = torch.float16 if dev == "cuda" else torch.float32
model = model.to(dtype=dtype, memory_format=torch.channels_last)
top = []
with torch.inference_mode():
    for i in range(a.batches):
        x = torch.randn(a.batch, 3, a.size, a.size, device=dev, dtype=dtype).contiguous(memory_format=torch.channels_last)
        top.append(model(x).topk(5).indices.cpu())
print(f"{sum(len(t) for t in top)} images classified")
