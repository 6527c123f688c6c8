# Training a DGCNN-style point-cloud classifier (Wang et al. 2019) on synthetic shapes: every EdgeConv layer builds
# a k-nearest-neighbour graph in feature space (torch.cdist + topk), gathers the neighbours' features, runs a shared
# edge MLP over (x_j - x_i, x_i) and max-pools over the k edges; fp32 (TF32 left at PyTorch's defaults), SGD.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--points", type=int, default=1024)
ap.add_argument("--k", type=int, default=20)
ap.add_argument("--emb", type=int, default=1024)
ap.add_argument("--classes", type=int, default=40)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def knn(x, k):  # x: [B, N, C] -> indices of the k nearest points of each point, [B, N, k]
    return torch.cdist(x, x).topk(k, dim=-1, largest=False).indices


def edge_features(x, k):  # x: [B, C, N] -> [B, 2C, N, k]
    b, c, n = x.shape
    pts = x.transpose(1, 2).contiguous()
    idx = knn(pts, k)
    nbr = torch.gather(pts, 1, idx.reshape(b, n * k, 1).expand(-1, -1, c)).view(b, n, k, c)
    ctr = pts.unsqueeze(2).expand(-1, -1, k, -1)
    return torch.cat([nbr - ctr, ctr], dim=-1).permute(0, 3, 1, 2).contiguous()


class EdgeConv(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.k = k
        self.mlp = nn.Sequential(nn.Conv2d(2 * cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(0.2))

    def forward(self, x):
        return self.mlp(edge_features(x, self.k)).max(dim=-1).values


class DGCNN(nn.Module):
    def __init__(self, k, emb, classes):
        super().__init__()
        self.convs = nn.ModuleList([EdgeConv(3, 64, k), EdgeConv(64, 64, k), EdgeConv(64, 128, k),
                                    EdgeConv(128, 256, k)])
        self.fuse = nn.Sequential(nn.Conv1d(512, emb, 1, bias=False), nn.BatchNorm1d(emb), nn.LeakyReLU(0.2))
        self.head = nn.Sequential(nn.Linear(2 * emb, 512, bias=False), nn.BatchNorm1d(512), nn.LeakyReLU(0.2),
                                  nn.Dropout(0.5), nn.Linear(512, 256), nn.BatchNorm1d(256), nn.LeakyReLU(0.2),
                                  nn.Dropout(0.5), nn.Linear(256, classes))

    def forward(self, x):  # x: [B, 3, N]
        feats = []
        for conv in self.convs:
            x = conv(x)
            feats.append(x)
        x = self.fuse(torch.cat(feats, dim=1))
        x = torch.cat([x.amax(dim=-1), x.mean(dim=-1)], dim=1)
        return self.head(x)


def make_batch(b, n, classes):
    """Synthetic 'shapes': points on a class-specific superquadric-like surface, randomly scaled, rotated, jittered."""
    label = torch.randint(0, classes, (b,), device=dev)
    u = torch.rand(b, n, device=dev) * 2 * math.pi
    v = torch.rand(b, n, device=dev) * math.pi
    e = 0.3 + 1.7 * (label.float() / classes)[:, None]  # the exponent sets the shape: spiky .. boxy
    sx = torch.sign(torch.sin(v) * torch.cos(u)) * (torch.sin(v) * torch.cos(u)).abs() ** e
    sy = torch.sign(torch.sin(v) * torch.sin(u)) * (torch.sin(v) * torch.sin(u)).abs() ** e
    sz = torch.sign(torch.cos(v)) * torch.cos(v).abs() ** e
    aspect = 0.5 + (label % 5).float()[:, None, None] / 4
    pts = torch.stack([sx, sy, sz * aspect[..., 0]], dim=-1) * (0.8 + 0.4 * torch.rand(b, 1, 1, device=dev))
    q, _ = torch.linalg.qr(torch.randn(b, 3, 3, device=dev))  # a random rotation
    pts = pts @ q + 0.01 * torch.randn_like(pts)
    return pts.transpose(1, 2).contiguous(), label


model = DGCNN(a.k, a.emb, a.classes).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, a.steps, eta_min=1e-3)
for step in range(a.steps):
    x, y = make_batch(a.batch, a.points, a.classes)
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=0.2)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    sched.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f} acc {(logits.argmax(-1) == y).float().mean().item():.3f}")
