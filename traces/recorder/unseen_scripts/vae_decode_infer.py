# Decoding latents to images with a Stable-Diffusion-VAE-shaped decoder (inference): 4x64x64 latents to 512x512 RGB
# through GroupNorm + SiLU + 3x3 residual blocks, a mid-block self-attention over the 64x64 positions, and nearest
# 2x upsampling; fp16 weights, NCHW (the layout most pipelines leave it in), images copied to the host per batch.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--latent", type=int, default=64)
ap.add_argument("--channels", default="512,512,256,128")
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.float16 if dev == "cuda" else torch.float32


class ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin, eps=1e-6), nn.Conv2d(cin, cout, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(32, cout, eps=1e-6), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.c1(F.silu(self.n1(x)))
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.GroupNorm(32, c, eps=1e-6)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.out = nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).transpose(-1, -2).unbind(1)
        y = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None])[:, 0]
        return x + self.out(y.transpose(-1, -2).reshape(b, c, h, w))


class Decoder(nn.Module):
    def __init__(self, chans):
        super().__init__()
        self.conv_in = nn.Conv2d(4, chans[0], 3, padding=1)
        self.mid = nn.Sequential(ResBlock(chans[0], chans[0]), Attention(chans[0]), ResBlock(chans[0], chans[0]))
        ups, cin = [], chans[0]
        for i, c in enumerate(chans):
            ups += [ResBlock(cin, c), ResBlock(c, c), ResBlock(c, c)]
            if i < len(chans) - 1:
                ups += [nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(c, c, 3, padding=1)]
            cin = c
        self.up = nn.Sequential(*ups)
        self.norm_out = nn.GroupNorm(32, cin, eps=1e-6)
        self.conv_out = nn.Conv2d(cin, 3, 3, padding=1)

    def forward(self, z):
        h = self.up(self.mid(self.conv_in(z / 0.18215)))
        return self.conv_out(F.silu(self.norm_out(h)))


model = Decoder([int(c) for c in a.channels.split(",")]).to(dev, dtype).eval()
with torch.inference_mode():
    for step in range(a.steps):
        latents = torch.randn(a.batch, 4, a.latent, a.latent, device=dev, dtype=dtype)
        images = ((model(latents).clamp(-1, 1) + 1) * 127.5).to(torch.uint8).permute(0, 2, 3, 1).cpu()
        if step % 20 == 0:
            print(f"step {step} images {tuple(images.shape)} mean {images.float().mean():.1f}")
