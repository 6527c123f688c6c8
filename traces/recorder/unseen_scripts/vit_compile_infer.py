# Serving a ViT-B/16 image classifier compiled with torch.compile (Inductor), bf16, batches of 64 under
# inference_mode; predictions copied back to the host after every batch.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--batches", type=int, default=300)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--size", type=int, default=224)
ap.add_argument("--d-model", type=int, default=768)
ap.add_argument("--layers", type=int, default=12)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if dev == "cuda" else torch.float32


class ViT(nn.Module):
    def __init__(self, d, layers, patch=16, classes=1000):
        super().__init__()
        n = (a.size // patch) ** 2
        self.patch = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, d // 64, 4 * d, 0.0, activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.encoder(x)[:, 0]))


model = ViT(a.d_model, a.layers).to(dev, dtype).eval()
if hasattr(torch, "compile") and dev == "cuda":
    model = torch.compile(model)
out = []
with torch.inference_mode():
    for i in range(a.batches):
        x = torch.randn(a.batch, 3, a.size, a.size, device=dev, dtype=dtype)
        out.append(model(x).argmax(-1).cpu())
print(f"{sum(len(o) for o in out)} images classified")
