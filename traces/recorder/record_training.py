#!/usr/bin/env python3
"""Records a GPT- or Llama-shaped training run on one NVIDIA GPU in the layout `dvfs-sim` reads
(docs/recording-format.md): trace.json.gz (Kineto), telemetry.csv (NVML samples), run.json.

It only *reads* the card (NVML get calls): it never changes clocks, power limits or any setting, so
what it records is the GPU as found, its own DVFS under the power cap included.

    python3 traces/recorder/record_training.py --out DIR/llama1b --llama --layers 16 --d 2048 \
        --heads 16 --kv-heads 8 --ffn 5632 --seq 2048 --batch 8

Needs PyTorch with CUDA and nvidia-ml-py (pynvml). Sequence of phases, each with its counter energy:
idle (2 s), warm-up, timed steps (GPU-synchronised bounds, no profiler), idle (1.5 s), profiled steps
(PyTorch profiler, a host range `step<i>` per step, `forward`/`layer<k>.attn`/`layer<k>.mlp`/`lm_head`/
`backward`/`optimizer` inside), idle (2 s). An NVML sampler runs in its own process (no GIL contention
with the training loop) from the first idle phase to the last.
"""
import argparse
import gzip
import json
import math
import os
import shutil
import sys
import time

# The sampler, the device read-outs and the model live in the dvfs_sim package (python/): one copy,
# shared with `python3 -m dvfs_sim.record`. They need no compiled core.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from dvfs_sim.examples.train_gpt import build_model, train_step  # noqa: E402
from dvfs_sim.record.nvml import Sampler, device_info  # noqa: E402


def log(msg):
    print(f"[record {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--d", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=None)
    p.add_argument("--ffn", type=int, default=None)
    p.add_argument("--vocab", type=int, default=50304)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--llama", action="store_true", help="RMSNorm, SwiGLU, no biases, grouped-query attention")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--timed", type=int, default=12)
    p.add_argument("--profiled", type=int, default=6)
    p.add_argument("--sample-ms", type=float, default=3.0)
    a = p.parse_args()
    a.kv_heads = a.kv_heads or a.heads
    a.ffn = a.ffn or 4 * a.d

    import torch
    import pynvml as nv
    os.makedirs(a.out, exist_ok=True)
    torch.cuda.set_device(a.device)
    nv.nvmlInit()
    h = nv.nvmlDeviceGetHandleByIndex(a.device)
    energy = lambda: nv.nvmlDeviceGetTotalEnergyConsumption(h)  # noqa: E731  (mJ since driver load)
    dev = device_info(nv, h, torch, a.device)

    # A separate process samples NVML (no GIL contention with the training loop).
    sampler = Sampler(os.path.join(a.out, "telemetry.csv"), a.device, a.sample_ms / 1e3)
    sampler.start()
    log("sampler running")
    phases = []

    def phase(name, fn):
        torch.cuda.synchronize()
        t0, e0 = time.time_ns(), energy()
        out = fn()
        torch.cuda.synchronize()
        t1, e1 = time.time_ns(), energy()
        phases.append({"name": name, "t0_ns": t0, "t1_ns": t1, "energy_mj": e1 - e0})
        log(f"{name}: {(t1 - t0) / 1e9:.2f} s, {(e1 - e0) / 1e3:.1f} J")
        return out

    torch.manual_seed(0)
    model = build_model(torch, a).cuda()
    params = sum(q.numel() for q in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    data = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device="cuda")
    idx, tgt = data[:, :-1].contiguous(), data[:, 1:].contiguous()

    def step():
        train_step(torch, model, opt, idx, tgt)

    def timed_steps(n, label_fn=None):
        bounds = []
        for i in range(n):
            torch.cuda.synchronize()
            t0, e0 = time.time_ns(), energy()
            if label_fn:
                with torch.profiler.record_function(label_fn(i)):
                    step()
            else:
                step()
            torch.cuda.synchronize()
            bounds.append({"t0_ns": t0, "t1_ns": time.time_ns(), "energy_mj": energy() - e0})
        return bounds

    phase("idle:start", lambda: time.sleep(2.0))
    phase("train:warmup", lambda: timed_steps(a.warmup))
    per_step = phase("train:timed", lambda: timed_steps(a.timed))
    phase("idle:after_timed", lambda: time.sleep(1.5))
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        profiled = phase("train:profiled", lambda: timed_steps(a.profiled, lambda i: f"step{i}"))
    phase("idle:end", lambda: time.sleep(2.0))
    sampler.stop()
    log("sampler stopped; exporting the trace")

    raw = os.path.join(a.out, "trace.json")
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.unlink(raw)

    timed_s = (per_step[-1]["t1_ns"] - per_step[0]["t0_ns"]) / 1e9
    timed_j = sum(s["energy_mj"] for s in per_step) / 1e3
    run = {
        "cfg": {"layers": a.layers, "d": a.d, "nh": a.heads, "nkv": a.kv_heads, "ffn": a.ffn, "vocab": a.vocab,
                "seq": a.seq, "batch": a.batch, "llama": a.llama},
        "params": params, "steps_timed": a.timed, "timed_s": timed_s, "s_per_step": timed_s / a.timed,
        "energy_j": timed_j, "j_per_step": timed_j / a.timed, "per_step": per_step,
        "tokens_per_step": a.batch * a.seq, "peak_mem": torch.cuda.max_memory_allocated(),
        "profiled_steps": profiled,
        "profiled_energy_j": sum(s["energy_mj"] for s in profiled) / 1e3,
        "profiled_s": (profiled[-1]["t1_ns"] - profiled[0]["t0_ns"]) / 1e9,
        "recorder": "traces/recorder/record_training.py " + " ".join(sys.argv[1:]),
    }
    with open(os.path.join(a.out, "run.json"), "w") as f:
        json.dump({"device": dev, "phases": phases, "run": run}, f, indent=1)
    nv.nvmlShutdown()
    print(json.dumps({"out": a.out, "params": params, "s_per_step": run["s_per_step"], "j_per_step": run["j_per_step"],
                      "mean_w": timed_j / timed_s if timed_s else math.nan}))


if __name__ == "__main__":
    main()
