# Speculative decoding (greedy): a 4-layer draft model proposes `--gamma` tokens one at a time from its own KV cache,
# the 24-layer target model scores them in one forward over gamma + 1 positions with its KV cache, and the longest
# prefix on which both agree is kept plus the target's own next token; both caches are cut back to the accepted
# length. fp16 weights, batch 1 (a chat server's latency path), SDPA with an explicit mask over the cache.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--tokens", type=int, default=4000)
ap.add_argument("--gamma", type=int, default=4)
ap.add_argument("--dim", type=int, default=2048)
ap.add_argument("--layers", type=int, default=24)
ap.add_argument("--draft-dim", type=int, default=768)
ap.add_argument("--draft-layers", type=int, default=4)
ap.add_argument("--heads", type=int, default=16)
ap.add_argument("--vocab", type=int, default=32000)
ap.add_argument("--prompt", type=int, default=256)
ap.add_argument("--max-len", type=int, default=8192)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.float16 if dev == "cuda" else torch.float32


def attention(q, k, v, mask):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])  # older PyTorch (a CPU try-out)
    return s.masked_fill(~mask, float("-inf")).softmax(-1) @ v


class Layer(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, cache, pos):
        b, l, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, l, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        cache[0][:, :, pos:pos + l], cache[1][:, :, pos:pos + l] = k, v
        keys, vals = cache[0][:, :, :pos + l], cache[1][:, :, :pos + l]
        mask = torch.arange(pos + l, device=x.device)[None, :] <= torch.arange(pos, pos + l, device=x.device)[:, None]
        x = x + self.o(attention(q, keys, vals, mask).transpose(1, 2).reshape(b, l, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Decoder(nn.Module):
    def __init__(self, d, layers):
        super().__init__()
        self.emb, self.pos = nn.Embedding(a.vocab, d), nn.Embedding(a.max_len, d)
        self.layers = nn.ModuleList(Layer(d, a.heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.caches = [[torch.zeros(1, a.heads, a.max_len, d // a.heads, device=dev, dtype=dtype) for _ in range(2)]
                       for _ in range(layers)]

    def forward(self, t, pos):
        x = self.emb(t) + self.pos(torch.arange(pos, pos + t.shape[1], device=t.device))
        for layer, cache in zip(self.layers, self.caches):
            x = layer(x, cache, pos)
        return self.ln(x) @ self.emb.weight.t()


target = Decoder(a.dim, a.layers).to(dev, dtype).eval()
draft = Decoder(a.draft_dim, a.draft_layers).to(dev, dtype).eval()
with torch.no_grad():
    seq = torch.randint(0, a.vocab, (1, a.prompt), device=dev)
    target(seq, 0)
    draft(seq, 0)
    n, accepted, rounds = a.prompt, 0, 0
    while n < min(a.prompt + a.tokens, a.max_len - a.gamma - 2):
        last = seq[:, -1:]
        proposal = []
        for i in range(a.gamma):  # the draft runs ahead token by token
            last = draft(last, n - 1 + i)[:, -1:].argmax(-1)
            proposal.append(last)
        proposal = torch.cat(proposal, 1)
        scores = target(torch.cat([seq[:, -1:], proposal], 1), n - 1)  # one target forward over gamma + 1 positions
        best = scores.argmax(-1)
        agree = (best[:, :-1] == proposal).int().cumprod(1).sum().item()  # host sync: how many are kept
        seq = torch.cat([seq, proposal[:, :agree], best[:, agree:agree + 1]], 1)
        n, accepted, rounds = seq.shape[1], accepted + agree, rounds + 1
        if rounds % 200 == 0:
            print(f"tokens {n - a.prompt} rounds {rounds} accepted per round {accepted / rounds:.2f}")
