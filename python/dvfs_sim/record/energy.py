"""What the NVML energy counter can say about a recording's profiled steps (pure Python, no GPU needed).

The counter (`nvmlDeviceGetTotalEnergyConsumption`) advances in jumps, about every 100 ms on an H200, so
the difference of two reads over a short interval is quantised: over a 0.26 s window of six 44 ms steps it
holds 2 or 3 jumps, and the mean power from it is off by up to a third (the "113 W, below idle" of issue 23
was 2 jumps of a ~150 W window spread over 0.26 s). Two remedies, both here:

- the energy over an interval is the counter interpolated between the instants it advanced (each instant
  taken midway between the sample that first shows a jump and the one before), as `dvfs-sim validate`
  reads it (traces/src/recording.cpp);
- the resolution rule: an interval's energy is reported only when it lasts at least RESOLVE_UPDATES times
  the counter's observed update interval (the median time between jumps in telemetry.csv). Steps shorter
  than that get no per-step figure: the energy is given over the whole profiled window instead (and per step
  as window / steps), and a window shorter than that gets no energy figure at all.
"""
import csv
import statistics

RESOLVE_UPDATES = 2  # an interval must span at least this many counter updates to be given an energy


def read_counter(path):
    """[(t_ns, energy_mj)] from a telemetry.csv (rows without a counter value skipped)."""
    out = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                out.append((int(row["t_ns"]), float(row["energy_mj"])))
            except (KeyError, TypeError, ValueError):
                continue
    return out


def update_points(samples):
    """[(t_ns, mJ)]: the first sample, then each instant the counter advanced (midway between samples)."""
    if not samples:
        return []
    pts = [samples[0]]
    for (ta, ea), (tb, eb) in zip(samples, samples[1:]):
        if eb != ea:
            pts.append((0.5 * (ta + tb), eb))
    return pts


def update_interval_s(points):
    """Median time between counter updates (s), or None with fewer than three updates."""
    jumps = [t for t, _ in points[1:]]
    gaps = [(b - a) / 1e9 for a, b in zip(jumps, jumps[1:])]
    return statistics.median(gaps) if len(gaps) >= 2 else None


def counter_mj_at(points, t_ns):
    if t_ns <= points[0][0]:
        return points[0][1]
    if t_ns >= points[-1][0]:
        return points[-1][1]
    lo, hi = 0, len(points) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if points[mid][0] <= t_ns:
            lo = mid
        else:
            hi = mid
    (ta, ea), (tb, eb) = points[lo], points[hi]
    return ea + (eb - ea) * (t_ns - ta) / (tb - ta)


def energy_j(points, t0_ns, t1_ns):
    return (counter_mj_at(points, t1_ns) - counter_mj_at(points, t0_ns)) / 1e3


def resolves(duration_s, interval_s):
    """The resolution rule: True when an interval of duration_s spans >= RESOLVE_UPDATES counter updates."""
    return interval_s is not None and duration_s >= RESOLVE_UPDATES * interval_s


def summarize(bounds, samples, idle=None):
    """The energy figures of profiled steps `bounds` ([{t0_ns, t1_ns}]) from telemetry `samples`
    ([(t_ns, mJ)]); idle: optional (t0_ns, t1_ns) of an idle phase, for its mean power. The `energy_counter`
    object of run.json (docs/recording-format.md)."""
    pts = update_points(samples)
    u = update_interval_s(pts)
    n = len(bounds)
    window_s = (bounds[-1]["t1_ns"] - bounds[0]["t0_ns"]) / 1e9
    durations = [(b["t1_ns"] - b["t0_ns"]) / 1e9 for b in bounds]
    covered = bool(pts) and pts[0][0] <= bounds[0]["t0_ns"] and samples[-1][0] >= bounds[-1]["t1_ns"]
    s = {"update_interval_s": u, "resolve_updates": RESOLVE_UPDATES,
         "min_resolved_s": RESOLVE_UPDATES * u if u is not None else None,
         "rule": f"an interval's energy is given when it spans >= {RESOLVE_UPDATES} updates of the counter "
                 "(update interval: median time between its jumps in telemetry.csv); shorter steps are given "
                 "the profiled window's energy / steps",
         "steps_resolved": sum(resolves(d, u) for d in durations) if covered else 0,
         "window_s": window_s, "window_resolved": covered and resolves(window_s, u),
         "window_energy_j": None, "window_mean_power_w": None, "per_step_energy_j": None}
    s["per_step_resolved"] = s["steps_resolved"] == n
    if s["window_resolved"]:
        e = energy_j(pts, bounds[0]["t0_ns"], bounds[-1]["t1_ns"])
        s["window_energy_j"], s["window_mean_power_w"] = e, e / window_s
    if s["per_step_resolved"]:
        s["per_step_energy_j"] = [energy_j(pts, b["t0_ns"], b["t1_ns"]) for b in bounds]
    if idle is not None and covered and resolves((idle[1] - idle[0]) / 1e9, u):
        s["idle_mean_power_w"] = energy_j(pts, *idle) / ((idle[1] - idle[0]) / 1e9)
    return s


def describe(s, steps):
    """One line: the energy figures the counter resolves, and what it does not."""
    u = s["update_interval_s"]
    if u is None:
        return "energy: the counter advanced fewer than 3 times in telemetry.csv: no energy figure"
    per_step_s = s["window_s"] / steps
    if not s["window_resolved"]:
        return (f"energy: the profiled window ({s['window_s']:.3f} s) spans fewer than {RESOLVE_UPDATES} updates of the "
                f"counter ({u * 1e3:.0f} ms each): no energy figure; profile more steps (--steps WARMUP:PROFILED)")
    head = f"{per_step_s:.4f} s per step; "
    if s["per_step_resolved"]:
        e = s["per_step_energy_j"]
        text = head + f"{min(e):.1f}-{max(e):.1f} J per step (counter, each step >= {RESOLVE_UPDATES} updates)"
    else:
        text = head + (f"per-step energy not resolved (steps {per_step_s * 1e3:.0f} ms < {RESOLVE_UPDATES} x the "
                       f"counter's {u * 1e3:.0f} ms updates): over the {steps}-step window "
                       f"{s['window_energy_j']:.1f} J, {s['window_energy_j'] / steps:.1f} J per step")
    text += f", mean {s['window_mean_power_w']:.0f} W"
    idle = s.get("idle_mean_power_w")
    if idle is not None:
        text += f" (idle {idle:.0f} W)"
    return text
