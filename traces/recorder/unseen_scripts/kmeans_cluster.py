# k-means clustering of embedding vectors on the GPU (the faiss / cuML style of Lloyd's iteration in plain PyTorch):
# squared distances to every centroid through one matmul per chunk of points, argmin, then the centroids' sums by
# index_add_ and their counts by bincount; empty clusters re-seeded from random points. fp32 points and centroids,
# the distance matmul in TF32. One Lloyd iteration is one call of the module (no_grad); the inertia goes to the host.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=100)
ap.add_argument("--points", type=int, default=1 << 22)
ap.add_argument("--dim", type=int, default=64)
ap.add_argument("--k", type=int, default=1024)
ap.add_argument("--chunk", type=int, default=1 << 19)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
torch.backends.cuda.matmul.allow_tf32 = True


class Lloyd(nn.Module):
    def forward(self, x, centroids):
        assign, inertia = [], x.new_zeros(())
        c2 = (centroids * centroids).sum(1)
        for s in range(0, x.shape[0], a.chunk):
            xs = x[s:s + a.chunk]
            d = (xs * xs).sum(1, keepdim=True) - 2 * xs @ centroids.t() + c2
            best, idx = d.min(1)
            assign.append(idx)
            inertia = inertia + best.clamp(min=0).sum()
        idx = torch.cat(assign)
        sums = torch.zeros_like(centroids).index_add_(0, idx, x)
        counts = torch.bincount(idx, minlength=a.k).to(x.dtype)
        empty = counts == 0
        new = sums / counts.clamp(min=1)[:, None]
        new[empty] = x[torch.randint(0, x.shape[0], (int(empty.sum()),), device=x.device)]
        return new, inertia


# points drawn around 4k hidden centres with power-law sizes
centres = torch.randn(4096, a.dim, device=dev) * 4
w = 1.0 / torch.arange(1, 4097, device=dev, dtype=torch.float32) ** 0.7
x = centres[torch.multinomial(w, a.points, replacement=True)] + torch.randn(a.points, a.dim, device=dev)
centroids = x[torch.randperm(a.points, device=dev)[:a.k]].clone()
lloyd = Lloyd()
with torch.no_grad():
    for step in range(a.steps):
        centroids, inertia = lloyd(x, centroids)
        if step % 10 == 0:
            print(f"iteration {step} inertia {inertia.item():.4e}")
