#!/usr/bin/env python3
"""Evidence, writes no model: the activity model's counted work set beside the H200's hardware counters.

    python3 models/calibration/ncu_counters.py [--json]      (needs the built Python module: build/python)

traces/recordings/h200-ncu holds Nsight Compute's counters for one call of every kernel loop of the power suite
(traces/recorder/ncu_counters.sh; split h200-power-split.json `ncu_counters`, a diagnostic). For each loop this
imports the suite's own recording of it (traces/recordings/h200-power*/, with operator shapes) as validate --models
does and sums, per call, the work the activity model prices: DRAM bytes read + written, tensor FLOPs, elementwise
operations (output elements x the estimated instructions per element of kernel_activity.cpp's table). Beside it the
counters of the same call: DRAM bytes (dram__bytes_read + write), thread instructions executed, tensor-pipe active
cycles as FLOPs at the dense rate of the kernel's precision (TENSOR_FLOP_PER_PIPE_CYCLE) and the SM clock over each
kernel. Both sides are measured or counted on the
same loop; the ratio is what the model's counting misses. Caveats: ncu replays each kernel alone with its caches
flushed (--cache-control all, its default), so a loop whose tensors fit the 50 MB L2 reads from DRAM here what it
re-reads from L2 in its steady loop; and a call's kernels are per call, where the suite's trace holds 3 steps of
`reps` calls (calls = kernels in the trace / kernels per call).
"""
import argparse
import csv
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from h200_clock_evidence import TENSOR_FLOP_PER_CLOCK_PER_SM  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NCU = os.path.join(ROOT, "traces", "recordings", "h200-ncu")
SPLIT = os.path.join(ROOT, "models", "calibration", "h200-power-split.json")
GROUPS = ("matrix", "rest1", "rest2")
# dense tensor FLOP per counted tensor-pipe cycle by precision: the datasheet's bf16 FLOP per SM per cycle
# (h200_clock_evidence.TENSOR_FLOP_PER_CLOCK_PER_SM, 4096) over the SM's four sub-partitions, whose pipes the counter
# sums (inferred: every dense bf16 / fp16 GEMM loop reads 0.98-1.00 of its counted FLOPs at this rate); fp8 twice,
# tf32 half
SUBPARTITIONS_PER_SM = 4
_BF16 = TENSOR_FLOP_PER_CLOCK_PER_SM / SUBPARTITIONS_PER_SM
TENSOR_FLOP_PER_PIPE_CYCLE = {"bf16": _BF16, "fp8": 2 * _BF16, "tf32": _BF16 / 2}
METRICS = {
    "duration_s": ("gpu__time_duration.sum", 1e-9), "sm_hz": ("sm__cycles_elapsed.avg.per_second", 1.0),
    "dram_read": ("dram__bytes_read.sum", 1.0), "dram_write": ("dram__bytes_write.sum", 1.0),
    "thread_inst": ("smsp__thread_inst_executed.sum", 1.0), "warp_inst": ("smsp__inst_executed.sum", 1.0),
    "tensor_cycles": ("sm__pipe_tensor_cycles_active.sum", 1.0), "xu_inst": ("sm__inst_executed_pipe_xu.sum", 1.0),
    "fma_inst": ("sm__inst_executed_pipe_fma.sum", 1.0), "alu_inst": ("sm__inst_executed_pipe_alu.sum", 1.0),
    "lsu_inst": ("sm__inst_executed_pipe_lsu.sum", 1.0),
    "l2_bytes": ("lts__t_bytes.sum", 1.0),
}


def number(text):
    return float(text.replace(",", "")) if text not in ("", "n/a") else 0.0


def read_group(group):
    """{loop: [kernel]} of one ncu group: each kernel {name, <METRICS keys>}, the loop's marker dropped."""
    with gzip.open(os.path.join(NCU, "counters-%s.csv.gz" % group), "rt") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("==")))
    head, rows = rows[0], rows[2:]  # the second row holds units
    kernels = [dict(zip(head, r)) for r in rows]
    with open(os.path.join(NCU, "loops-%s.log" % group)) as f:
        log = [line.split() for line in f]
    names = [w[1] for w in log if w[0] == "loop"]
    failed = {w[1].rstrip(":") for w in log if w[0] == "failed"}
    marks = [i for i, k in enumerate(kernels) if "spin_kernel" in k["Kernel Name"]]
    if len(marks) != len(names):
        raise ValueError("%s: %d markers for %d loops" % (group, len(marks), len(names)))
    out = {}
    for i, (m, name) in enumerate(zip(marks, names)):
        if name in failed:
            continue
        end = marks[i + 1] if i + 1 < len(marks) else len(kernels)
        out[name] = [dict({k: number(kernels[j][col]) * s for k, (col, s) in METRICS.items()},
                          name=kernels[j]["Kernel Name"]) for j in range(m + 1, end)]
    return out


