# Lattice Boltzmann (D2Q9, BGK collision) flow past a cylinder in a 2-D channel, as a CFD course writes it in plain
# PyTorch: nine fp32 populations on the grid, density and velocity as sums over them, the equilibrium from a
# polynomial in the velocity, relaxation, streaming by torch.roll per direction, bounce-back on the cylinder through a
# mask, a fixed inflow on the left. One solver call (a module forward under no_grad) advances `--substeps` lattice
# steps; after each call the peak speed is copied to the host to watch for blow-up.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=100)
ap.add_argument("--nx", type=int, default=4096)
ap.add_argument("--ny", type=int, default=1024)
ap.add_argument("--substeps", type=int, default=10)
ap.add_argument("--tau", type=float, default=0.56)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"

C = [(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)]
W = [4 / 9] + [1 / 9] * 4 + [1 / 36] * 4
OPPOSITE = [0, 3, 4, 1, 2, 7, 8, 5, 6]


class LatticeBoltzmann(nn.Module):
    def __init__(self, nx, ny):
        super().__init__()
        self.register_buffer("cx", torch.tensor([c[0] for c in C], dtype=torch.float32).view(9, 1, 1))
        self.register_buffer("cy", torch.tensor([c[1] for c in C], dtype=torch.float32).view(9, 1, 1))
        self.register_buffer("w", torch.tensor(W).view(9, 1, 1))
        y, x = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        self.register_buffer("solid", (x - nx // 5) ** 2 + (y - ny // 2) ** 2 < (ny // 9) ** 2)
        self.u_in = 0.08

    def equilibrium(self, rho, ux, uy):
        cu = 3 * (self.cx * ux + self.cy * uy)
        return self.w * rho * (1 + cu + 0.5 * cu * cu - 1.5 * (ux * ux + uy * uy))

    def forward(self, f):
        for _ in range(a.substeps):
            rho = f.sum(0)
            ux = (f * self.cx).sum(0) / rho
            uy = (f * self.cy).sum(0) / rho
            ux[:, 0] = self.u_in
            uy[:, 0] = 0
            f = f - (f - self.equilibrium(rho, ux, uy)) / a.tau
            f = torch.stack([torch.roll(f[i], shifts=(C[i][1], C[i][0]), dims=(0, 1)) for i in range(9)])
            f[:, self.solid] = f[OPPOSITE][:, self.solid]
        return f, torch.sqrt(ux * ux + uy * uy).amax()


lbm = LatticeBoltzmann(a.nx, a.ny).to(dev)
ones = torch.ones(a.ny, a.nx, device=dev)
f = lbm.equilibrium(ones, ones * lbm.u_in, ones * 0)
with torch.no_grad():
    for step in range(a.steps):
        f, peak = lbm(f)
        p = peak.item()  # the blow-up watch on the host
        if step % 20 == 0:
            print(f"step {step} peak speed {p:.4f}")
