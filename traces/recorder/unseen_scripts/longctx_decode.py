# Long-context LLM decoding (a chat server continuing 16k-token conversations): a Llama-style decoder (RMSNorm,
# rotary embeddings, SwiGLU, grouped-query attention with the KV heads repeated as Hugging Face's repeat_kv does)
# prefills a 16,384-token prompt per sequence in one forward, then decodes greedily one token per forward against a
# preallocated KV cache, batch 4. bf16 weights, SDPA. Every forward (the prefill, then each token) is one call of the
# model (inference_mode); the new tokens go to the host every 32 tokens.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=4)
ap.add_argument("--prompt", type=int, default=16384)
ap.add_argument("--new-tokens", type=int, default=600)
ap.add_argument("--dim", type=int, default=2048)
ap.add_argument("--layers", type=int, default=16)
ap.add_argument("--heads", type=int, default=32)
ap.add_argument("--kv-heads", type=int, default=8)
ap.add_argument("--ffn", type=int, default=5632)
ap.add_argument("--vocab", type=int, default=32000)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if dev == "cuda" else torch.float32
hd = a.dim // a.heads
max_len = a.prompt + a.new_tokens


def attention(q, k, v, causal):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])  # older PyTorch (a CPU try-out)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return s.softmax(-1) @ v


def repeat_kv(x, n):
    b, h, l, d = x.shape
    return x[:, :, None].expand(b, h, n, l, d).reshape(b, h * n, l, d)


def rotate(x, cos, sin):
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * self.w


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2 = RMSNorm(a.dim), RMSNorm(a.dim)
        self.q = nn.Linear(a.dim, a.dim, bias=False)
        self.kv = nn.Linear(a.dim, 2 * a.kv_heads * hd, bias=False)
        self.o = nn.Linear(a.dim, a.dim, bias=False)
        self.gate_up = nn.Linear(a.dim, 2 * a.ffn, bias=False)
        self.down = nn.Linear(a.ffn, a.dim, bias=False)

    def forward(self, x, cache, pos, cos, sin):
        b, l, _ = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, l, a.heads, hd).transpose(1, 2)
        k, v = self.kv(h).view(b, l, 2, a.kv_heads, hd).permute(2, 0, 3, 1, 4)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        cache[0][:, :, pos:pos + l], cache[1][:, :, pos:pos + l] = k, v
        keys = repeat_kv(cache[0][:, :, :pos + l], a.heads // a.kv_heads)
        vals = repeat_kv(cache[1][:, :, :pos + l], a.heads // a.kv_heads)
        x = x + self.o(attention(q, keys, vals, causal=l > 1).transpose(1, 2).reshape(b, l, a.dim))
        g, u = self.gate_up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.dim)
        self.layers = nn.ModuleList(Layer() for _ in range(a.layers))
        self.norm = RMSNorm(a.dim)
        self.head = nn.Linear(a.dim, a.vocab, bias=False)
        inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
        ang = torch.arange(max_len, dtype=torch.float32)[:, None] * inv[None]
        self.register_buffer("cos", torch.cos(ang), persistent=False)
        self.register_buffer("sin", torch.sin(ang), persistent=False)

    def forward(self, tokens, caches, pos):
        x = self.emb(tokens)
        l = tokens.shape[1]
        cos, sin = self.cos[pos:pos + l].to(x.dtype), self.sin[pos:pos + l].to(x.dtype)
        for layer, cache in zip(self.layers, caches):
            x = layer(x, cache, pos, cos, sin)
        return self.head(self.norm(x[:, -1]))


model = Decoder().to(dev, dtype).eval()
caches = [torch.zeros(2, a.batch, a.kv_heads, max_len, hd, device=dev, dtype=dtype) for _ in range(a.layers)]
prompt = torch.randint(0, a.vocab, (a.batch, a.prompt), device=dev)
with torch.inference_mode():
    logits = model(prompt, caches, 0)
    pos, out = a.prompt, []
    for i in range(a.new_tokens):
        token = logits.argmax(-1, keepdim=True)
        out.append(token)
        logits = model(token, caches, pos)
        pos += 1
        if i % 32 == 31:
            print(f"token {i + 1}: {torch.cat(out[-32:], 1)[0, :8].tolist()}")
