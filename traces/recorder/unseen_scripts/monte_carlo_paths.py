# Monte Carlo pricing of arithmetic-average Asian options under geometric Brownian motion (a quant desk's GPU risk
# run in plain PyTorch): Philox normal draws for every path and time step, log-returns accumulated by cumsum along
# time, exp to prices, the path average, call and put payoffs over a strike ladder, discounted means and their
# standard errors, plus a pathwise delta by bumping the spot. fp32; the paths come in chunks so that one chunk's
# [paths, steps] matrix fits. One pricing run (every chunk) is one call of the module (no_grad); the prices go to the
# host after each run.
import argparse
import math

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=200)
ap.add_argument("--paths", type=int, default=1 << 21)
ap.add_argument("--chunk", type=int, default=1 << 19)
ap.add_argument("--time-steps", type=int, default=252)
ap.add_argument("--strikes", type=int, default=16)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class AsianPricer(nn.Module):
    def __init__(self, spot=100.0, rate=0.03, vol=0.25, years=1.0):
        super().__init__()
        self.spot, self.rate, self.vol, self.dt = spot, rate, vol, years / a.time_steps
        self.discount = math.exp(-rate * years)
        self.register_buffer("strikes", torch.linspace(70.0, 130.0, a.strikes))

    def forward(self, generator):
        drift = (self.rate - 0.5 * self.vol ** 2) * self.dt
        sums = torch.zeros(4, a.strikes, device=self.strikes.device)
        delta = torch.zeros((), device=self.strikes.device)
        for _ in range(0, a.paths, a.chunk):
            z = torch.randn(a.chunk, a.time_steps, device=self.strikes.device, generator=generator)
            log_path = torch.cumsum(drift + self.vol * math.sqrt(self.dt) * z, dim=1)
            average = torch.exp(log_path).mean(1)                       # price path / spot, averaged
            call = (self.spot * average[:, None] - self.strikes[None]).clamp(min=0)
            put = (self.strikes[None] - self.spot * average[:, None]).clamp(min=0)
            sums += torch.stack([call.sum(0), (call * call).sum(0), put.sum(0), (put * put).sum(0)])
            bumped = (1.01 * self.spot * average[:, None] - self.strikes[None]).clamp(min=0)
            delta += ((bumped - call).sum(0) / (0.01 * self.spot))[a.strikes // 2]
        n = a.paths
        price = self.discount * sums[0::2] / n
        stderr = self.discount * ((sums[1::2] / n - (sums[0::2] / n) ** 2).clamp(min=0) / n).sqrt()
        return price, stderr, self.discount * delta / n


pricer = AsianPricer().to(dev)
gen = torch.Generator(device=dev).manual_seed(1234)
with torch.no_grad():
    for run in range(a.runs):
        price, stderr, delta = pricer(gen)
        print(f"run {run} ATM call {price[0, a.strikes // 2].item():.4f} +- {stderr[0, a.strikes // 2].item():.4f}"
              f" delta {delta.item():.4f}")
