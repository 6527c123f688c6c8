# Explicit 3-D heat-equation solver on a periodic fp32 grid, as a scientist would write it in plain PyTorch: a
# 7-point Laplacian through torch.roll, forward-Euler updates with a spatially varying conductivity, a point heat
# source, and every `--substeps` updates the change's L2 norm and the field's maximum copied to the host to test
# convergence. One solver call (a module forward under no_grad) advances `--substeps` time steps.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--n", type=int, default=320)
ap.add_argument("--substeps", type=int, default=10)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class HeatSolver(nn.Module):
    def __init__(self, n):
        super().__init__()
        z = torch.linspace(-1, 1, n)
        zz, yy, xx = torch.meshgrid(z, z, z, indexing="ij")
        self.register_buffer("kappa", 0.05 + 0.1 * torch.sigmoid(8 * (xx ** 2 + yy ** 2 - 0.3)))
        self.register_buffer("source", torch.exp(-((xx ** 2 + yy ** 2 + zz ** 2) / 0.01)))
        self.dt = 0.1

    def forward(self, u):
        for _ in range(a.substeps):
            lap = -6 * u
            for d in range(3):
                lap = lap + torch.roll(u, 1, d) + torch.roll(u, -1, d)
            du = self.dt * (self.kappa * lap + self.source)
            u = u + du
        return u, du.norm(), u.amax()


solver = HeatSolver(a.n).to(dev)
u = torch.zeros(a.n, a.n, a.n, device=dev)
with torch.no_grad():
    for step in range(a.steps):
        u, change, peak = solver(u)
        c, p = change.item(), peak.item()  # the convergence test on the host
        if step % 20 == 0:
            print(f"step {step} change {c:.3e} max {p:.4f}")