def counters():
    out = {}
    for g in GROUPS:
        out.update(read_group(g))
    return out


# split blocks whose fit side no fit reads (their rules were not kept; validate --models labels them "not fit")
NOT_FIT_BLOCKS = ("strided_fit_loops", "busy_sm_fma")


def roles():
    """{loop: "fit" | "held out" | "not fit"} from the split file: the lists under its fit / held_out sides, then
    those of its later blocks (a NOT_FIT_BLOCKS fit side reads "not fit", whichever other block also lists it)."""
    with open(SPLIT) as f:
        split = json.load(f)
    sides = (("fit", "fit"), ("held_out", "held out"))
    main = {n: role for side, role in sides for v in split[side].values() if isinstance(v, list) for n in v}
    out = dict(main)
    for key, block in split.items():
        for side, role in sides:
            listed = block.get(side) if isinstance(block, dict) else None
            for name in listed if isinstance(listed, list) and key not in ("fit", "held_out") else []:
                if name not in main:
                    out[name] = "not fit" if key in NOT_FIT_BLOCKS and side == "fit" else out.get(name, role)
    return out


def recording(loop):
    """The suite's recording of a loop (traces/recordings/h200-power/<loop> or h200-power-*/micro/<loop>), or None."""
    base = os.path.join(ROOT, "traces", "recordings")
    for d in [os.path.join(base, "h200-power", loop)] + [os.path.join(base, r, "micro", loop)
                                                          for r in sorted(os.listdir(base)) if r.startswith("h200-power-")]:
        if os.path.isfile(os.path.join(d, "run.json")):
            return d
    return None


class _Collect:
    """A Python policy that only looks: every kernel's recorded duration and counted work."""

    def __init__(self):
        self.kernels = []

    def before_kernel(self, k, t):
        if k.kind == "kernel":
            self.kernels.append((k.duration_s, k.work))
        return None


def counted_work(rec_dir):
    """The activity model's work summed over a recording's profiled kernels (SM kernels only): bytes, tensor FLOPs by
    precision, elementwise operations; and how many kernels it holds."""
    import dvfs_sim
    c = _Collect()
    dvfs_sim.simulate({"trace": rec_dir, "gpu": "h200", "policy": "native"}, policy=c, timeline=False)
    w = {"kernels": len(c.kernels), "bytes": 0.0, "alu_ops": 0.0, "tensor_flop": {}}
    for d, work in c.kernels:
        if work["source"] in ("unknown", "launch_elementwise"):
            continue  # the class prior prices these: no counted work
        w["bytes"] += work["memory_tbps"] * d * 1e12
        w["alu_ops"] += work["alu_tops"] * d * 1e12
        if work["tensor_tflops"] > 0:
            p = work["tensor_precision"]
            w["tensor_flop"][p] = w["tensor_flop"].get(p, 0.0) + work["tensor_tflops"] * d * 1e12
    return w


def micro_info(rec_dir):
    with open(os.path.join(rec_dir, "run.json")) as f:
        return json.load(f).get("micro", {})


def elements(info):
    """A loop's elements per call where the recorder's description gives them, else 0: output elements of elementwise
    and store loops, the input's rows x columns of normalisation, softmax and reduction loops."""
    if info.get("kind") in ("elementwise", "store") and info.get("numel"):
        return float(info["numel"])
    if info.get("kind") in ("normalization", "softmax", "reduction") and info.get("shape"):
        return float(info["shape"][0]) * float(info["shape"][1])
    return 0.0


