"""Per-phase time and energy of a recorded job (issue 20), from a recording directory written with phase
markers: lifecycle.json (phases), telemetry.csv (NVML energy counter), host.csv (RAPL where readable, /proc CPU
time, disk and network bytes, process-tree I/O) and run.json (the recorder's idle windows).

    from dvfs_sim.lifecycle_analysis import analyse
    a = analyse("traces/recordings/h200-lifecycle/cnn-io")
    a["top"]      # one row per top-level phase (what a lifecycle scenario's phases are)
    a["by_kind"]  # exclusive time per kind: each instant goes to the innermost phase open then

Every figure is a difference of cumulative counters interpolated linearly at the phase bounds. The GPU energy
counter (NVML, read every 5 ms) changes only about every 100 ms: it is interpolated between the samples where
it changed, so each increment is spread evenly over the interval since the previous change (the energy of that
interval). A phase bound inside an interval gets the interval's mean power, not its own: `*_unc` gives the
worst case of that (`Counter.bound_error`), for the GPU with its power never below the lowest interval mean of
the recording. Phases much shorter than 100 ms (single DataLoader waits) get their share of the slope, not a
measurement of their own; sums over many of them are sound. The same holds for CPU ticks, sampled every 50 ms.
"""
import bisect
import csv
import json
import os

GPU_COLUMN = "energy_mj"


def _read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    cols = {h: [] for h in head}
    for r in body:
        if len(r) != len(head) or any(v == "" for v in r):
            continue
        for h, v in zip(head, r):
            cols[h].append(float(v))
    return cols


class Counter:
    """A cumulative counter sampled at times t (ns); value(t) interpolates, clamped at the ends."""

    def __init__(self, t, v, wrap=None):
        self.t, self.v = list(t), list(v)
        if wrap:  # RAPL counters wrap at max_energy_range_uj
            off = 0.0
            out = [self.v[0]]
            for a, b in zip(self.v, self.v[1:]):
                if b < a:
                    off += wrap
                out.append(b + off)
            self.v = out

    def value(self, t):
        i = bisect.bisect_left(self.t, t)
        if i <= 0:
            return self.v[0]
        if i >= len(self.t):
            return self.v[-1]
        t0, t1 = self.t[i - 1], self.t[i]
        return self.v[i - 1] + (self.v[i] - self.v[i - 1]) * (t - t0) / (t1 - t0) if t1 > t0 else self.v[i]

    def delta(self, t0, t1):
        return self.value(t1) - self.value(t0)

    @classmethod
    def from_updates(cls, t, v):
        """A counter that the device updates more rarely than it is read: only the first sample of each new
        value is kept (the update lies in the read interval before it), so interpolation spreads an increment
        over the interval since the previous update."""
        keep = [i for i in range(len(v)) if i == 0 or v[i] != v[i - 1]]
        return cls([t[i] for i in keep], [v[i] for i in keep])

    def bound_error(self, t0, t1, floor_rate=0.0):
        """Worst-case error of delta(t0, t1) from the interpolation: an update interval (ta, tb] that a bound
        cuts holds an increment E whose split is unknown; with the rate never below floor_rate, the part inside
        the phase lies between floor_rate x its time inside and E - floor_rate x its time outside, so the
        error is at most max(x, 1 - x) x (E - floor_rate x (tb - ta)) for the share x inside."""
        err, seen = 0.0, set()
        for b in (t0, t1):
            i = bisect.bisect_left(self.t, b)
            if i <= 0 or i >= len(self.t) or self.t[i] == b or i in seen:
                continue
            seen.add(i)
            ta, tb = self.t[i - 1], self.t[i]
            inside = (min(tb, t1) - max(ta, t0)) / (tb - ta)
            excess = max(0.0, self.v[i] - self.v[i - 1] - floor_rate * (tb - ta))
            err += max(inside, 1.0 - inside) * excess
        return err

    def min_rate(self, min_dt):
        """The lowest mean rate over the intervals between kept samples at least min_dt long."""
        r = [(b - a) / (tb - ta) for a, b, ta, tb in zip(self.v, self.v[1:], self.t, self.t[1:]) if tb - ta >= min_dt]
        return min(r) if r else 0.0


