"""Traces of one workload written with the profiler options users turn on (not dvfs_sim.record's).

A third-party trace is made by the user's own `torch.profiler` call, often with options dvfs_sim.record leaves off:
`with_stack` (python_function events), `profile_memory` ([memory] instant events), `with_flops`, `with_modules`,
no `record_shapes` (PyTorch's default), a `schedule` whose cycles `tensorboard_trace_handler` writes to one gzipped
file each, CUDA-graph replays, device-only profiling, CUDA sync events and torch.compile's graph trees. Each variant
profiles four steps of each workload in one process, one variant after another, so their imports should agree with
each other (device activities and their busy time) within run-to-run noise; the comparison is made on this side (`traces/recorder/compare_profiler_options.py`). NVML is not touched; no card setting is
changed.

Usage (GPU machine): python3 record_profiler_options.py OUT_DIR [VARIANTS [WORKLOADS]]   (comma lists)
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
STEPS = 4  # profiled steps per variant


def conv_net(w=64):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
    return nn.Sequential(block(3, w), block(w, w), nn.MaxPool2d(2), block(w, 2 * w), block(2 * w, 2 * w),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * w, 10))


class TinyLM(nn.Module):
    def __init__(self, vocab=8192, d=512, layers=4, heads=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, batch_first=True, norm_first=True, activation="gelu")
        self.body = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d, vocab)

    def forward(self, x):
        return self.head(self.body(self.emb(x), is_causal=True,
                                   mask=nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device)))


def cnn_workload():
    model = conv_net().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(128, 3, 32, 32, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (128,), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def lm_workload():
    model = TinyLM().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, 8192, (16, 256), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), x.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def graph_workload():
    """Inference of the LM captured once as a CUDA graph and replayed: kernels launched by cudaGraphLaunch."""
    model = TinyLM().cuda().eval().to(torch.bfloat16)
    x = torch.randint(0, 8192, (8, 128), device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        model(x)

    def step():
        for _ in range(4):
            g.replay()
    return step


def compiled_workload():
    """The LM's inference under torch.compile(mode="reduce-overhead"): Triton kernels replayed from CUDA graph trees."""
    model = TinyLM().cuda().eval().to(torch.bfloat16)
    compiled = torch.compile(model, mode="reduce-overhead")
    x = torch.randint(0, 8192, (8, 128), device="cuda")

    def step():
        with torch.no_grad():
            for _ in range(4):
                compiled(x)
    for _ in range(3):  # compile and record the graphs before any variant profiles
        step()
    return step


def sync_events_config():
    from torch._C._profiler import _ExperimentalConfig
    return _ExperimentalConfig(enable_cuda_sync_events=True)


VARIANTS = {  # name -> profile() keyword arguments (activities CPU + CUDA unless given)
    "plain": {},
    "shapes": {"record_shapes": True},
    "all-options": {"record_shapes": True, "with_stack": True, "profile_memory": True, "with_flops": True,
                    "with_modules": True},
    # second call (forty-third session): what HTA and device-only profiling write
    "cuda-only": {"activities": [ProfilerActivity.CUDA]},
    "sync-events": {"experimental_config": "sync_events"},
}


def run_variant(out, workload, step, name, kwargs):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    kwargs = dict(kwargs)
    if kwargs.get("experimental_config") == "sync_events":
        kwargs["experimental_config"] = sync_events_config()
    kwargs.setdefault("activities", ACTIVITIES)
    with profile(**kwargs) as prof:
        for _ in range(STEPS):
            step()
            prof.step()
        torch.cuda.synchronize()
    path = os.path.join(out, f"{workload}-{name}.json")
    prof.export_chrome_trace(path)
    return path


def run_scheduled(out, workload, step):
    """schedule(wait=1, warmup=1, active=2, repeat=2) with tensorboard_trace_handler(use_gzip=True): two files."""
    d = os.path.join(out, f"{workload}-scheduled")
    os.makedirs(d, exist_ok=True)
    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(activities=ACTIVITIES, schedule=sched, on_trace_ready=tensorboard_trace_handler(d, use_gzip=True)) as p:
        for _ in range(9):
            step()
            torch.cuda.synchronize()
            p.step()
    return sorted(os.listdir(d))


def main():
    out = sys.argv[1]
    # optional: which variants and workloads (comma lists; the first call ran plain, shapes, all-options on cnn, lm, graph
    # with the schedules; the second cuda-only, sync-events on cnn, lm, compiled)
    variants = sys.argv[2].split(",") if len(sys.argv) > 2 else ["plain", "shapes", "all-options"]
    workloads = sys.argv[3].split(",") if len(sys.argv) > 3 else ["cnn", "lm", "graph"]
    os.makedirs(out, exist_ok=True)
    log = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
           "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": {}}
    makers = {"cnn": cnn_workload, "lm": lm_workload, "graph": graph_workload, "compiled": compiled_workload}
    unknown = [n for n in variants if n not in VARIANTS] + [w for w in workloads if w not in makers]
    if unknown:
        sys.exit(f"unknown variant or workload {unknown}: variants {sorted(VARIANTS)}, workloads {sorted(makers)}")
    for workload in workloads:
        step = makers[workload]()
        for name in variants:
            kwargs = VARIANTS[name]
            t = time.time()
            path = run_variant(out, workload, step, name, kwargs)
            shown = {k: v if isinstance(v, (bool, int, float, str)) else str(v) for k, v in kwargs.items()}  # JSON as before
            log["files"][os.path.basename(path)] = {"kwargs": shown,
                                                    "bytes": os.path.getsize(path), "wall_s": round(time.time() - t, 2)}
            print(workload, name, os.path.getsize(path), flush=True)
        if workload in ("cnn", "lm") and len(sys.argv) <= 2:
            log["files"][f"{workload}-scheduled"] = run_scheduled(out, workload, step)
            print(workload, "scheduled", log["files"][f"{workload}-scheduled"], flush=True)
        del step
        torch.cuda.empty_cache()
    log["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with open(os.path.join(out, "record.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
