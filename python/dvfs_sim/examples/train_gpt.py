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


def attention(torch, q, k, v, groups, causal=True):
    """Attention (grouped-query when groups > 1; causal: query i sees keys 0..i, as in training or a prompt
    at position 0) with the fused kernels of recent PyTorch, and a plain version for old ones (CPU tests)."""
    F = torch.nn.functional
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None:
        try:
            return sdpa(q, k, v, is_causal=causal, enable_gqa=groups > 1)
        except TypeError:  # PyTorch < 2.5: no enable_gqa
            pass
    if groups > 1:
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=causal)
    w = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
    if causal:
        T = q.shape[-2]
        w = w.masked_fill(torch.ones(T, k.shape[-2], dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(w, -1) @ v


def rms_norm(torch, x, w, eps):
    """RMSNorm with PyTorch's fused kernel where it has one (2.4+)."""
    F = torch.nn.functional
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), w, eps)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def tensor_parallel_ops(torch):
    """Megatron-LM's two conjugate operators of a tensor-parallel layer: `enter` is the identity forward and
    an all-reduce of the gradient backward (the column-parallel input), `leave` an all-reduce forward and the
    identity backward (the row-parallel output). Over the default process group."""
    dist = torch.distributed

    class Enter(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            g = g.contiguous().clone()
            dist.all_reduce(g)
            return g

    class Leave(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x = x.contiguous().clone()
            dist.all_reduce(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return Enter.apply, Leave.apply


def build_model(torch, a):
    """The model for shape `a` (attributes llama, layers, d, heads, kv_heads, ffn, vocab; tp: tensor-parallel
    ranks, 1 = none), this rank's shard of it."""
    nn, F = torch.nn, torch.nn.functional
    tp = getattr(a, "tp_size", 1)
    enter, leave = tensor_parallel_ops(torch) if tp > 1 else (lambda x: x, lambda x: x)
    heads, kv_heads, ffn = a.heads // tp, a.kv_heads // tp, a.ffn // tp

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return rms_norm(torch, x, self.w, 1e-5)

    class Block(nn.Module):
        def __init__(self, i):
            super().__init__()
            self.i = i
            norm = RMSNorm if a.llama else nn.LayerNorm
            self.n1, self.n2 = norm(a.d), norm(a.d)
            self.hd = a.d // a.heads
            bias = not a.llama and tp == 1  # biases of row-parallel layers would be summed over TP ranks
            self.qkv = nn.Linear(a.d, (heads + 2 * kv_heads) * self.hd, bias=bias)
            self.proj = nn.Linear(heads * self.hd, a.d, bias=bias)
            self.up = nn.Linear(a.d, 2 * ffn, bias=False) if a.llama else nn.Linear(a.d, ffn, bias=bias)
            self.down = nn.Linear(ffn, a.d, bias=bias)

        def forward(self, x):
            B, T, _ = x.shape
            with torch.profiler.record_function(f"layer{self.i}.attn"):
                q, k, v = self.qkv(enter(self.n1(x))).split([heads * self.hd, kv_heads * self.hd, kv_heads * self.hd], -1)
                q = q.view(B, T, heads, self.hd).transpose(1, 2)
                k = k.view(B, T, kv_heads, self.hd).transpose(1, 2)
                v = v.view(B, T, kv_heads, self.hd).transpose(1, 2)
                y = attention(torch, q, k, v, heads // kv_heads)
                x = x + leave(self.proj(y.transpose(1, 2).reshape(B, T, heads * self.hd)))
            with torch.profiler.record_function(f"layer{self.i}.mlp"):
                h = self.up(enter(self.n2(x)))
                if a.llama:
                    g, u = h.chunk(2, -1)
                    h = F.silu(g) * u
                else:
                    h = F.gelu(h, approximate="tanh")
                x = x + leave(self.down(h))
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


def train_step(torch, model, opt, idx, tgt, autocast=True):
    """One training step inside the `forward` / `backward` / `optimizer` ranges the importer reads for phases
    (bf16 autocast on CUDA); returns the loss."""
    with torch.profiler.record_function("forward"):
        with torch.autocast("cuda", dtype=torch.bfloat16) if autocast else contextlib.nullcontext():
            loss = model(idx, tgt)
    with torch.profiler.record_function("backward"):
        loss.backward()
    with torch.profiler.record_function("optimizer"):
        opt.step()
        opt.zero_grad(set_to_none=True)
    return loss


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
    p.add_argument("--tp", action="store_true",
                   help="tensor-parallel training under torchrun: every rank holds 1/WORLD_SIZE of each layer's heads and "
                        "MLP (Megatron-LM's column/row split) and all-reduces the layer outputs; embedding and head replicated")
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
    if a.ddp and a.tp:
        sys.exit("train_gpt.py: --ddp and --tp: choose one (every rank is one data-parallel replica, or one TP shard)")
    a.tp_size = 1
    if a.ddp or a.tp:
        import os
        import torch.distributed as dist
        dist.init_process_group("nccl" if cuda else "gloo")
        if cuda:
            local = int(os.environ.get("LOCAL_RANK", 0))
            torch.cuda.set_device(local)
            dev = f"cuda:{local}"
        if a.tp:
            a.tp_size = dist.get_world_size()
            if a.heads % a.tp_size or a.kv_heads % a.tp_size or a.ffn % a.tp_size:
                sys.exit(f"train_gpt.py: --tp over {a.tp_size} ranks needs heads, KV heads and FFN divisible by it")
    torch.manual_seed(0)  # the same data and replicated weights on every rank
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
        loss = train_step(torch, model, opt, idx, tgt, autocast=cuda)
    if cuda:
        torch.cuda.synchronize()
    print(f"{a.steps} steps, {(time.perf_counter() - t0) / a.steps:.4f} s per step, loss {loss.item():.6f}", file=sys.stderr)
    if a.ddp or a.tp:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