def compare(loop, kernels, rec_dir):
    """One loop's counted work per call beside its counters per call."""
    w = counted_work(rec_dir)
    calls = w["kernels"] / len(kernels)
    tensor_counted = sum(w["tensor_flop"].values()) / calls
    precision = max(w["tensor_flop"], key=w["tensor_flop"].get) if w["tensor_flop"] else None
    per_cycle = TENSOR_FLOP_PER_PIPE_CYCLE.get(precision, 0.0)
    measured_bytes = sum(k["dram_read"] + k["dram_write"] for k in kernels)
    n = elements(micro_info(rec_dir))
    busy = sum(k["duration_s"] for k in kernels)
    return {
        "loop": loop, "kernels_per_call": len(kernels), "calls_in_trace": calls,
        "counted_bytes": w["bytes"] / calls, "measured_dram_bytes": measured_bytes,
        "counted_tensor_flop": tensor_counted, "tensor_precision": precision,
        "measured_tensor_flop": sum(k["tensor_cycles"] for k in kernels) * per_cycle if per_cycle else 0.0,
        "counted_alu_ops": w["alu_ops"] / calls, "measured_thread_inst": sum(k["thread_inst"] for k in kernels),
        "measured_warp_inst_by_pipe": {p: sum(k[p + "_inst"] for k in kernels) for p in ("fma", "alu", "xu", "lsu")},
        "elements": n,
        "ncu_busy_s": busy, "ncu_sm_mhz": sum(k["sm_hz"] * k["duration_s"] for k in kernels) / busy / 1e6 if busy else 0.0,
    }


def table():
    """Every loop with counters and a recording, each with its role, in the counters' order."""
    role = roles()
    rows = []
    for loop, kernels in counters().items():
        rec = recording(loop)
        if not kernels or rec is None:
            continue
        r = compare(loop, kernels, rec)
        r["role"] = role.get(loop, "diagnostic")
        rows.append(r)
    return rows


def ratio(a, b):
    return a / b if b > 0 else float("nan")


def print_table(rows):
    print("loop                            role      k/call  DRAM bytes counted/measured   tensor FLOP     per element: "
          "ALU ops counted | thread inst, warp inst x32 by pipe fma/alu/xu/lsu   SM MHz")
    for r in rows:
        tensor = ("%5.2f (%s)" % (ratio(r["counted_tensor_flop"], r["measured_tensor_flop"]), r["tensor_precision"])
                  if r["measured_tensor_flop"] else "-")
        per = "-"
        if r["elements"]:
            pipes = "/".join("%.1f" % (32 * r["measured_warp_inst_by_pipe"][p] / r["elements"]) for p in ("fma", "alu", "xu", "lsu"))
            per = "%6.2f | %6.2f, %s" % (r["counted_alu_ops"] / r["elements"], r["measured_thread_inst"] / r["elements"], pipes)
        print("%-31s %-9s %6d  %9.3g / %9.3g = %5.2f  %-12s  %-44s %5.0f" % (
            r["loop"], r["role"], r["kernels_per_call"], r["counted_bytes"], r["measured_dram_bytes"],
            ratio(r["counted_bytes"], r["measured_dram_bytes"]), tensor, per, r["ncu_sm_mhz"]))
    print(byte_count_summary(rows))


# Loops whose call moves at least this much through DRAM: smaller ones sit in the 50 MB L2 under ncu's replay, where
# what DRAM sees is residency, not a count.
SUMMARY_MIN_DRAM_BYTES = 1e8


