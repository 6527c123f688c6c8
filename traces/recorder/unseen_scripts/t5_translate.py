# Training a T5-small-sized encoder-decoder translator with nn.Transformer: shared embeddings, padding masks,
# teacher forcing with a causal decoder mask, label smoothing; bf16 autocast, AdamW, inverse-sqrt schedule.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=80)
ap.add_argument("--batch", type=int, default=48)
ap.add_argument("--src-len", type=int, default=256)
ap.add_argument("--tgt-len", type=int, default=96)
ap.add_argument("--d-model", type=int, default=512)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
PAD, VOCAB = 0, 32128


def autocast():
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


class Translator(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d, padding_idx=PAD)
        self.pos = nn.Embedding(1024, d)
        self.t = nn.Transformer(d, d // 64, 6, 6, 4 * d, 0.1, batch_first=True, norm_first=True)
        self.out = nn.Linear(d, VOCAB, bias=False)
        self.out.weight = self.emb.weight

    def embed(self, ids):
        return self.emb(ids) * self.emb.embedding_dim ** 0.5 + self.pos(torch.arange(ids.shape[1], device=ids.device))

    def forward(self, src, tgt_in):
        causal = self.t.generate_square_subsequent_mask(tgt_in.shape[1], device=src.device)
        h = self.t(self.embed(src), self.embed(tgt_in), tgt_mask=causal, src_key_padding_mask=src == PAD,
                   tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=src == PAD)
        return self.out(h)


model = Translator(a.d_model).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.98))
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) ** -0.5, (s + 1) * 100 ** -1.5))
for step in range(a.steps):
    src = torch.randint(1, VOCAB, (a.batch, a.src_len), device=dev)
    tgt = torch.randint(1, VOCAB, (a.batch, a.tgt_len + 1), device=dev)
    src[:, a.src_len - torch.randint(0, a.src_len // 4, (1,)).item():] = PAD  # a padded tail
    with autocast():
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, VOCAB), tgt[:, 1:].reshape(-1), ignore_index=PAD, label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