def load(rec_dir):
    tel = _read_csv(os.path.join(rec_dir, "telemetry.csv"))
    host = _read_csv(os.path.join(rec_dir, "host.csv"))
    with open(os.path.join(rec_dir, "host.json")) as f:
        meta = json.load(f)
    with open(os.path.join(rec_dir, "lifecycle.json")) as f:
        life = json.load(f)
    with open(os.path.join(rec_dir, "run.json")) as f:
        run = json.load(f)
    tick = 1.0 / meta.get("clk_tck", 100)
    c = {"gpu_j": Counter.from_updates(tel["t_ns"], [v / 1e3 for v in tel[GPU_COLUMN]])}
    ht = host["t_ns"]
    busy = [u + s + o for u, s, o in zip(host["cpu_user_ticks"], host["cpu_system_ticks"], host["cpu_other_ticks"])]
    c["cpu_busy_core_s"] = Counter(ht, [b * tick for b in busy])
    c["cpu_iowait_core_s"] = Counter(ht, [b * tick for b in host["cpu_iowait_ticks"]])
    c["proc_cpu_core_s"] = Counter(ht, [b * tick for b in host["proc_cpu_ticks"]])
    if "main_cpu_ticks" in host:
        c["main_cpu_core_s"] = Counter(ht, [b * tick for b in host["main_cpu_ticks"]])
    if "sampler_cpu_ticks" in host:  # recorded from session 8 on; not yet used by job_cpu_core_s
        c["sampler_cpu_core_s"] = Counter(ht, [b * tick for b in host["sampler_cpu_ticks"]])
    for k in ("disk_read_bytes", "disk_write_bytes", "net_rx_bytes", "net_tx_bytes", "proc_read_bytes", "proc_write_bytes",
              "proc_rchar", "proc_wchar"):
        c[k] = Counter(ht, host[k])
    rapl = []
    for d in meta.get("rapl_domains", []):
        col = d["column"]
        if col in host:
            c[col[:-3] + "_j"] = Counter(ht, [v / 1e6 for v in host[col]], wrap=(d.get("max_energy_range_uj") or 0) / 1e6 or None)
            rapl.append(col[:-3] + "_j")
    floors = {"gpu_j": c["gpu_j"].min_rate(50e6)}  # per ns: the GPU's lowest 100 ms mean power in the recording
    return {"counters": c, "meta": meta, "life": life, "run": run, "rapl": rapl, "floors": floors,
            "span": (max(tel["t_ns"][0], ht[0]), min(tel["t_ns"][-1], ht[-1]))}


UNCERTAIN = ("gpu_j", "cpu_busy_core_s", "main_cpu_core_s")


def _figures(c, rapl, t0, t1, floors=None):
    out = {"time_s": (t1 - t0) / 1e9}
    for k, ctr in c.items():
        out[k] = ctr.delta(t0, t1)
        if k in UNCERTAIN:
            out[k + "_unc"] = ctr.bound_error(t0, t1, (floors or {}).get(k, 0.0))
    if rapl:
        out["cpu_j"] = sum(out[k] for k in rapl if "dram" not in k and "core" not in k.split("_")[-2:])
        out["dram_j"] = sum(out[k] for k in rapl if k.endswith("dram_j"))
    return out


def profiler_window(d):
    """(t0, t1) of the recorder's Kineto window: from the profiler's start (end of train:until_profiled) to the
    first phase mark after the last profiled step (the profiler's stop and event processing); None without one.
    Recorder overhead, not the job's: reported as its own kind, and left out of the "net" figures."""
    rp = {p["name"]: p for p in d["run"].get("phases", [])}
    if "train:until_profiled" not in rp or "train:profiled" not in rp:
        return None
    t0, last = rp["train:until_profiled"]["t1_ns"], rp["train:profiled"]["t1_ns"]
    after = [p["t0_ns"] for p in d["life"]["phases"] if p["t0_ns"] >= last]
    return (t0, min(after)) if after else (t0, last)


def _phases(d):
    ph = [dict(p) for p in d["life"]["phases"]]
    for p in d["run"].get("phases", []):  # the recorder's own idle windows
        if p["name"].startswith("idle:"):
            ph.append({"name": p["name"], "kind": "idle", "t0_ns": p["t0_ns"], "t1_ns": p["t1_ns"], "depth": 0})
    w = profiler_window(d)
    if w:
        ph.append({"name": "recorder: Kineto window", "kind": "profiler", "t0_ns": w[0], "t1_ns": w[1], "depth": 99})
    return ph


