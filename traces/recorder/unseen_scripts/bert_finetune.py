# Fine-tuning a BERT-base-sized encoder for sentence classification, fp16 autocast with GradScaler, AdamW,
# linear warm-up: the loop a user writes without the transformers package.
import argparse

import torch
import torch.nn as nn

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=120)
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--seq", type=int, default=128)
ap.add_argument("--d-model", type=int, default=768)
ap.add_argument("--layers", type=int, default=12)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class Encoder(nn.Module):
    def __init__(self, vocab=30522, d=768, layers=12, classes=2, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.norm = nn.LayerNorm(d)
        layer = nn.TransformerEncoderLayer(d, d // 64, 4 * d, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Sequential(nn.Linear(d, d), nn.Tanh(), nn.Dropout(0.1), nn.Linear(d, classes))

    def forward(self, ids, pad_mask):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.norm(self.tok(ids) + self.pos(pos))
        return self.head(self.encoder(h, src_key_padding_mask=pad_mask)[:, 0])


model = Encoder(d=a.d_model, layers=a.layers).to(dev)
decay = [p for n, p in model.named_parameters() if p.ndim > 1]
no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=2e-5)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
use_amp = dev == "cuda"
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
loss_fn = nn.CrossEntropyLoss()
model.train()
for step in range(a.steps):
    ids = torch.randint(0, 30522, (a.batch, a.seq), device=dev)
    lengths = torch.randint(a.seq // 2, a.seq + 1, (a.batch,), device=dev)
    pad_mask = torch.arange(a.seq, device=dev)[None, :] >= lengths[:, None]
    labels = torch.randint(0, 2, (a.batch,), device=dev)
    with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_amp):
        loss = loss_fn(model(ids, pad_mask), labels)
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    sched.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.4f}")
