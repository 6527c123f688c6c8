# Training a 2-D Fourier neural operator (FNO, Li et al. 2021) on a Darcy-flow-like regression: each layer is a
# spectral convolution (rfft2, a complex einsum over the lowest modes, irfft2) plus a pointwise linear path; fp32.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--grid", type=int, default=256)
ap.add_argument("--width", type=int, default=64)
ap.add_argument("--modes", type=int, default=16)
ap.add_argument("--layers", type=int, default=4)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class SpectralConv2d(nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (cin * cout)
        self.w1 = nn.Parameter(scale * torch.rand(cin, cout, modes, modes, dtype=torch.cfloat))
        self.w2 = nn.Parameter(scale * torch.rand(cin, cout, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        b, _, h, w = x.shape
        m = self.modes
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.zeros(b, self.w1.shape[1], h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        out_ft[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :m, :m], self.w1)
        out_ft[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, -m:, :m], self.w2)
        return torch.fft.irfft2(out_ft, s=(h, w))


class FNO2d(nn.Module):
    def __init__(self, width, modes, layers):
        super().__init__()
        self.lift = nn.Linear(3, width)
        self.spectral = nn.ModuleList(SpectralConv2d(width, width, modes) for _ in range(layers))
        self.pointwise = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(layers))
        self.head = nn.Sequential(nn.Linear(width, 128), nn.GELU(), nn.Linear(128, 1))

    def forward(self, a):
        b, h, w = a.shape
        gy, gx = torch.meshgrid(torch.linspace(0, 1, h, device=a.device), torch.linspace(0, 1, w, device=a.device),
                                indexing="ij")
        x = torch.stack([a, gx.expand(b, h, w), gy.expand(b, h, w)], dim=-1)
        x = self.lift(x).permute(0, 3, 1, 2)
        for i, (sc, pw) in enumerate(zip(self.spectral, self.pointwise)):
            x = sc(x) + pw(x)
            if i < len(self.spectral) - 1:
                x = F.gelu(x)
        return self.head(x.permute(0, 2, 3, 1)).squeeze(-1)


model = FNO2d(a.width, a.modes, a.layers).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=100, gamma=0.5)
for step in range(a.steps):
    coeff = (torch.rand(a.batch, a.grid, a.grid, device=dev) > 0.5).float() * 9 + 3  # piecewise-constant field
    target = torch.sin(coeff.cumsum(-1) / a.grid)  # a smooth stand-in for the PDE's solution
    pred = model(coeff)
    loss = torch.linalg.vector_norm(pred - target, dim=(1, 2)).div(torch.linalg.vector_norm(target, dim=(1, 2))).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    sched.step()
    if step % 20 == 0:
        print(f"step {step} rel-l2 {loss.item():.4f}")
