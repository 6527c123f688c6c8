# Batched inference of a transformer text classifier: no optimizer, no profiler, eval mode, inference_mode.
import argparse
import time

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--batches", type=int, default=200)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--seq", type=int, default=256)
ap.add_argument("--d-model", type=int, default=768)
ap.add_argument("--layers", type=int, default=12)
ap.add_argument("--fp16", action="store_true")
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class Classifier(nn.Module):
    def __init__(self, vocab=30522, d=768, layers=12, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, d // 64, 4 * d, batch_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, classes)

    def forward(self, ids):
        return self.head(self.encoder(self.emb(ids))[:, 0])


model = Classifier(d=a.d_model, layers=a.layers).to(dev).eval()
if a.fp16 and dev == "cuda":
    model = model.half()
preds, t0 = [], time.perf_counter()
with torch.inference_mode():
    for i in range(a.batches):
        ids = torch.randint(0, 30522, (a.batch, a.seq), device=dev)
        preds.append(model(ids).argmax(-1).cpu())
if dev == "cuda":
    torch.cuda.synchronize()
dt = time.perf_counter() - t0
n = sum(len(p) for p in preds)
print(f"{n} samples in {dt:.2f} s: {n / dt:.0f} samples/s; class counts {torch.bincount(torch.cat(preds), minlength=3).tolist()}")
