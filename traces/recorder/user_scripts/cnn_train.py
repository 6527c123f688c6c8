# Train a small CNN on CIFAR-sized images (random data here). Plain PyTorch, no torchvision.
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch-size", type=int, default=512)
parser.add_argument("--width", type=int, default=128)
parser.add_argument("--samples", type=int, default=20480)
parser.add_argument("--lr", type=float, default=0.05)
args = parser.parse_args()

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cudnn.benchmark = True


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Net(nn.Module):
    def __init__(self, w, classes=10):
        super().__init__()
        self.features = nn.Sequential(block(3, w), block(w, w), nn.MaxPool2d(2),
                                      block(w, 2 * w), block(2 * w, 2 * w), nn.MaxPool2d(2),
                                      block(2 * w, 4 * w), block(4 * w, 4 * w), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4 * w, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


images = torch.randn(args.samples, 3, 32, 32)
labels = torch.randint(0, 10, (args.samples,))
loader = DataLoader(TensorDataset(images, labels), batch_size=args.batch_size, shuffle=True, drop_last=True)

model = Net(args.width).to(device).to(memory_format=torch.channels_last)
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, total_steps=args.epochs * len(loader))
use_amp = device == "cuda"
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

for epoch in range(args.epochs):
    model.train()
    t0, seen, correct = time.time(), 0, 0
    for x, y in loader:
        x = x.to(device, non_blocking=True).to(memory_format=torch.channels_last)
        y = y.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
            out = model(x)
            loss = F.cross_entropy(out, y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        seen += y.numel()
        correct += (out.argmax(1) == y).sum().item()
    print(f"epoch {epoch}: loss {loss.item():.3f} acc {correct / seen:.3f} {seen / (time.time() - t0):.0f} img/s")
