# Training a wav2vec-style speech recogniser with CTC: a strided conv1d feature encoder over raw 16 kHz audio
# (GroupNorm, GELU), a transformer encoder, a character head and CTC loss; fp16 autocast with a GradScaler.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--seconds", type=float, default=6.0)
ap.add_argument("--d-model", type=int, default=768)
ap.add_argument("--layers", type=int, default=6)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


def autocast():
    return torch.autocast(device_type="cuda", dtype=torch.float16) if dev == "cuda" else contextlib.nullcontext()


class FeatureEncoder(nn.Module):
    def __init__(self, c=512):
        super().__init__()
        spec = [(10, 5)] + [(3, 2)] * 4 + [(2, 2)] * 2
        layers, cin = [], 1
        for i, (k, s) in enumerate(spec):
            layers += [nn.Conv1d(cin, c, k, s, bias=False)]
            if i == 0:
                layers += [nn.GroupNorm(c, c)]
            layers += [nn.GELU()]
            cin = c
        self.conv = nn.Sequential(*layers)

    def forward(self, wav):
        return self.conv(wav[:, None]).transpose(1, 2)


class ASR(nn.Module):
    def __init__(self, d, layers, vocab=32):
        super().__init__()
        self.features = FeatureEncoder()
        self.proj = nn.Sequential(nn.LayerNorm(512), nn.Linear(512, d))
        layer = nn.TransformerEncoderLayer(d, d // 64, 4 * d, 0.1, activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, vocab)

    def forward(self, wav):
        return self.head(self.encoder(self.proj(self.features(wav))))


model = ASR(a.d_model, a.layers).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=5e-5)
scaler = torch.cuda.amp.GradScaler(enabled=dev == "cuda")
samples = int(a.seconds * 16000)
for step in range(a.steps):
    wav = torch.randn(a.batch, samples, device=dev)
    targets = torch.randint(1, 32, (a.batch, int(a.seconds * 15)), device=dev)
    with autocast():
        logits = model(wav)
    log_probs = logits.float().log_softmax(-1).transpose(0, 1)
    in_len = torch.full((a.batch,), log_probs.shape[0], dtype=torch.long, device=dev)
    out_len = torch.full((a.batch,), targets.shape[1], dtype=torch.long, device=dev)
    loss = F.ctc_loss(log_probs, targets, in_len, out_len, zero_infinity=True)
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
