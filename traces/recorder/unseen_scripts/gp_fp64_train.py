# Exact Gaussian-process regression in float64, the exact marginal likelihood written out as GPyTorch computes it
# for small data: an RBF kernel with one lengthscale per input dimension (ARD), an outputscale and a noise variance;
# every step builds the N x N kernel matrix (cdist), factors it by Cholesky (cuSOLVER on a GPU), solves for
# alpha = K^-1 y, and back-propagates the negative log marginal likelihood through the factorisation; Adam on the
# log-hyperparameters. 10,000 synthetic points in 8 dimensions; a held-out RMSE every 10 steps.
import argparse
import math

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=150)
ap.add_argument("--n", type=int, default=10000)
ap.add_argument("--dims", type=int, default=8)
ap.add_argument("--lr", type=float, default=0.05)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
f64 = dict(device=dev, dtype=torch.float64)

g = torch.Generator(device="cpu").manual_seed(0)
w_true = torch.randn(a.dims, generator=g, dtype=torch.float64) * 3
X_all = torch.rand(a.n + 1000, a.dims, generator=g, dtype=torch.float64)
y_all = torch.sin(X_all @ w_true) + 0.5 * torch.cos(3 * X_all[:, 0]) + 0.1 * torch.randn(a.n + 1000, generator=g, dtype=torch.float64)
X, y = X_all[:a.n].to(dev), y_all[:a.n].to(dev)
X_test, y_test = X_all[a.n:].to(dev), y_all[a.n:].to(dev)
y_mean = y.mean()

log_ls = torch.zeros(a.dims, **f64, requires_grad=True)
log_os = torch.zeros((), **f64, requires_grad=True)
log_noise = torch.full((), math.log(0.1), **f64, requires_grad=True)
opt = torch.optim.Adam([log_ls, log_os, log_noise], lr=a.lr)
eye = torch.eye(a.n, **f64)


def rbf(A, B):
    ls = log_ls.exp()
    return log_os.exp() * torch.exp(-0.5 * torch.cdist(A / ls, B / ls).pow(2))


for step in range(a.steps):
    K = rbf(X, X) + (log_noise.exp() + 1e-6) * eye
    L = torch.linalg.cholesky(K)
    r = (y - y_mean).unsqueeze(-1)
    alpha = torch.cholesky_solve(r, L)
    nll = 0.5 * (r * alpha).sum() + L.diagonal().log().sum() + 0.5 * a.n * math.log(2 * math.pi)
    opt.zero_grad(set_to_none=True)
    (nll / a.n).backward()
    opt.step()
    if step % 10 == 0:
        with torch.no_grad():
            pred = rbf(X_test, X) @ alpha.squeeze(-1) + y_mean
            rmse = (pred - y_test).pow(2).mean().sqrt()
        print(f"step {step} nll/n {nll.item() / a.n:.4f} noise {log_noise.exp().item():.4f} test rmse {rmse.item():.4f}")