def exclusive_segments(phases, span):
    """[(t0, t1, kind, top_name)]: the job cut at every phase bound; each piece goes to the innermost open phase
    (a data wait inside a validation counts as validation: its loader is part of it); uncovered time is "other"."""
    bounds = sorted({span[0], span[1]} | {p["t0_ns"] for p in phases} | {p["t1_ns"] for p in phases})
    bounds = [b for b in bounds if span[0] <= b <= span[1]]
    order = sorted(phases, key=lambda p: p["t0_ns"])
    segs = []
    starts = [p["t0_ns"] for p in order]
    for a, b in zip(bounds, bounds[1:]):
        mid = (a + b) / 2
        open_ = [p for p in order[:bisect.bisect_right(starts, mid)] if p["t1_ns"] > mid]
        if not open_:
            segs.append((a, b, "other", "other"))
            continue
        inner = max(open_, key=lambda p: (p["depth"], p["t0_ns"]))
        top = min(open_, key=lambda p: (p["depth"], p["t0_ns"]))
        kind = inner["kind"]
        if kind == "data_wait" and any(p["kind"] == "validation" for p in open_):
            kind = "validation"
        segs.append((a, b, kind, top["name"]))
    return segs


def analyse(rec_dir):
    d = load(rec_dir)
    c, rapl, fl = d["counters"], d["rapl"], d["floors"]
    phases = _phases(d)
    span = d["span"]
    top = [dict(p, **_figures(c, rapl, p["t0_ns"], p["t1_ns"], fl)) for p in sorted(phases, key=lambda p: p["t0_ns"]) if p["depth"] == 0]
    w = profiler_window(d)
    for row in top:  # the data waits inside each top-level phase, and the recorder's window in it
        waits = [p for p in phases if p["kind"] == "data_wait" and row["t0_ns"] <= p["t0_ns"] and p["t1_ns"] <= row["t1_ns"]]
        if w:
            waits = [p for p in waits if p["t1_ns"] <= w[0] or p["t0_ns"] >= w[1]]
        row["data_wait_s"] = sum(p["t1_ns"] - p["t0_ns"] for p in waits) / 1e9
        row["data_waits"] = len(waits)
        a, b = (max(row["t0_ns"], w[0]), min(row["t1_ns"], w[1])) if w else (0, 0)
        row["profiler"] = _figures(c, rapl, a, b, fl) if b > a else None
        # the window's own bound errors add to the phase's (its bounds are cut out of it)
        row["net"] = {k: row[k] + (1 if k.endswith("_unc") else -1) * (row["profiler"] or {}).get(k, 0.0)
                      for k in _figures(c, rapl, row["t0_ns"], row["t1_ns"], fl)}
    by_kind = {}
    for a, b, kind, _ in exclusive_segments(phases, span):
        f = _figures(c, rapl, a, b)
        acc = by_kind.setdefault(kind, {})
        for k, v in f.items():
            acc[k] = acc.get(k, 0.0) + v
    total = _figures(c, rapl, *span)
    for acc in by_kind.values():
        acc["share_of_time"] = acc["time_s"] / total["time_s"]
        acc["share_of_gpu_j"] = acc["gpu_j"] / total["gpu_j"] if total["gpu_j"] else None
    return {"dir": rec_dir, "top": top, "by_kind": by_kind, "total": total, "rapl": rapl,
            "rapl_note": d["meta"].get("rapl_note"), "host": d["meta"], "counts": d["life"].get("counts", {})}


def job_cpu_core_s(fig, sampler_core_per_s):
    """The job's busy core-seconds over a span from its counter differences `fig` (a _figures dict: time_s,
    cpu_busy_core_s, proc_cpu_core_s): the job's process tree's own CPU (/proc/<pid>/stat of the training process and
    its descendants) plus the CPU outside that tree beyond the samplers' rate at rest (kernel threads working for the
    job, e.g. writeback), never below zero (models/lifecycle/split.json "cpu_measure"). The samplers run outside the
    tree and their CPU per NVML read depends on the GPU's state (at rest before any CUDA context ~5 ms, with one and
    the GPU idle ~4 ms, the GPU busy ~5.6 ms), so a rate measured at rest is subtracted from the CPU outside the tree
    only: subtracted from all CPUs' busy time it would remove CPU measured in the job's own processes."""
    tree = fig["proc_cpu_core_s"]
    outside = fig["cpu_busy_core_s"] - tree
    return tree + max(0.0, outside - sampler_core_per_s * fig["time_s"])


def gpu_idle_w(rec_dir):
    """Measured GPU idle power: the recorder's idle:start window (NVML energy counter)."""
    with open(os.path.join(rec_dir, "run.json")) as f:
        run = json.load(f)
    p = next(p for p in run["phases"] if p["name"] == "idle:start")
    return p["energy_mj"] / 1e3 / ((p["t1_ns"] - p["t0_ns"]) / 1e9)
