# Tabular feature engineering on the GPU (a cuDF-style group-by written in plain PyTorch): each batch of 16M event rows
# (user id from a power-law, item id, price, timestamp) is sorted by user, the users' run lengths found with
# unique_consecutive, per-user sums, maxima and means by scatter_reduce / index_add_, a per-user spend rank by a second
# sort, price quantile buckets by searchsorted, and a histogram by bincount; a handful of figures go to the host.
# One batch is one call of the module (no_grad).
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=100)
ap.add_argument("--rows", type=int, default=1 << 24)
ap.add_argument("--users", type=int, default=1 << 20)
ap.add_argument("--items", type=int, default=1 << 18)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class GroupBy(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("edges", torch.logspace(-1, 3, 64))

    def forward(self, user, item, price, ts):
        user_sorted, order = user.sort(stable=True)
        price, ts, item = price[order], ts[order], item[order]
        uniq, counts = torch.unique_consecutive(user_sorted, return_counts=True)
        group = torch.repeat_interleave(torch.arange(uniq.numel(), device=user.device), counts)
        spend = torch.zeros(uniq.numel(), device=user.device).index_add_(0, group, price)
        top = torch.full((uniq.numel(),), float("-inf"), device=user.device).scatter_reduce(0, group, price, "amax")
        last = torch.zeros(uniq.numel(), device=user.device).scatter_reduce(0, group, ts, "amax")
        mean = spend / counts
        rank = torch.empty_like(order[: uniq.numel()])
        rank[spend.argsort(descending=True)] = torch.arange(uniq.numel(), device=user.device)
        bucket = torch.searchsorted(self.edges, price)
        hist = torch.bincount(bucket, minlength=65)
        items_seen = torch.bincount(item, minlength=a.items)
        return torch.stack([mean.mean(), top.max(), last.max(), rank.float().mean(), hist.argmax().float(),
                            (items_seen > 0).float().mean()])


model = GroupBy().to(dev)
w = 1.0 / torch.arange(1, a.users + 1, dtype=torch.float32, device=dev) ** 0.9
with torch.no_grad():
    for step in range(a.steps):
        user = torch.multinomial(w, a.rows, replacement=True)
        item = torch.randint(0, a.items, (a.rows,), device=dev)
        price = torch.rand(a.rows, device=dev).pow(3) * 500
        ts = torch.rand(a.rows, device=dev) * 86400
        figures = model(user, item, price, ts).tolist()
        if step % 10 == 0:
            print(f"batch {step} figures {[round(f, 2) for f in figures]}")
