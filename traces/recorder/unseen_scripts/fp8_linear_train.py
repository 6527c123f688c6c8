# Training a small pre-norm transformer LM whose linear layers run their forward matmuls in fp8 (the recipe of
# fp8 training libraries, written out by hand): per-tensor absmax scales, activations and weights cast to
# float8_e4m3fn, torch._scaled_mm with bf16 output; the backward matmuls in bf16 (a custom autograd Function).
# Attention through scaled_dot_product_attention, bf16 autocast elsewhere, fp32 master weights, fused AdamW.
import argparse
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--batch", type=int, default=16)
ap.add_argument("--seq", type=int, default=1024)
ap.add_argument("--d-model", type=int, default=1536)
ap.add_argument("--layers", type=int, default=8)
ap.add_argument("--vocab", type=int, default=32768)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
E4M3 = getattr(torch, "float8_e4m3fn", None)
FP8_MAX = 448.0
# fp8 matmuls need a GPU with fp8 tensor cores (sm_89 / sm_90 and later). On a CPU the same Function multiplies the
# fp8-rounded operands in bf16 instead (or in fp32 on a PyTorch without float8 dtypes), only so that the script can
# be tried there; on the GPU the forward always goes through torch._scaled_mm.
USE_SCALED_MM = dev == "cuda"
cdtype = torch.bfloat16 if dev == "cuda" else torch.float32


def autocast():  # bf16 mixed precision on the GPU, plain fp32 on a CPU
    return torch.autocast(device_type="cuda", dtype=torch.bfloat16) if dev == "cuda" else contextlib.nullcontext()


def to_fp8(t):  # per-tensor scaling: returns the fp8 tensor and the fp32 scale that undoes it (a 0-dim tensor)
    amax = t.abs().amax().float().clamp(min=1e-12)
    scale = FP8_MAX / amax
    if E4M3 is None:  # no float8 dtype (old PyTorch on a CPU): keep the scaled values
        return (t.float() * scale).clamp(-FP8_MAX, FP8_MAX), scale.reciprocal()
    return (t.float() * scale).clamp(-FP8_MAX, FP8_MAX).to(E4M3), scale.reciprocal()


class FP8LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):  # x: [..., k] bf16, weight: [n, k] fp32 master
        x2 = x.reshape(-1, x.shape[-1]).to(cdtype)
        w = weight.to(cdtype)
        x8, sx = to_fp8(x2)
        w8, sw = to_fp8(w)
        if USE_SCALED_MM:
            # mat2 must be column-major: the transpose of the row-major [n, k] weight; fp32 scalar scales
            with torch.autocast(device_type="cuda", enabled=False):
                y = torch._scaled_mm(x8, w8.t(), sx, sw, out_dtype=torch.bfloat16)
        else:  # CPU smoke-test fallback
            y = ((x8.to(cdtype) @ w8.to(cdtype).t()).float() * (sx * sw)).to(cdtype)
        ctx.save_for_backward(x2, w)
        ctx.x_dtype = x.dtype
        return y.view(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad):
        x2, w = ctx.saved_tensors
        g = grad.reshape(-1, grad.shape[-1]).to(cdtype)
        grad_x = (g @ w).view(*grad.shape[:-1], w.shape[1]).to(ctx.x_dtype)
        grad_w = (g.t() @ x2).float()
        return grad_x, grad_w


class FP8Linear(nn.Linear):
    def __init__(self, cin, cout):
        super().__init__(cin, cout, bias=False)

    def forward(self, x):
        return FP8LinearFn.apply(x, self.weight)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.heads = d // 128
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = FP8Linear(d, 3 * d), FP8Linear(d, d)
        self.fc, self.out = FP8Linear(d, 4 * d), FP8Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch < 2.0
            s = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
            y = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float("-inf")).softmax(-1) @ v
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class LM(nn.Module):
    def __init__(self, vocab, d, layers, ctx):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)  # the output projection stays in bf16, as fp8 recipes keep it

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


model = LM(a.vocab, a.d_model, a.layers, a.seq).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1,
                        **({"fused": True} if dev == "cuda" else {}))
for step in range(a.steps):
    ids = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
    with autocast():
        logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.float().view(-1, a.vocab), ids[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.3f}")
