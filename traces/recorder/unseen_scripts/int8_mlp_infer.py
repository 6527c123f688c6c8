# int8 serving of a stack of transformer FFN blocks (LLM.int8()/SmoothQuant-style W8A8 without outliers): weights
# quantised once to int8 with per-output-channel scales, activations quantised per token on the fly (absmax), the
# matmuls through torch._int_mm (int8 tensor cores, int32 accumulators), dequantised to fp16 with both scales, bias,
# GELU and a residual; batches of 4,096 tokens under inference_mode, one model call per batch.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--batches", type=int, default=400)
ap.add_argument("--tokens", type=int, default=4096)
ap.add_argument("--hidden", type=int, default=4096)
ap.add_argument("--ffn", type=int, default=16384)
ap.add_argument("--layers", type=int, default=8)
a = ap.parse_args()
dev = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.float16 if dev == "cuda" else torch.float32
# torch._int_mm needs PyTorch 2.1 or later (on a CPU, 2.2 or later); without it the int8 operands are multiplied
# in fp32 on a CPU, only so that the script can be tried there. On the GPU the int8 kernel is always used.
HAS_INT_MM = hasattr(torch, "_int_mm")


def quantize_per_token(x):  # x: [tokens, k] fp16 -> int8 [tokens, k] and fp32 scales [tokens, 1]
    scale = x.abs().amax(dim=-1, keepdim=True).float().clamp(min=1e-5) / 127.0
    return (x.float() / scale).round().clamp(-128, 127).to(torch.int8), scale


def int8_matmul(xq, wq_t):  # int8 [m, k] x int8 [k, n] (column-major: the transpose of a row-major [n, k]) -> int32
    if HAS_INT_MM or dev == "cuda":
        return torch._int_mm(xq, wq_t)
    return (xq.float() @ wq_t.float()).to(torch.int32)  # CPU fallback for an old PyTorch (smoke test only)


class W8A8Linear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        w = linear.weight.detach().float()
        scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-5) / 127.0  # per output channel
        self.register_buffer("weight", (w / scale).round().clamp(-128, 127).to(torch.int8))  # [n, k], row-major
        self.register_buffer("weight_scale", scale.t().contiguous())  # [1, n] fp32
        self.register_buffer("bias", linear.bias.detach().to(dtype))

    def forward(self, x):
        xq, x_scale = quantize_per_token(x)
        acc = int8_matmul(xq, self.weight.t())
        return (acc.float() * x_scale * self.weight_scale).to(dtype) + self.bias


class FFNBlock(nn.Module):
    def __init__(self, d, ffn):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up, self.down = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x)), approximate="tanh"))


class MLPStack(nn.Module):
    def __init__(self, d, ffn, layers):
        super().__init__()
        self.blocks = nn.ModuleList(FFNBlock(d, ffn) for _ in range(layers))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


def quantize_model(model):  # swap every nn.Linear for its W8A8 counterpart (weights quantised once, on the device)
    for blk in model.blocks:
        blk.up, blk.down = W8A8Linear(blk.up), W8A8Linear(blk.down)
    return model


torch.manual_seed(0)
model = MLPStack(a.hidden, a.ffn, a.layers).to(dev, dtype).eval().requires_grad_(False)
model = quantize_model(model)  # LayerNorms stay fp16; int8 weights, fp32 scales
checksum = torch.zeros((), device=dev)
with torch.inference_mode():
    for i in range(a.batches):
        x = torch.randn(a.tokens, a.hidden, device=dev, dtype=dtype)
        y = model(x)
        checksum += y.float().abs().mean()
print(f"{a.batches * a.tokens} tokens served, mean |y| {checksum.item() / a.batches:.4f}")
