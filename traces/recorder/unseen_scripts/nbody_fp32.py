# Direct-summation N-body gravity (the astrophysics teaching code, in plain PyTorch): every body feels every other
# through a softened 1/r^3 kernel, evaluated tile by tile (a block of targets against all sources, broadcasting
# [tile, N, 3] differences), then a leapfrog (kick-drift-kick) step. fp32 throughout: CUDA-core arithmetic (rsqrt,
# multiplies, sums) with no matrix product. One integrator step is one call of the module (no_grad); the total
# kinetic energy goes to the host every 10 steps.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--bodies", type=int, default=24576)
ap.add_argument("--tile", type=int, default=2048)
ap.add_argument("--dt", type=float, default=1e-3)
ap.add_argument("--soft", type=float, default=1e-2)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class Leapfrog(nn.Module):
    def accel(self, pos, mass):
        acc = torch.empty_like(pos)
        for s in range(0, pos.shape[0], a.tile):
            d = pos[None, :, :] - pos[s:s + a.tile, None, :]          # [tile, N, 3]
            r2 = (d * d).sum(-1) + a.soft * a.soft
            inv3 = torch.rsqrt(r2) ** 3 * mass[None, :]
            acc[s:s + a.tile] = (d * inv3[..., None]).sum(1)
        return acc

    def forward(self, pos, vel, mass):
        vel = vel + 0.5 * a.dt * self.accel(pos, mass)
        pos = pos + a.dt * vel
        vel = vel + 0.5 * a.dt * self.accel(pos, mass)
        return pos, vel


# a Plummer-like sphere: radii from the cumulative mass profile, isotropic directions, small random velocities
g = torch.Generator(device=dev).manual_seed(0)
u = torch.rand(a.bodies, device=dev, generator=g).clamp(1e-3, 0.999)
r = 1.0 / torch.sqrt(u ** (-2.0 / 3.0) - 1.0)
direction = torch.randn(a.bodies, 3, device=dev, generator=g)
pos = direction / direction.norm(dim=1, keepdim=True) * r[:, None]
vel = 0.1 * torch.randn(a.bodies, 3, device=dev, generator=g)
mass = torch.full((a.bodies,), 1.0 / a.bodies, device=dev)
step_fn = Leapfrog()
with torch.no_grad():
    for step in range(a.steps):
        pos, vel = step_fn(pos, vel, mass)
        if step % 10 == 0:
            print(f"step {step} kinetic {0.5 * (mass[:, None] * vel * vel).sum().item():.6e}")
