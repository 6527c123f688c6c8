# Two-tower retrieval (YouTube-DNN / TorchRec style): a user tower (EmbeddingBag over the last 50 watched items plus
# a user-feature MLP) and an item tower (item-id embedding + MLP), trained with an in-batch sampled softmax and
# log-Q correction for the items' popularity, bf16 autocast, Adam. After every step the item tower encodes the whole
# catalogue of 1M items (no grad) and 512 users are served against it: scores in chunks of 262,144 items, top-100
# per chunk (topk), the chunks' candidates merged and sorted, then recall@100 of the held-out next item.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=8192)
ap.add_argument("--items", type=int, default=1 << 20)
ap.add_argument("--history", type=int, default=50)
ap.add_argument("--dim", type=int, default=128)
ap.add_argument("--serve", type=int, default=512)
ap.add_argument("--chunk", type=int, default=1 << 18)
ap.add_argument("--k", type=int, default=100)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
amp = torch.bfloat16  # autocast is off on a CPU


def mlp(din, dout):
    return nn.Sequential(nn.Linear(din, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, dout))


class UserTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = nn.EmbeddingBag(a.items, a.dim, mode="mean")
        self.mlp = mlp(a.dim + 32, a.dim)

    def forward(self, history, features):
        return F.normalize(self.mlp(torch.cat([self.history(history), features], 1)), dim=-1)


class ItemTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.id = nn.Embedding(a.items, a.dim)
        self.mlp = mlp(a.dim, a.dim)

    def forward(self, ids):
        return F.normalize(self.mlp(self.id(ids)), dim=-1)


users, items = UserTower().to(dev), ItemTower().to(dev)
opt = torch.optim.Adam(list(users.parameters()) + list(items.parameters()), lr=1e-3)
weights = 1.0 / torch.arange(1, a.items + 1, dtype=torch.float32) ** 1.1
log_q = (weights / weights.sum()).log().to(dev)
sampler = weights.to(dev)


def batch(n):
    hist = torch.multinomial(sampler, n * a.history, replacement=True).view(n, a.history)
    nxt = hist[:, -1].clone()
    return hist[:, :-1].contiguous(), torch.randn(n, 32, device=dev), nxt


for step in range(a.steps):
    hist, feats, pos = batch(a.batch)
    with torch.autocast(device_type=dev, dtype=amp, enabled=dev == "cuda"):
        u = users(hist, feats)
        v = items(pos)
        logits = (u @ v.t()).float() / 0.05 - log_q[pos][None, :]
    loss = F.cross_entropy(logits, torch.arange(a.batch, device=dev))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    with torch.no_grad(), torch.autocast(device_type=dev, dtype=amp, enabled=dev == "cuda"):
        catalogue = torch.cat([items(torch.arange(s, min(s + a.chunk, a.items), device=dev))
                               for s in range(0, a.items, a.chunk)])
        hist, feats, target = batch(a.serve)
        q = users(hist, feats)
        cand_s, cand_i = [], []
        for s in range(0, a.items, a.chunk):
            sc, ix = (q @ catalogue[s:s + a.chunk].t()).float().topk(a.k, dim=1)
            cand_s.append(sc)
            cand_i.append(ix + s)
        sc, order = torch.cat(cand_s, 1).sort(dim=1, descending=True)
        top = torch.cat(cand_i, 1).gather(1, order[:, :a.k])
        recall = (top == target[:, None]).any(1).float().mean()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f} recall@{a.k} {recall.item():.4f}")
