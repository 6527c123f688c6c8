#!/usr/bin/env python3
"""Writes a large Kineto trace for the importer's benchmark (bench/streaming_import.sh): the device activities and
annotation ranges and launches of the default scenario's recording (traces/recordings/h200-gpt3xl, GPT-3 XL on an H200) repeated,
each repetition shifted past the previous one with its steps renamed, until the file reaches --mb megabytes. Every
event is a real recorded event (kernel names, args, launch shapes); only the time stamps and step names change.

    bench/make_big_trace.py OUT.json [--mb 200] [--dense]

--dense: kernels only, at the density of the trace issue 18 was measured on (836k kernels in 200 MB, ~240 bytes per
kernel): each of the recording's kernels with its name cut to 32 characters and only the args the importer reads
for a kernel without operator (device, stream, correlation, grid, block), and the device-side annotation ranges
(no launches, so no host step ranges). The bytes per
kernel, not the megabytes, set what the importer holds.
"""
import argparse
import gzip
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEEP = {"kernel", "gpu_memcpy", "gpu_memset", "user_annotation", "gpu_user_annotation", "cuda_runtime", "cuda_driver"}


def dense_event(e):
    if e["cat"] != "kernel":
        return e
    args = {k: e["args"][k] for k in ("device", "stream", "correlation", "grid", "block") if k in e["args"]}
    return {"ph": "X", "cat": "kernel", "name": e["name"][:32], "pid": e["pid"], "tid": e["tid"], "ts": e["ts"],
            "dur": e["dur"], "args": args}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--mb", type=float, default=200)
    p.add_argument("--dense", action="store_true", help="kernels only, ~240 bytes each (see the docstring)")
    a = p.parse_args()
    with gzip.open(os.path.join(ROOT, "traces/recordings/h200-gpt3xl/trace.json.gz"), "rt") as f:
        doc = json.load(f)
    events = [e for e in doc["traceEvents"] if e.get("cat") in KEEP and e.get("ph") == "X"]
    if a.dense:
        events = [dense_event(e) for e in events if e["cat"] in ("kernel", "gpu_user_annotation")]
    t0 = min(e["ts"] for e in events)
    span = max(e["ts"] + e["dur"] for e in events) - t0 + 1000.0
    steps = sorted({e["name"] for e in events if e["name"].startswith("step")}, key=lambda s: int(s[4:]))
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    limit = a.mb * 1e6
    kernels = rep = 0
    with open(a.out, "w") as f:
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        first = True
        while f.tell() < limit:
            for e in events:
                e2 = dict(e)
                e2["ts"] = round(e["ts"] + rep * span, 3)
                if "correlation" in e.get("args", {}):  # launches stay matched to their kernels
                    e2["args"] = dict(e["args"], correlation=e["args"]["correlation"] + rep * 10_000_000)
                if e["name"] in steps:
                    e2["name"] = "step%d" % (rep * len(steps) + steps.index(e["name"]))
                f.write(("" if first else ",\n") + json.dumps(e2))
                first = False
                kernels += e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset")
            rep += 1
        f.write("\n]}\n")
    print(f"{a.out}: {os.path.getsize(a.out) / 1e6:.1f} MB, {rep} repetitions, {kernels} device activities")


if __name__ == "__main__":
    main()
