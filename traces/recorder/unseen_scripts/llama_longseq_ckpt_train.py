# Long-context training of a ~0.66B-parameter Llama-style decoder (TinyLlama widths: d=2048, 32 heads, 4 KV heads,
# SwiGLU 5632, fewer layers): one 8,192-token sequence per step, every block under activation checkpointing
# (torch.utils.checkpoint, use_reentrant=False: the block's forward runs again in the backward), RMSNorm, rotary
# embeddings, grouped-query attention through scaled_dot_product_attention, bf16 weights, fused AdamW.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=200)
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--seq", type=int, default=8192)
ap.add_argument("--d-model", type=int, default=2048)
ap.add_argument("--heads", type=int, default=32)
ap.add_argument("--kv-heads", type=int, default=4)
ap.add_argument("--ffn", type=int, default=5632)
ap.add_argument("--layers", type=int, default=12)
ap.add_argument("--vocab", type=int, default=32000)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if dev == "cuda" else torch.float32


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rotary(q, k, cos, sin):
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class Attention(nn.Module):
    def __init__(self, d, heads, kv_heads):
        super().__init__()
        self.h, self.kv, self.hd = heads, kv_heads, d // heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        q = self.q_proj(x).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = apply_rotary(q, k, cos, sin)
        k = k.repeat_interleave(self.h // self.kv, dim=1)
        v = v.repeat_interleave(self.h // self.kv, dim=1)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch < 2.0
            s = (q @ k.transpose(-1, -2)) / self.hd ** 0.5
            y = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf")).softmax(-1) @ v
        return self.o_proj(y.transpose(1, 2).reshape(b, t, d))


class MLP(nn.Module):
    def __init__(self, d, ffn):
        super().__init__()
        self.gate_proj = nn.Linear(d, ffn, bias=False)
        self.up_proj = nn.Linear(d, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(d), RMSNorm(d)
        self.self_attn = Attention(d, heads, kv_heads)
        self.mlp = MLP(d, ffn)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(a.vocab, a.d_model)
        self.layers = nn.ModuleList(DecoderLayer(a.d_model, a.heads, a.kv_heads, a.ffn) for _ in range(a.layers))
        self.norm = RMSNorm(a.d_model)
        self.lm_head = nn.Linear(a.d_model, a.vocab, bias=False)
        hd = a.d_model // a.heads
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(a.seq).float(), inv)
        ang = torch.cat([ang, ang], dim=-1)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)
        self.gradient_checkpointing = True

    def forward(self, ids):
        t = ids.shape[1]
        cos, sin = self.cos[:t].to(self.embed_tokens.weight.dtype), self.sin[:t].to(self.embed_tokens.weight.dtype)
        x = self.embed_tokens(ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                x = checkpoint(layer, x, cos, sin, use_reentrant=False)
            else:
                x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


model = LlamaForCausalLM().to(dev, dtype).train()
print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters, {a.seq} tokens per sequence")
opt = torch.optim.AdamW(model.parameters(), lr=2e-5, betas=(0.9, 0.95), weight_decay=0.1,
                        **({"fused": True} if dev == "cuda" else {}))
for step in range(a.steps):
    ids = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.float().view(-1, a.vocab), ids[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.3f}")
