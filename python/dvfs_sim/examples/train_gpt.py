#!/usr/bin/env python3
"""A GPT- or Llama-shaped model trained on random tokens on one GPU (PyTorch eager, bf16 autocast, fused
AdamW), with the record_function ranges dvfs-sim's importer understands: `forward`, `layer<k>.attn`,
`layer<k>.mlp`, `lm_head`, `backward`, `optimizer`. It knows nothing of the recorder:

    python3 python/dvfs_sim/examples/train_gpt.py --preset llama-3.2-3b --steps 20
    PYTHONPATH=python python3 -m dvfs_sim.record -o out/rec -- python3 python/dvfs_sim/examples/train_gpt.py --preset gpt3-xl

Presets give the shapes; any of --layers/--d/--heads/... overrides them. Needs PyTorch (CUDA for real runs;
on a CPU it runs in fp32 without autocast, for tests).
"""
import argparse
import contextlib
import sys
import time

# name: (llama, layers, d, heads, kv_heads, ffn, vocab, seq, batch)
PRESETS = {
    "gpt3-xl": (False, 24, 2048, 16, 16, 8192, 50304, 2048, 8),        # traces/recordings/h200-gpt3xl
    "gpt3-2.7b": (False, 32, 2560, 32, 32, 10240, 50304, 2048, 4),
    "llama-1b": (True, 16, 2048, 16, 8, 5632, 50304, 2048, 8),          # traces/recordings/h200-llama1b
    "llama-3.2-3b": (True, 28, 3072, 24, 8, 8192, 128256, 2048, 4),
    "qwen3-1.7b": (True, 28, 2048, 16, 8, 6144, 151936, 2048, 4),
    "tiny": (False, 2, 64, 4, 4, 256, 512, 32, 2),                      # CPU tests
}


def _attention(torch, q, k, v, groups):
    """Causal attention (grouped-query when groups > 1) with the fused kernels of recent PyTorch, and a
    plain version for old ones (CPU tests)."""
    F = torch.nn.functional
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None:
        try:
            return sdpa(q, k, v, is_causal=True, enable_gqa=groups > 1)
        except TypeError:  # PyTorch < 2.5: no enable_gqa
            pass
    if groups > 1:
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=True)
    T = q.shape[-2]
    w = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    w = w.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(w, -1) @ v


def build_model(torch, a):
    """The model for shape `a` (attributes llama, layers, d, heads, kv_heads, ffn, vocab)."""
    nn, F = torch.nn, torch.nn.functional

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))

        def forward(self, x):
            if hasattr(F, "rms_norm"):
                return F.rms_norm(x, (x.shape[-1],), self.w, 1e-5)
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.w

    class Block(nn.Module):
        def __init__(self, i):
            super().__init__()
            self.i = i
            norm = RMSNorm if a.llama else nn.LayerNorm
            self.n1, self.n2 = norm(a.d), norm(a.d)
            self.hd = a.d // a.heads
            self.qkv = nn.Linear(a.d, (a.heads + 2 * a.kv_heads) * self.hd, bias=not a.llama)
            self.proj = nn.Linear(a.d, a.d, bias=not a.llama)
            self.up = nn.Linear(a.d, 2 * a.ffn, bias=False) if a.llama else nn.Linear(a.d, a.ffn)
            self.down = nn.Linear(a.ffn, a.d, bias=not a.llama)

        def forward(self, x):
            B, T, _ = x.shape
            with torch.profiler.record_function(f"layer{self.i}.attn"):
                q, k, v = self.qkv(self.n1(x)).split([a.heads * self.hd, a.kv_heads * self.hd, a.kv_heads * self.hd], -1)
                q = q.view(B, T, a.heads, self.hd).transpose(1, 2)
                k = k.view(B, T, a.kv_heads, self.hd).transpose(1, 2)
                v = v.view(B, T, a.kv_heads, self.hd).transpose(1, 2)
                y = _attention(torch, q, k, v, a.heads // a.kv_heads)
                x = x + self.proj(y.transpose(1, 2).reshape(B, T, a.d))
            with torch.profiler.record_function(f"layer{self.i}.mlp"):
                h = self.up(self.n2(x))
                if a.llama:
                    g, u = h.chunk(2, -1)
                    h = F.silu(g) * u
                else:
                    h = F.gelu(h, approximate="tanh")
                x = x + self.down(h)
            return x

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(a.vocab, a.d)
            self.blocks = nn.ModuleList(Block(i) for i in range(a.layers))
            self.norm = (RMSNorm if a.llama else nn.LayerNorm)(a.d)
            self.head = nn.Linear(a.d, a.vocab, bias=False)

        def forward(self, idx, tgt):
            x = self.emb(idx)
            for b in self.blocks:
                x = b(x)
            with torch.profiler.record_function("lm_head"):
                logits = self.head(self.norm(x))
                return F.cross_entropy(logits.float().reshape(-1, a.vocab), tgt.reshape(-1))

    return Model()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="gpt3-xl")
    for name in ("layers", "d", "heads", "kv-heads", "ffn", "vocab", "seq", "batch"):
        p.add_argument(f"--{name}", type=int, default=None)
    p.add_argument("--llama", action="store_true", default=None, help="RMSNorm, SwiGLU, no biases, grouped-query attention")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    p.add_argument("--ddp", action="store_true",
                   help="data-parallel training under torchrun (NCCL on CUDA, gloo on CPU): gradients all-reduced by DDP")
    a = p.parse_args(argv)
    preset = dict(zip(("llama", "layers", "d", "heads", "kv_heads", "ffn", "vocab", "seq", "batch"), PRESETS[a.preset]))
    for k, v in preset.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    return a


def main(argv=None):
    a = parse_args(argv)
    import torch
    dev = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda = dev.startswith("cuda")
    if a.ddp:
        import os
        import torch.distributed as dist
        dist.init_process_group("nccl" if cuda else "gloo")
        if cuda:
            local = int(os.environ.get("LOCAL_RANK", 0))
            torch.cuda.set_device(local)
            dev = f"cuda:{local}"
    torch.manual_seed(0)
    # Parameters are created on the device where PyTorch allows it (2.0+): no slow CPU initialisation.
    with torch.device(dev) if hasattr(torch.device, "__enter__") else contextlib.nullcontext():
        model = build_model(torch, a)
    model = model.to(dev)
    params = sum(q.numel() for q in model.parameters())
    if a.ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()] if cuda else None)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **({"fused": True} if cuda else {}))
    data = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device=dev)
    idx, tgt = data[:, :-1].contiguous(), data[:, 1:].contiguous()
    print(f"{a.preset}: {params / 1e9:.2f} B parameters on {dev}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    for _ in range(a.steps):
        with torch.profiler.record_function("forward"):
            with torch.autocast("cuda", dtype=torch.bfloat16) if cuda else contextlib.nullcontext():
                loss = model(idx, tgt)
        with torch.profiler.record_function("backward"):
            loss.backward()
        with torch.profiler.record_function("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)
    if cuda:
        torch.cuda.synchronize()
    print(f"{a.steps} steps, {(time.perf_counter() - t0) / a.steps:.4f} s per step, loss {loss.item():.3f}", file=sys.stderr)
    if a.ddp:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
