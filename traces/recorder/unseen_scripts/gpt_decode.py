# Greedy generation with a GPT-2-medium-sized decoder and a KV cache, fp16, batch 4: one forward call per
# generated token (the model's forward takes the new token and the cache), as a hand-written serving loop does.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--prompts", type=int, default=4)
ap.add_argument("--prompt-len", type=int, default=256)
ap.add_argument("--new-tokens", type=int, default=600)
ap.add_argument("--d-model", type=int, default=1024)
ap.add_argument("--layers", type=int, default=24)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.float16 if dev == "cuda" else torch.float32


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, cache):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None)
        else:  # PyTorch < 2.0
            s = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
            if cache is None:
                s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            y = s.softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        x = x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return x, (k, v)


class GPT(nn.Module):
    def __init__(self, vocab=50257, d=1024, layers=24, ctx=2048):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, d // 64) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, ids, past=None, start=0):
        x = self.wte(ids) + self.wpe(torch.arange(start, start + ids.shape[1], device=ids.device))
        new = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, None if past is None else past[i])
            new.append(kv)
        return self.ln(x[:, -1]) @ self.wte.weight.t(), new


model = GPT(d=a.d_model, layers=a.layers).to(dev, dtype).eval()
ids = torch.randint(0, 50257, (a.prompts, a.prompt_len), device=dev)
with torch.no_grad():
    logits, past = model(ids)
    out = [logits.argmax(-1)]
    for i in range(a.new_tokens - 1):
        logits, past = model(out[-1][:, None], past, a.prompt_len + i)
        out.append(logits.argmax(-1))
print(torch.stack(out, 1).shape, "tokens generated")
