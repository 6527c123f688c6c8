# Swin Transformer (Liu et al. 2021) image-classification training, written as the official implementation does it:
# 4x4 patch embedding, window attention over 7x7 windows (window_partition / window_reverse through view + permute),
# shifted windows by torch.roll with the attention mask of the shifted layout, a learned relative-position bias
# gathered from its table, patch merging (four strided slices concatenated, LayerNorm, Linear), stochastic depth,
# GELU MLPs. Swin-T depths (2, 2, 6, 2) and widths, 224x224 images, batch 64, bf16 autocast, AdamW, label smoothing.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=150)
ap.add_argument("--batch", type=int, default=64)
ap.add_argument("--img", type=int, default=224)
ap.add_argument("--embed", type=int, default=96)
ap.add_argument("--depths", default="2,2,6,2")
ap.add_argument("--window", type=int, default=7)
ap.add_argument("--classes", type=int, default=1000)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
depths = [int(d) for d in a.depths.split(",")]


def window_partition(x, ws):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws * ws, c)


def window_reverse(windows, ws, h, w):
    b = windows.shape[0] // ((h // ws) * (w // ws))
    x = windows.view(b, h // ws, w // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, -1)


class WindowAttention(nn.Module):
    def __init__(self, dim, heads, ws):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.table = nn.Parameter(torch.randn((2 * ws - 1) ** 2, heads) * 0.02)
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (ws - 1)
        self.register_buffer("index", rel[..., 0] * (2 * ws - 1) + rel[..., 1])
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x, mask):
        bw, n, c = x.shape
        q, k, v = self.qkv(x).reshape(bw, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn + self.table[self.index.view(-1)].view(n, n, -1).permute(2, 0, 1).unsqueeze(0)
        if mask is not None:
            nw = mask.shape[0]
            attn = attn.view(bw // nw, nw, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.heads, n, n)
        x = (attn.softmax(-1) @ v).transpose(1, 2).reshape(bw, n, c)
        return self.proj(x)


class SwinBlock(nn.Module):
    def __init__(self, dim, heads, res, ws, shift, drop_path):
        super().__init__()
        self.res, self.ws, self.shift, self.drop_path = res, ws, shift, drop_path
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, heads, ws)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        mask = None
        if shift:
            img = torch.zeros(1, res, res, 1)
            cnt = 0
            for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                    img[:, hs, wsl, :] = cnt
                    cnt += 1
            mw = window_partition(img, ws).squeeze(-1)
            mask = (mw.unsqueeze(1) - mw.unsqueeze(2)).ne(0).float() * -100.0
        self.register_buffer("mask", mask)

    def stochastic(self, x):
        if not self.training or self.drop_path == 0:
            return x
        keep = torch.rand(x.shape[0], 1, 1, device=x.device) >= self.drop_path
        return x * keep / (1 - self.drop_path)

    def forward(self, x):
        b, l, c = x.shape
        h = self.norm1(x).view(b, self.res, self.res, c)
        if self.shift:
            h = torch.roll(h, shifts=(-self.shift, -self.shift), dims=(1, 2))
        h = window_reverse(self.attn(window_partition(h, self.ws), self.mask), self.ws, self.res, self.res)
        if self.shift:
            h = torch.roll(h, shifts=(self.shift, self.shift), dims=(1, 2))
        x = x + self.stochastic(h.reshape(b, l, c))
        return x + self.stochastic(self.mlp(self.norm2(x)))


class PatchMerging(nn.Module):
    def __init__(self, dim, res):
        super().__init__()
        self.res = res
        self.norm, self.reduction = nn.LayerNorm(4 * dim), nn.Linear(4 * dim, 2 * dim, bias=False)

    def forward(self, x):
        b, l, c = x.shape
        x = x.view(b, self.res, self.res, c)
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
        return self.reduction(self.norm(x.view(b, -1, 4 * c)))


class Swin(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, a.embed, 4, 4)
        self.norm0 = nn.LayerNorm(a.embed)
        layers, dim, res = [], a.embed, a.img // 4
        rates = torch.linspace(0, 0.2, sum(depths)).tolist()
        for i, depth in enumerate(depths):
            heads = dim // 32
            for j in range(depth):
                shift = a.window // 2 if (j % 2 and res > a.window) else 0
                layers.append(SwinBlock(dim, heads, res, min(a.window, res), shift, rates.pop(0)))
            if i < len(depths) - 1:
                layers.append(PatchMerging(dim, res))
                dim, res = 2 * dim, res // 2
        self.layers = nn.Sequential(*layers)
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, a.classes)

    def forward(self, img):
        x = self.norm0(self.patch(img).flatten(2).transpose(1, 2))
        return self.head(self.norm(self.layers(x)).mean(1))


model = Swin().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
images = torch.randn(a.batch, 3, a.img, a.img, device=dev)
labels = torch.randint(0, a.classes, (a.batch,), device=dev)
for step in range(a.steps):
    with torch.autocast(device_type=dev, dtype=torch.bfloat16, enabled=dev == "cuda"):
        loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
