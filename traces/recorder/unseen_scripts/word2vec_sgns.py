# Skip-gram word2vec with negative sampling, as the tutorials write it in PyTorch: two embedding tables with sparse
# gradients (SparseAdam), centre / context pairs drawn on the GPU from a Zipf-shaped corpus stand-in, negatives drawn
# from the unigram distribution to the 3/4 power with torch.multinomial, scores by batched dot products, log-sigmoid
# loss. fp32 throughout.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--vocab", type=int, default=500_000)
ap.add_argument("--dim", type=int, default=300)
ap.add_argument("--batch", type=int, default=16384)
ap.add_argument("--negatives", type=int, default=10)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"


class SkipGram(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.centre = nn.Embedding(vocab, dim, sparse=True)
        self.context = nn.Embedding(vocab, dim, sparse=True)
        nn.init.uniform_(self.centre.weight, -0.5 / dim, 0.5 / dim)
        nn.init.zeros_(self.context.weight)

    def forward(self, centre, context, negatives):
        u = self.centre(centre)                                    # [B, D]
        pos = (u * self.context(context)).sum(-1)                  # [B]
        neg = torch.bmm(self.context(negatives), u.unsqueeze(2))   # [B, K, 1]
        return -(F.logsigmoid(pos) + F.logsigmoid(-neg.squeeze(2)).sum(1)).mean()


model = SkipGram(a.vocab, a.dim).to(dev)
opt = torch.optim.SparseAdam(model.parameters(), lr=1e-3)
counts = 1.0 / torch.arange(1, a.vocab + 1, dtype=torch.float32, device=dev)  # Zipf word frequencies
unigram = counts / counts.sum()
noise = unigram ** 0.75
for step in range(a.steps):
    centre = torch.multinomial(unigram, a.batch, replacement=True)
    offset = torch.randint(1, 6, (a.batch,), device=dev) * (torch.randint(0, 2, (a.batch,), device=dev) * 2 - 1)
    context = (centre + offset).clamp(0, a.vocab - 1)  # a neighbour in the window
    negatives = torch.multinomial(noise, a.batch * a.negatives, replacement=True).view(a.batch, a.negatives)
    loss = model(centre, context, negatives)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} loss {loss.item():.4f}")
