#!/usr/bin/env python3
"""Kernel pairs on two CUDA streams, alone and together (issue 19's contention calibration data).

    PYTHONPATH=python python3 traces/recorder/record_stream_pairs.py --out OUT [--filter RE]

For every pair (A, B) three kernel loops are recorded, each as one recording (trace.json.gz with record_shapes,
telemetry.csv, run.json with `micro.steady`, the unprofiled steady window's counter energy) like the power suite:
  <pair>-a   A alone, launched on side stream 1;
  <pair>-b   B alone, launched on side stream 2;
  <pair>-ab  A on stream 1 and B on stream 2 in the same loop, sized so that each stream has about the same GPU
             time per call when run alone, so that they overlap for most of the window.
The traces hold each kernel's start and end on its stream: how much each slows the other, and the power together
against the two alone, is what an overlap-aware replay must reproduce. Which pairs are fit and which held out is
fixed in models/calibration/stream-pairs-split.json, written before recording. NVML is only read.
"""
import argparse
import os
import re
import sys
import time
import traceback

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_power_suite as suite  # noqa: E402  (the builders and the loop recorder)

DEV = "cuda"


def per_call_s(call, n=20):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n


def on_stream(stream, call, times):
    def run():
        with torch.cuda.stream(stream):
            for _ in range(times):
                call()
    return run


def pair(a_name, b_name, target_s=0.004):
    """Builders for <pair>-a, -b, -ab from two power-suite loops."""
    def make(which):
        def build():
            s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
            ca, _ = suite.MICRO[a_name][0]()
            cb, _ = suite.MICRO[b_name][0]()
            ta, tb = per_call_s(ca), per_call_s(cb)
            na, nb = max(1, round(target_s / ta)), max(1, round(target_s / tb))
            ra, rb = on_stream(s1, ca, na), on_stream(s2, cb, nb)
            info = {"a": a_name, "b": b_name, "a_calls": na, "b_calls": nb, "a_call_s_alone": ta, "b_call_s_alone": tb}
            if which == "a":
                return ra, info
            if which == "b":
                return rb, info

            def both():
                ra()
                rb()
            return both, info
        return build, {"kind": "stream-pair", "part": which, "a": a_name, "b": b_name}
    return make


PAIRS = {
    "gemm4096+add": ("gemm-bf16-4096", "add-bf16"),
    "gemm4096+copy": ("gemm-bf16-4096", "copy-d2d-1g"),
    "attn2048+sum": ("attn-fwd-s2048", "sum-fp32"),
    "add+copy": ("add-bf16", "copy-d2d-1g"),
    "gemm-m16+relu": ("gemm-bf16-m16", "relu-bf16"),
    "gemm8192+layernorm": ("gemm-bf16-8192", "layernorm-bf16"),
    "conv256+softmax": ("conv-3x3-256c-14-b128", "softmax-bf16"),
    "gemm-fp8+mul": ("gemm-fp8-4096", "mul-fp32"),
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--filter", default=None, help="regular expression on the pair names")
    p.add_argument("--steady-s", type=float, default=2.0)
    p.add_argument("--gpu", type=int, default=0)
    a = p.parse_args()
    failed = []
    for name, (x, y) in PAIRS.items():
        if a.filter and not re.search(a.filter, name):
            continue
        make = pair(x, y)
        for part in ("a", "b", "ab"):
            loop = f"{name}-{part}"
            suite.MICRO[loop] = make(part)
            try:
                suite.record_micro(loop, a.out, a.steady_s, a.gpu)
            except Exception as e:  # one failing pair must not lose the others
                failed.append(loop)
                print(f"{loop}: FAILED {type(e).__name__}: {e}", flush=True)
                traceback.print_exc()
            torch.cuda.empty_cache()
    print("failed:", failed, flush=True)


if __name__ == "__main__":
    main()