def byte_count_summary(rows):
    """One line: how close the counted DRAM bytes come to the measured ones over the loops that count any bytes
    and move >= SUMMARY_MIN_DRAM_BYTES per call, GEMM / convolution / attention loops apart (their operands are
    re-read from DRAM by tiling, which the per-FLOP tensor energy absorbs)."""
    def matrix(loop):
        return loop.startswith(("gemm", "conv", "attn"))
    kept = [r for r in rows if r["counted_bytes"] > 0 and r["measured_dram_bytes"] >= SUMMARY_MIN_DRAM_BYTES and not matrix(r["loop"])]
    if not kept:
        return "DRAM bytes counted / measured: no loop to summarise"
    ratios = sorted(r["counted_bytes"] / r["measured_dram_bytes"] for r in kept)
    within = sum(0.9 <= x <= 1.1 for x in ratios)
    return ("DRAM bytes counted / measured over %d non-matrix loops moving >= %.0f MB per call: %d within 10 %%, median %.2f, "
            "range %.2f-%.2f" % (len(ratios), SUMMARY_MIN_DRAM_BYTES / 1e6, within, ratios[len(ratios) // 2], ratios[0], ratios[-1]))


WORKLOADS = os.path.join(NCU, "workloads")


def family(kernel_name):
    """A kernel's family: its function's name without namespaces, template arguments or parameters."""
    n = kernel_name.replace("<unnamed>::", "").replace("(anonymous namespace)::", "")
    n = n[5:] if n.startswith("void ") else n
    cut = min([i for i in (n.find("<"), n.find("(")) if i >= 0] or [len(n)])
    return n[:cut].split("::")[-1]


def workload_families(name):
    """Split ncu_stalled_workloads: per kernel family of a whole workload profiled by traces/recorder/ncu_workloads.sh,
    its share of kernel time, kernels, and (time-weighted over its kernels) issue-active and SM-throughput shares and
    achieved occupancy (%), DRAM TB/s, L2 atomic + reduction sectors, L2 hit rate (%); largest share first."""
    with gzip.open(os.path.join(WORKLOADS, name + ".csv.gz"), "rt") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("==")))
    kernels = [dict(zip(rows[0], r)) for r in rows[2:]]
    total = sum(number(k["gpu__time_duration.sum"]) for k in kernels)
    fams = {}
    for k in kernels:
        d = number(k["gpu__time_duration.sum"])
        a = fams.setdefault(family(k["Kernel Name"]), {"ns": 0.0, "kernels": 0, "issue": 0.0, "sm": 0.0, "occupancy": 0.0,
                                                      "dram_bytes": 0.0, "atomic_sectors": 0.0, "l2_hit": 0.0})
        a["ns"] += d
        a["kernels"] += 1
        for key, col in (("issue", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
                         ("sm", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                         ("occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"), ("l2_hit", "lts__t_sector_hit_rate.pct")):
            a[key] += d * number(k[col])
        a["dram_bytes"] += number(k["dram__bytes_read.sum"]) + number(k["dram__bytes_write.sum"])
        a["atomic_sectors"] += number(k["lts__t_sectors_op_atom.sum"]) + number(k["lts__t_sectors_op_red.sum"])
    out = []
    for fam, a in sorted(fams.items(), key=lambda kv: -kv[1]["ns"]):
        t = a["ns"]
        out.append({"family": fam, "time_share": t / total, "kernels": a["kernels"], "issue_active_pct": a["issue"] / t,
                    "sm_throughput_pct": a["sm"] / t, "occupancy_pct": a["occupancy"] / t, "dram_tbps": a["dram_bytes"] / t / 1e3,
                    "atomic_sectors": a["atomic_sectors"], "l2_hit_pct": a["l2_hit"] / t})
    return out


def print_workloads():
    for name in sorted(f[:-len(".csv.gz")] for f in os.listdir(WORKLOADS) if f.endswith(".csv.gz")):
        print(name, "(kernel families by share of kernel time; time-weighted over each family's kernels)")
        for r in workload_families(name)[:10]:
            print("  %-38s %5.1f %%  %3d kernels  issue %4.1f %%  SM %4.1f %%  occupancy %4.1f %%  DRAM %5.2f TB/s  "
                  "L2 atomic+red sectors %9.3g  L2 hit %4.1f %%" % (
                      r["family"], 100 * r["time_share"], r["kernels"], r["issue_active_pct"], r["sm_throughput_pct"],
                      r["occupancy_pct"], r["dram_tbps"], r["atomic_sectors"], r["l2_hit_pct"]))


def measured_intensity(rows):
    """{operator: instructions per output element beyond one load / operate / store} from the FIT-set elementwise loops
    (split rule measured_alu_intensity): the mean over an operator's fit loops of measured thread instructions per
    output element, less 3; rounded to 3 decimals. Held-out loops do not enter."""
    per_op = {}
    for r in rows:
        info = micro_info(recording(r["loop"]))
        if r["role"] == "fit" and info.get("kind") == "elementwise" and r["elements"]:
            per_op.setdefault(info["op"], []).append(r["measured_thread_inst"] / r["elements"])
    return {op: round(sum(v) / len(v) - 3.0, 3) for op, v in sorted(per_op.items())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--workloads", action="store_true",
                    help="print what the kernels of the profiled whole workloads do (split ncu_stalled_workloads)")
    ap.add_argument("--intensity", action="store_true",
                    help="print the instruction counts per element the fit loops measure (split measured_alu_intensity)")
    a = ap.parse_args()
    if a.workloads:
        print_workloads()
        return
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    rows = table()
    if a.intensity:
        for op, v in measured_intensity(rows).items():
            print("%-10s %g" % (op, v))
    elif a.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        print_table(rows)


if __name__ == "__main__":
    main()
