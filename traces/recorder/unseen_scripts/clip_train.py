# Training a CLIP-style (Radford et al. 2021) contrastive image-text model: a ViT-B/32-shaped image tower (fewer layers)
# and a causal text transformer over 77 tokens, projections, a learned temperature and the symmetric cross-entropy
# over the batch's similarity matrix; fp16 autocast with a GradScaler, AdamW.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=256)
ap.add_argument("--size", type=int, default=224)
ap.add_argument("--layers", type=int, default=6)
ap.add_argument("--width", type=int, default=512)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def autocast():
    return torch.autocast(device_type="cuda", dtype=torch.float16) if dev == "cuda" else contextlib.nullcontext()


def encoder(width, layers):
    layer = nn.TransformerEncoderLayer(width, width // 64, 4 * width, 0.0, activation="gelu", batch_first=True,
                                       norm_first=True)
    return nn.TransformerEncoder(layer, layers)


class CLIP(nn.Module):
    def __init__(self, width, layers, vocab=49408, ctx=77, embed=512):
        super().__init__()
        self.patch = nn.Conv2d(3, width, 32, 32, bias=False)
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.vpos = nn.Parameter(torch.randn(1, (a.size // 32) ** 2 + 1, width) * 0.02)
        self.visual = encoder(width, layers)
        self.vproj = nn.Linear(width, embed, bias=False)
        self.tok = nn.Embedding(vocab, width)
        self.tpos = nn.Parameter(torch.randn(1, ctx, width) * 0.01)
        self.text = encoder(width, layers)
        self.tproj = nn.Linear(width, embed, bias=False)
        self.ln_v, self.ln_t = nn.LayerNorm(width), nn.LayerNorm(width)
        self.logit_scale = nn.Parameter(torch.tensor(2.659))
        self.register_buffer("causal", torch.full((ctx, ctx), float("-inf")).triu(1))

    def forward(self, images, tokens):
        v = self.patch(images).flatten(2).transpose(1, 2)
        v = torch.cat([self.cls.expand(v.shape[0], -1, -1), v], 1) + self.vpos
        v = self.vproj(self.ln_v(self.visual(v)[:, 0]))
        t = self.text(self.tok(tokens) + self.tpos, mask=self.causal)
        t = self.tproj(self.ln_t(t)[torch.arange(t.shape[0], device=t.device), tokens.argmax(-1)])
        v, t = F.normalize(v, dim=-1), F.normalize(t, dim=-1)
        return self.logit_scale.exp() * v @ t.t()


model = CLIP(a.width, a.layers).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=5e-4, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.2)
scaler = torch.cuda.amp.GradScaler(enabled=dev == "cuda")
labels = torch.arange(a.batch, device=dev)
for step in range(a.steps):
    images = torch.randn(a.batch, 3, a.size, a.size, device=dev)
    tokens = torch.randint(1, 49407, (a.batch, 77), device=dev)
    tokens[torch.arange(a.batch), torch.randint(5, 77, (a.batch,))] = 49407  # end-of-text, argmax picks it
    with autocast():
        logits = model(images, tokens)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    with torch.no_grad():
        model.logit_scale.clamp_(0, 4.6052)
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
