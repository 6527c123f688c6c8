#!/usr/bin/env python3
"""Autoregressive generation (the decode phase of RL post-training such as GRPO) with a Llama/Qwen-shaped
model and a KV cache, in plain PyTorch eager bf16, recorded per batch size with dvfs_sim.record.Recorder:
one recording directory per batch size, one profiled step per decode step (every sequence of the batch
gets one token). Random weights: the kernels and their shapes are what matter, not the text.

    PYTHONPATH=python python3 python/dvfs_sim/examples/generate.py --preset qwen2.5-7b --batch 16 64 256 -o out/decode

Ranges the importer understands: `decode` per step, `layer<k>.attn`, `layer<k>.mlp`, `lm_head`.
NVML is only read (the Recorder's sampler); no card setting is changed.
"""
import argparse
import os
import sys

from dvfs_sim.examples.train_gpt import attention, rms_norm

# name: (layers, d, heads, kv_heads, ffn, vocab)
PRESETS = {
    "qwen2.5-7b": (28, 3584, 28, 4, 18944, 152064),   # Qwen2.5-7B config.json
    "llama-3.2-3b": (28, 3072, 24, 8, 8192, 128256),
    "tiny": (2, 64, 4, 2, 128, 256),                    # CPU tests
}


def build(torch, a, dev):
    nn, F = torch.nn, torch.nn.functional
    L, d, H, KV, ffn, V = PRESETS[a.preset]
    hd = d // H
    dt = torch.bfloat16 if dev.startswith("cuda") else torch.float32

    def lin(i, o):
        return (torch.randn(o, i, device=dev, dtype=dt) * (1.0 / i ** 0.5))

    layers = [dict(n1=torch.ones(d, device=dev, dtype=dt), qkv=lin(d, (H + 2 * KV) * hd), o=lin(d, d),
                   n2=torch.ones(d, device=dev, dtype=dt), up=lin(d, 2 * ffn), down=lin(ffn, d)) for _ in range(L)]
    emb = torch.randn(V, d, device=dev, dtype=dt) * 0.02
    head = lin(d, V)
    norm = torch.ones(d, device=dev, dtype=dt)
    cache_k = [torch.zeros(a.batch_size, KV, a.max_len, hd, device=dev, dtype=dt) for _ in range(L)]
    cache_v = [torch.zeros(a.batch_size, KV, a.max_len, hd, device=dev, dtype=dt) for _ in range(L)]

    def rms(x, w):
        return rms_norm(torch, x, w, 1e-6)

    def attend(q, k, v, causal):
        return attention(torch, q, k, v, H // KV, causal)

    def forward(tokens, pos):
        """tokens [B, T] at positions pos..pos+T-1; writes the cache; returns the next tokens [B]."""
        B, T = tokens.shape
        x = emb[tokens]
        for i, w in enumerate(layers):
            with torch.profiler.record_function(f"layer{i}.attn"):
                q, k, v = F.linear(rms(x, w["n1"]), w["qkv"]).split([H * hd, KV * hd, KV * hd], -1)
                q = q.view(B, T, H, hd).transpose(1, 2)
                cache_k[i][:, :, pos:pos + T] = k.view(B, T, KV, hd).transpose(1, 2)
                cache_v[i][:, :, pos:pos + T] = v.view(B, T, KV, hd).transpose(1, 2)
                y = attend(q, cache_k[i][:, :, :pos + T], cache_v[i][:, :, :pos + T], causal=T > 1)
                x = x + F.linear(y.transpose(1, 2).reshape(B, T, d), w["o"])
            with torch.profiler.record_function(f"layer{i}.mlp"):
                g, u = F.linear(rms(x, w["n2"]), w["up"]).chunk(2, -1)
                x = x + F.linear(F.silu(g) * u, w["down"])
        with torch.profiler.record_function("lm_head"):
            logits = F.linear(rms(x[:, -1], norm), head).float()
            return torch.argmax(logits, -1)

    return forward


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="qwen2.5-7b")
    p.add_argument("--batch", type=int, nargs="+", default=[16, 64, 256], help="sequences decoded together (one recording each)")
    p.add_argument("--prompt", type=int, default=512, help="prompt tokens (prefilled before the decode steps)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--profiled", type=int, default=20)
    p.add_argument("-o", "--out", required=True, help="parent directory: one <preset>-decode-b<B>/ recording per batch size")
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--sample-ms", type=float, default=5.0)
    p.add_argument("--idle-s", type=float, default=1.0)
    p.add_argument("--nvml-module", default="pynvml", help=argparse.SUPPRESS)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    import torch
    from dvfs_sim.record import Recorder
    dev = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    for b in a.batch:
        a.batch_size, a.max_len = b, a.prompt + a.warmup + a.profiled + 1
        forward = build(torch, a, dev)
        out = os.path.join(a.out, f"{a.preset}-decode-b{b}")
        with torch.no_grad(), Recorder(out, warmup=a.warmup, profiled=a.profiled, gpu=a.gpu, sample_ms=a.sample_ms,
                                       idle_s=a.idle_s, nvml_module=a.nvml_module,
                                       command="python3 " + " ".join(sys.argv)) as rec:
            tok = forward(torch.randint(0, PRESETS[a.preset][5], (b, a.prompt), device=dev), 0)
            pos = a.prompt
            while not rec.done:
                with torch.profiler.record_function("decode"):
                    tok = forward(tok[:, None], pos)
                pos += 1
                rec.step()
        with open(os.path.join(out, "generation.json"), "w") as f:
            import json
            L, d, H, KV, ffn, V = PRESETS[a.preset]
            json.dump({"preset": a.preset, "layers": L, "d": d, "heads": H, "kv_heads": KV, "ffn": ffn, "vocab": V,
                       "batch": b, "prompt": a.prompt, "warmup_steps": a.warmup, "profiled_steps": a.profiled,
                       "context_at_first_profiled_step": a.prompt + a.warmup}, f, indent=1)
        del forward
        if dev.startswith("cuda"):
            torch.cuda.empty_cache()
        print(out)


if __name__ == "__main__":
    main()
