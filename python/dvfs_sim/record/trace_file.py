"""The exported Kineto trace as a recording needs it: one host-side `step<i>` range per profiled step, checked
against the step bounds of run.json, gzipped.

The recorder does not open a range over each step while profiling: its step hook runs inside the optimizer's
own `Optimizer.step#...` range (or a module's forward), so a range opened there and closed at the next step
would not nest, and Kineto then ties the GPU kernels to the wrong user range (issue 23: six `step<i>` ranges on
the host, one device-side `step0`, and a trace the importer read as one step). Instead it marks each step
bound with a zero-length range `dvfs_sim.step_bound#<i>` (taken with the GPU synchronised, so it nests
wherever it is) and, after the export, writes `step<i>` from bound i to bound i+1 in the trace's own clock
(from the epoch-ns bounds and `baseTimeNanoseconds` when the markers are missing). The importer then assigns
each kernel to the step whose host range holds its launch."""
import bisect
import gzip
import json
import os
import re

MARKER = "dvfs_sim.step_bound#"
_STEP_NAME = re.compile(r"^(step\s*#?\d+|ProfilerStep#\d+|iteration\s*#?\d+)$")  # traces/classification.json "steps"
_DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
_LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


class TraceMismatch(ValueError):
    """The written trace and run.json disagree; the message is one line."""


def _events(doc):
    return doc["traceEvents"] if isinstance(doc, dict) else doc  # PyTorch without Kineto writes a bare list


def markers(events):
    """{i: marker event} of the step-bound markers in the trace."""
    out = {}
    for e in events:
        name = e.get("name")
        if isinstance(name, str) and name.startswith(MARKER) and e.get("ph") == "X":
            try:
                out[int(name[len(MARKER):])] = e
            except ValueError:
                pass
    return out


def add_step_ranges(doc, bounds, raw_path):
    """Appends `step<i>` host ranges for the len(bounds) steps: from the markers when all n+1 are there, else
    from the epoch-ns bounds. Returns how they were placed ("markers" or "bounds")."""
    events = _events(doc)
    n = len(bounds)
    m = markers(events)
    if all(i in m for i in range(n + 1)):
        for i in range(n):
            a, b = m[i], m[i + 1]
            events.append({"ph": "X", "cat": "user_annotation", "name": f"step{i}", "pid": a.get("pid", 0),
                           "tid": a.get("tid", 0), "ts": a["ts"], "dur": b["ts"] - a["ts"],
                           "args": {"added_by": "dvfs_sim.record between its step-bound markers"}})
        return "markers"
    if not isinstance(doc, dict) or "baseTimeNanoseconds" not in doc:
        raise TraceMismatch(f"{raw_path}: {n + 1 - len(m)} of the {n + 1} step-bound markers are missing and the "
                            "trace has no baseTimeNanoseconds: cannot place the step ranges")
    base = doc["baseTimeNanoseconds"]
    pid = next((e.get("pid") for e in events if e.get("cat") == "cpu_op"), os.getpid())
    for i, b in enumerate(bounds):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"step{i}", "pid": pid, "tid": 0,
                       "ts": (b["t0_ns"] - base) / 1000.0, "dur": (b["t1_ns"] - b["t0_ns"]) / 1000.0,
                       "args": {"added_by": "dvfs_sim.record from the step bounds"}})
    return "bounds"


def check_steps(doc, steps, name="trace"):
    """What the importer will see: host `step<i>` ranges, and the device activity launched inside each. Raises
    TraceMismatch (one line) when they disagree with the `steps` steps of run.json; returns
    {"kernels_per_step": [...], "kernels_outside": k, "device": bool}."""
    events = _events(doc)
    ranges = {}
    for e in events:
        nm = e.get("name", "")
        if e.get("ph") != "X" or not isinstance(nm, str):
            continue
        if e.get("cat") == "gpu_user_annotation" and _STEP_NAME.match(nm):
            raise TraceMismatch(f"{name}: holds a device-side step range {nm!r} that the importer would take instead "
                                f"of the {steps} recorded steps (a profiler or a script's own step ranges)")
        if e.get("cat") in ("user_annotation", None) and re.fullmatch(r"step\d+", nm):
            ranges.setdefault(int(nm[4:]), []).append(e)
    if sorted(ranges) != list(range(steps)) or any(len(v) != 1 for v in ranges.values()):
        dup = sorted(i for i, v in ranges.items() if len(v) > 1)
        raise TraceMismatch(f"{name}: expected one host range step0..step{steps - 1} (run.json lists {steps} steps), "
                            f"found {len(ranges)} distinct" + (f", step{dup[0]} {len(ranges[dup[0]])} times" if dup else ""))
    spans = [(ranges[i][0]["ts"], ranges[i][0]["ts"] + ranges[i][0]["dur"]) for i in range(steps)]
    for i in range(1, steps):
        if spans[i][0] < spans[i - 1][1] - 1e-3 or spans[i][1] <= spans[i][0]:
            raise TraceMismatch(f"{name}: step{i} does not follow step{i - 1} (host ranges overlap or are empty)")
    launch = {}
    for e in events:
        if e.get("cat") in _LAUNCH_CATS and isinstance(e.get("args"), dict) and "correlation" in e["args"]:
            launch[e["args"]["correlation"]] = e["ts"]
    starts = [a for a, _ in spans]
    per_step, outside, device = [0] * steps, 0, False
    for e in events:
        if e.get("cat") not in _DEVICE_CATS:
            continue
        device = True
        t = launch.get((e.get("args") or {}).get("correlation"))
        i = bisect.bisect_right(starts, t) - 1 if t is not None else -1
        if i < 0 or t >= spans[i][1]:
            outside += 1
        else:
            per_step[i] += 1
    if device:
        empty = [i for i, k in enumerate(per_step) if k == 0]
        if empty:
            raise TraceMismatch(f"{name}: step{empty[0]} launched no GPU work ({len(empty)} of {steps} steps empty): "
                                "the steps marked are not the GPU's work (try --step-on)")
    return {"kernels_per_step": per_step, "kernels_outside": outside, "device": device}


def finish_trace(raw_path, bounds, log=None):
    """Adds the step ranges, gzips raw_path to raw_path + '.gz' (removing raw_path) and checks it against
    the bounds. Returns check_steps' summary plus "placed_by"; raises TraceMismatch after writing."""
    with open(raw_path, "rb") as f:
        doc = json.loads(f.read())
    placed = add_step_ranges(doc, bounds, raw_path)
    if placed == "bounds" and log:
        log("the profiler dropped the step-bound markers; the step ranges are placed from the epoch-ns bounds")
    data = json.dumps(doc).encode()
    with gzip.open(raw_path + ".gz", "wb", compresslevel=6) as g:
        g.write(data)
    os.unlink(raw_path)
    summary = check_steps(doc, len(bounds), raw_path + ".gz")
    summary["placed_by"] = placed
    return summary
