# Matrix-free conjugate gradients for the 2-D Poisson equation in fp64, as numerical-methods code is written in plain
# PyTorch: the 5-point Laplacian applied by slicing a zero-padded grid, dot products as sums, the residual norm copied
# to the host every iteration for the stopping test. Each call of the solver module (no_grad) solves one new problem
# (a fresh right-hand side from a few random point sources) for at most `--iters` iterations.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--n", type=int, default=4096)
ap.add_argument("--iters", type=int, default=40)
ap.add_argument("--tol", type=float, default=1e-10)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class PoissonCG(nn.Module):
    def laplacian(self, u):
        p = F.pad(u[None, None], (1, 1, 1, 1))[0, 0]
        return 4 * u - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]

    def forward(self, b):
        x = torch.zeros_like(b)
        r = b.clone()
        p = r.clone()
        rs = (r * r).sum()
        for it in range(a.iters):
            ap_ = self.laplacian(p)
            alpha = rs / (p * ap_).sum()
            x = x + alpha * p
            r = r - alpha * ap_
            rs_new = (r * r).sum()
            if rs_new.sqrt().item() < a.tol:  # the stopping test on the host, every iteration
                break
            p = r + (rs_new / rs) * p
            rs = rs_new
        return x, rs_new.sqrt(), it + 1


solver = PoissonCG().to(dev)
g = torch.Generator(device=dev).manual_seed(0)
with torch.no_grad():
    for step in range(a.steps):
        b = torch.zeros(a.n, a.n, dtype=torch.float64, device=dev)
        idx = torch.randint(0, a.n * a.n, (16,), generator=g, device=dev)
        b.view(-1)[idx] = torch.randn(16, dtype=torch.float64, generator=g, device=dev)
        x, res, iters = solver(b)
        if step % 10 == 0:
            print(f"solve {step} residual {res.item():.3e} after {iters} iterations")
