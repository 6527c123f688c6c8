# WaveNet (van den Oord et al. 2016) trained on 8-bit mu-law audio: a causal 2-tap input convolution, then 3 stacks
# of 10 dilated causal convolutions (dilation 1..512, left padding) with gated tanh x sigmoid units, 1x1 residual and
# skip convolutions, a ReLU-1x1-ReLU-1x1 output head over 256 classes and cross-entropy on the samples past the
# receptive field; Adam, fp32 (cuDNN may use TF32, PyTorch's default for convolutions). Random audio stands in for a
# dataset: batch 8 x 16,384 samples.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--samples", type=int, default=16384)
ap.add_argument("--stacks", type=int, default=3)
ap.add_argument("--layers", type=int, default=10)
ap.add_argument("--residual", type=int, default=128)
ap.add_argument("--skip", type=int, default=256)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class CausalConv1d(nn.Conv1d):
    def __init__(self, cin, cout, kernel, dilation=1):
        super().__init__(cin, cout, kernel, dilation=dilation)
        self.left = (kernel - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left, 0)))


class ResidualLayer(nn.Module):
    def __init__(self, dilation):
        super().__init__()
        self.dilated = CausalConv1d(a.residual, 2 * a.residual, 2, dilation)
        self.res = nn.Conv1d(a.residual, a.residual, 1)
        self.skip = nn.Conv1d(a.residual, a.skip, 1)

    def forward(self, x):
        f, g = self.dilated(x).chunk(2, dim=1)
        h = torch.tanh(f) * torch.sigmoid(g)
        return x + self.res(h), self.skip(h)


class WaveNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = CausalConv1d(256, a.residual, 2)
        self.layers = nn.ModuleList(ResidualLayer(2 ** i) for _ in range(a.stacks) for i in range(a.layers))
        self.out1 = nn.Conv1d(a.skip, a.skip, 1)
        self.out2 = nn.Conv1d(a.skip, 256, 1)
        self.receptive_field = a.stacks * (2 ** a.layers - 1) + 2

    def forward(self, onehot):
        x, skips = self.embed(onehot), 0
        for layer in self.layers:
            x, s = layer(x)
            skips = skips + s
        return self.out2(F.relu(self.out1(F.relu(skips))))


def mu_law(audio, mu=255):
    y = torch.sign(audio) * torch.log1p(mu * audio.abs()) / torch.log1p(torch.tensor(float(mu)))
    return ((y + 1) / 2 * mu + 0.5).long().clamp(0, mu)


model = WaveNet().to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
rf = model.receptive_field
for step in range(a.steps):
    t = torch.linspace(0, 1, a.samples + 1, device=dev)
    freq = torch.rand(a.batch, 1, device=dev) * 2000 + 100
    audio = 0.6 * torch.sin(2 * torch.pi * freq * t) + 0.05 * torch.randn(a.batch, a.samples + 1, device=dev)
    q = mu_law(audio)
    x = F.one_hot(q[:, :-1], 256).transpose(1, 2).float()
    logits = model(x)
    loss = F.cross_entropy(logits[:, :, rf:], q[:, 1 + rf:])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
