"""The exported Kineto trace as a recording needs it: one `step<i>` range per profiled step, gzipped.

The recorder's step ranges are record_function ranges opened and closed by the optimizer-step hook, so they
do not nest with the optimizer's own range. Should a profiler drop them, the ranges are written into the
trace from the GPU-synchronised step bounds (epoch ns; the trace's origin is baseTimeNanoseconds)."""
import gzip
import json
import os
import re


def missing_step_ranges(data, steps):
    """Indices of the profiled steps whose `step<i>` range is not in the exported trace (its bytes)."""
    present = {int(m.group(1)) for m in re.finditer(rb'"name"\s*:\s*"step(\d+)"', data)}
    return [i for i in range(steps) if i not in present]


def add_step_ranges(doc, bounds, indices, raw_path):
    """Adds host-side `step<i>` ranges for `indices` from `bounds` ({t0_ns, t1_ns} per step) to the trace doc."""
    if not isinstance(doc, dict) or "baseTimeNanoseconds" not in doc:
        raise ValueError(f"{raw_path}: the profiler wrote no baseTimeNanoseconds: cannot place the step ranges")
    base = doc["baseTimeNanoseconds"]
    for i in indices:
        b = bounds[i]
        doc["traceEvents"].append({"ph": "X", "cat": "user_annotation", "name": f"step{i}", "pid": os.getpid(),
                                   "tid": 0, "ts": (b["t0_ns"] - base) / 1000.0, "dur": (b["t1_ns"] - b["t0_ns"]) / 1000.0,
                                   "args": {"added_by": "dvfs_sim.record from the step bounds"}})


def finish_trace(raw_path, bounds, log=None):
    """Makes sure every profiled step has its range, then gzips raw_path to raw_path + '.gz' and removes it.
    The trace is read once (they run to hundreds of MB)."""
    with open(raw_path, "rb") as f:
        data = f.read()
    missing = missing_step_ranges(data, len(bounds))
    if missing:
        if log:
            log(f"the profiler dropped {len(missing)} step range(s); adding them from the step bounds")
        doc = json.loads(data)
        add_step_ranges(doc, bounds, missing, raw_path)
        data = json.dumps(doc).encode()
    with gzip.open(raw_path + ".gz", "wb", compresslevel=6) as g:
        g.write(data)
    os.unlink(raw_path)
