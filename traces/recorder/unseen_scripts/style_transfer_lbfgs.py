# Neural style transfer (Gatys et al.) as PyTorch's own tutorial writes it: a VGG-19-shaped feature network (here with
# random weights: no download), content loss at conv4_2, style losses from Gram matrices at five layers, the image
# itself optimised by L-BFGS (each optimizer step evaluates the closure up to `--max-iter` times). fp32 (cuDNN at
# PyTorch's defaults may use TF32).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--size", type=int, default=512)
ap.add_argument("--max-iter", type=int, default=10)
ap.add_argument("--width", type=int, default=64)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
CFG = [1, 1, "M", 2, 2, "M", 4, 4, 4, 4, "M", 8, 8, 8, 8, "M", 8]  # VGG-19 up to conv5_1, widths in units of --width
STYLE_AT, CONTENT_AT = {0, 2, 4, 8, 12}, 9  # conv1_1, conv2_1, conv3_1, conv4_1, conv5_1; conv4_2


class Features(nn.Module):
    def __init__(self, w):
        super().__init__()
        layers, c = [], 3
        for v in CFG:
            layers.append(nn.MaxPool2d(2) if v == "M" else nn.Conv2d(c, v * w, 3, padding=1))
            c = c if v == "M" else v * w
        self.layers = nn.ModuleList(layers)
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, img):
        x, convs, style, content = (img - self.mean) / self.std, 0, [], None
        for layer in self.layers:
            x = layer(x)
            if isinstance(layer, nn.Conv2d):
                if convs in STYLE_AT:
                    style.append(x)
                if convs == CONTENT_AT:
                    content = x
                x, convs = F.relu(x), convs + 1
        return style, content


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b, c, h * w)
    return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)


net = Features(a.width).to(dev).eval()
for p in net.parameters():
    p.requires_grad_(False)
content_img = F.interpolate(torch.rand(1, 3, 32, 32, device=dev), size=a.size, mode="bilinear").clamp(0, 1)
style_img = torch.rand(1, 3, a.size, a.size, device=dev)
with torch.no_grad():
    style_targets = [gram(f) for f in net(style_img)[0]]
    content_target = net(content_img)[1]
img = content_img.clone().requires_grad_(True)
opt = torch.optim.LBFGS([img], max_iter=a.max_iter)


def closure():
    opt.zero_grad()
    style, content = net(img.clamp(0, 1))
    loss = 1e6 * sum(F.mse_loss(gram(f), t) for f, t in zip(style, style_targets)) + F.mse_loss(content, content_target)
    loss.backward()
    return loss


for step in range(a.steps):
    loss = opt.step(closure)
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")
