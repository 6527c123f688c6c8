#!/usr/bin/env python3
"""Lifecycle model of the two H200 jobs (issue 20), from their recordings (traces/recordings/h200-lifecycle/):
fits the parameters named in split.json on the phases named there, writes the node model and the two
lifecycle scenarios, runs them with dvfs-sim and compares every phase with the recording (fit and held-out
phases reported apart).

    python3 models/lifecycle/fit_lifecycle.py --bin build/dvfs-sim [--check]

Writes models/lifecycle/h200-node.json, scenarios/lifecycle/{cnn-io,llm-finetune,staging-copies}.json, each later
day's node (h200-node-dayN.json) and scenarios (dayN-*.json), and traces/recordings/h200-lifecycle/validation.{json,md}.
--check: fails when a written file would change.
Measured = a recorded counter (NVML energy counter, /proc/stat, /proc/<pid>); everything dvfs-sim prints is a
model output.
"""
import argparse
import bisect
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.append(os.path.join(ROOT, "python"))  # the pure-Python parts; a built package on the path (build/python) wins
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # folder_sweep_fit beside it
from dvfs_sim import lifecycle_analysis as la  # noqa: E402
from dvfs_sim.lifecycle_analysis import analyse  # noqa: E402

REC = os.path.join(ROOT, "traces", "recordings", "h200-lifecycle")
NODE = os.path.join(ROOT, "models", "lifecycle", "h200-node.json")
COPIES = "staging-copies"  # the third recording (split.json: fit, all of it): staging copies of four file sizes
SCEN = os.path.join(ROOT, "scenarios", "lifecycle")


def job(name, base=REC):
    a = analyse(os.path.join(base, name, "recording"))
    with open(os.path.join(base, name, "job.json")) as f:
        j = json.load(f)
    idle = next(r for r in a["top"] if r["name"] == "idle:start")
    a["sampler_core_per_s"] = idle["cpu_busy_core_s"] / idle["time_s"]  # the two samplers' own CPU, at rest
    a["gpu_deep_idle_w"] = idle["gpu_j"] / idle["time_s"]
    a["job"] = j
    return a


def steady(a, r):
    """The part of a fit phase after the recorder's Kineto window (its warm-up steps and the profiler left out):
    time, data wait, steps (one DataLoader next() each; a final one that only ends the loop is not a step), and
    the counters' differences over it."""
    d = la.load(a["dir"])
    w = la.profiler_window(d)
    t0 = max(r["t0_ns"], w[1]) if w and w[1] < r["t1_ns"] else r["t0_ns"]
    waits = [p for p in d["life"]["phases"] if p["kind"] == "data_wait" and t0 <= p["t0_ns"] and p["t1_ns"] <= r["t1_ns"]]
    out = {k: c.delta(t0, r["t1_ns"]) for k, c in d["counters"].items()}
    out["time_s"] = (r["t1_ns"] - t0) / 1e9
    out["data_wait_s"] = sum(p["t1_ns"] - p["t0_ns"] for p in waits) / 1e9
    out["next_calls"] = len(waits)
    return out


def warmup(a, r):
    """One-time costs of a fit phase that is the first of its kind (cuDNN autotuning, allocator growth, compiling
    new shapes), from that phase alone: its first step (from its batch's arrival to the next batch's request) less
    the median of its later steps is the extra time; the GPU's mean power over that first step (NVML counter) its
    power; the training process's CPU over it beyond the process's rate in the rest of the phase its CPU work."""
    d = la.load(a["dir"])
    waits = sorted((p for p in d["life"]["phases"] if p["kind"] == "data_wait" and r["t0_ns"] <= p["t0_ns"] and p["t1_ns"] <= r["t1_ns"]),
                   key=lambda p: p["t0_ns"])
    busy = [(b["t0_ns"] - w["t1_ns"]) / 1e9 for w, b in zip(waits, waits[1:])]
    w0, w1 = waits[0]["t1_ns"], waits[1]["t0_ns"]
    first = (w1 - w0) / 1e9
    later = sorted(busy[1:])
    extra = first - later[len(later) // 2]
    c = d["counters"]
    main_w = c["main_cpu_core_s"].delta(w0, w1)
    rest_rate = (r["net"]["main_cpu_core_s"] - main_w) / (r["net"]["time_s"] - first)
    return {"s": round(extra, 4), "gpu_w": round(c["gpu_j"].delta(w0, w1) / first, 1),
            "core_s": round(max(0.0, main_w - rest_rate * first), 4),
            "note": f"fitted: {os.path.basename(os.path.dirname(a['dir']))}, the first {r['kind']} phase: first step {first:.3f} s against a median "
                    f"{later[len(later) // 2]:.4f} s of its {len(later)} later steps"}


def loader_fit(a, r):
    """A stepped fit phase's loader figures: the time from its start to its first batch request (the DataLoader
    iterator made: its worker processes started; paid by every phase, the workers do not persist) and the median
    time of one batch request (a ready batch's hand-over from a worker: host time of every step, which the
    simulated loaders' waits do not hold)."""
    d = la.load(a["dir"])
    waits = sorted((p for p in d["life"]["phases"] if p["kind"] == "data_wait" and r["t0_ns"] <= p["t0_ns"] and p["t1_ns"] <= r["t1_ns"]),
                   key=lambda p: p["t0_ns"])
    fetch = sorted((p["t1_ns"] - p["t0_ns"]) / 1e9 for p in waits)
    return {"start_s": (waits[0]["t0_ns"] - r["t0_ns"]) / 1e9, "fetch_s": fetch[len(fetch) // 2]}


def rows(a, kind):
    return [r for r in a["top"] if r["kind"] == kind]


def job_cpu(a, r):
    """Measured busy core-seconds of the job in a phase (net of the recorder's Kineto window): its process tree's CPU
    plus the CPU outside it beyond the samplers' rate at rest (la.job_cpu_core_s; split.json "cpu_measure")."""
    return la.job_cpu_core_s(r["net"], a["sampler_core_per_s"])


H2D_LOOP = os.path.join(ROOT, "traces", "recordings", "h200-power", "copy-h2d-1g", "run.json")


def copy_rate():
    """Host<->device copy rate: issue 16's 1 GiB host-to-device loop (in that suite's fit set,
    models/calibration/h200-power-split.json), steady window."""
    with open(H2D_LOOP) as f:
        m = json.load(f)["micro"]
    st = m["steady"]
    return m["bytes"] * m["reps_per_step"] * st["steps"] / ((st["t1_ns"] - st["t0_ns"]) / 1e9)


def staging_fit(cnn):
    """The fit-set staging copy (cnn-io: shutil.copytree, then os.sync()) in its two stages, from the host samples:
    the copy (the copying process on one core, its writes landing in the page cache: the disk writes nothing)
    and the sync, from the sample interval where the disk starts writing to the phase end. os.sync() writes every
    dirty page: the copy and the dataset generated just before it (written < 30 s earlier, far below the kernel's
    dirty thresholds on a 125 GiB machine, so still dirty: the disk writes 2.5x the copied bytes in the phase).
    The disk's write rate: its bytes over the sync; the kernel writeback's CPU: the job's CPU beyond the copying
    process's, per file flushed (the copy's files and the generated ones)."""
    r = rows(cnn, "staging")[0]
    c = la.load(cnn["dir"])["counters"]["disk_write_bytes"]
    ts = [t for t in c.t if r["t0_ns"] <= t <= r["t1_ns"]]
    # the first interval with bulk writes (>= 1 MB in 50 ms): a 4 kB journal commit during the copy is not the sync
    first = next(i for i, t in enumerate(c.t) if r["t0_ns"] < t <= r["t1_ns"] and c.v[i] - c.v[i - 1] >= 1e6)
    sync0 = max(r["t0_ns"], c.t[first - 1])
    n = r["net"]
    files = cnn["job"]["args"]["images"] + cnn["job"]["args"]["val_images"]
    proc = n["proc_cpu_core_s"]
    return {"sync_s": (r["t1_ns"] - sync0) / 1e9, "copy_s": (sync0 - r["t0_ns"]) / 1e9, "disk_bytes": n["disk_write_bytes"],
            "write_bps": n["disk_write_bytes"] / ((r["t1_ns"] - sync0) / 1e9), "proc_core_s": proc, "files": files,
            "writeback_core_s_per_file": max(0.0, job_cpu(cnn, r) - proc) / (2 * files), "samples": len(ts)}


def serialise_per_gb(cnn, write_bps, d2h, sync_per_file=0.0):
    """The checkpoint's CPU per GB: the fit-set epoch-0 checkpoint's wall time (phase marks, ns) less its device-to-host
    copy and its fsync (its bytes at the disk's write rate, its one file's sync time) is torch.save writing into the
    page cache, one core busy. Its CPU ticks (0.1 +- 0.2 core-s over 0.15 s) do not resolve it; its wall time does."""
    ck = rows(cnn, "checkpoint")[0]
    b = cnn["job"]["epochs"][0]["checkpoint_bytes"]
    return (ck["time_s"] - b / d2h - b / write_bps - sync_per_file) / (b / 1e9)


def copy_syncs(sc):
    """Each staging-copies sync: its duration (job.json marks: the copy call's return to os.sync()'s return) and the
    disk's bytes in it (host samples: from the copy's start, the disk writing nothing during the copy, to the first
    sample at or after the sync's return; interpolating the 50 ms samples at the return would lose up to a third of a
    0.2 s sync's bytes)."""
    c = la.load(sc["dir"])["counters"]["disk_write_bytes"]
    out = []
    for k in sc["job"]["copies"]:
        i = min(bisect.bisect_left(c.t, k["synced"]["t_ns"]), len(c.t) - 1)
        out.append({"phase": k["phase"], "bytes": k["bytes"], "sync_s": (k["synced"]["t_ns"] - k["copied"]["t_ns"]) / 1e9,
                    "disk_bytes": c.v[i] - c.value(k["start"]["t_ns"])})
    return out


def least_squares_2(points):
    """(c1, c2) minimising the sum of (y - c1 x1 - c2 x2)^2 over points (x1, x2, y): least squares without intercept
    on two regressors, by the normal equations."""
    a11, a12, a22 = sum(u * u for u, _, _ in points), sum(u * v for u, v, _ in points), sum(v * v for _, v, _ in points)
    b1, b2 = sum(u * y for u, _, y in points), sum(v * y for _, v, y in points)
    det = a11 * a22 - a12 * a12
    return (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det


def write_rate(cnn, sc):
    """The local disk's sync (split.json): the data each sync writes at write_bps plus sync_s_per_file per file written
    (inode, directory entry, journal). Without the staging-copies recording (sc None): the cnn-io staging's sync alone,
    its disk bytes over its duration, no per-file term (the session-4b fit). With it (split.json, 2026-12-02 ~03:25
    UTC): both fitted by least squares without intercept of the thirteen fit syncs' durations (cnn-io's and the twelve
    copies') on the file data each writes (the copy's bytes and sync_bytes) and its files (the copy's and sync_files).
    Returns (rate, seconds per file, check)."""
    sf = staging_fit(cnn)
    if sc is None:
        return sf["write_bps"], 0.0, None
    syncs = copy_syncs(sc)
    files = {k["phase"]: k["files"] for k in sc["job"]["copies"]}
    pts = [(2.0 * cnn["job"]["dataset_bytes"], 2.0 * sf["files"], sf["sync_s"])]  # the copy and its generated source
    pts += [(x["bytes"], files[x["phase"]], x["sync_s"]) for x in syncs]
    inv_rate, per_file = least_squares_2(pts)
    if not (inv_rate > 0 and per_file >= 0):
        raise SystemExit(f"fit_lifecycle.py: the sync fit gave {1 / inv_rate if inv_rate else float('inf'):.3g} B/s and "
                         f"{per_file:.3g} s per file (expected a positive rate and a non-negative time per file)")
    model = [b * inv_rate + f * per_file for b, f, _ in pts]
    check = {"syncs": syncs, "points": len(pts), "cnn_io_sync_s": sf["sync_s"], "cnn_io_model_s": model[0],
             "copies_sync_s": sum(t for _, _, t in pts[1:]), "copies_model_s": sum(model[1:]),
             "cnn_io_disk_rate": sf["write_bps"]}
    return 1.0 / inv_rate, per_file, check


def rate_note(w):
    if w is None:
        return ""
    return (f"; with the staging-copies recording (split.json, 2026-12-02 ~03:25 UTC) fitted together with the per-file "
            f"time by least squares over the {w['points']} fit syncs' durations on their file data and files (the copies' "
            f"syncs timed by the job's marks; cnn-io's from the 50 ms host sample where the disk starts writing, so up to "
            f"50 ms long: ~0.6 us of the per-file time, the one sync with 88,000 files weighing most): cnn-io "
            f"{w['cnn_io_sync_s']:.3f} s measured, {w['cnn_io_model_s']:.3f} s modelled; the twelve copies' syncs "
            f"{w['copies_sync_s']:.3f} s measured, {w['copies_model_s']:.3f} s modelled (the cnn-io sync's disk bytes over "
            f"its duration alone: {w['cnn_io_disk_rate'] / 1e9:.2f} GB/s, metadata included)")


def fit_node(cnn, sc):
    st = rows(cnn, "staging")[0]
    d2h = copy_rate()
    sf = staging_fit(cnn)
    write_bps, sync_per_file, wcheck = write_rate(cnn, sc)
    node = {
        "name": "h200-node",
        "description": "The lent H200 machine's host as the lifecycle scenarios see it: 16 vCPUs of an Intel Xeon "
                       "(family 6 model 207, KVM guest, 2.1 GHz TSC), one virtio disk, and a modelled shared file server.",
        "cores": 16,
        "cpu_pstates": [
            {"ghz": 2.1, "idle_w": 26.0, "one_core_w": 30.1, "all_cores_w": 93.0},
            {"ghz": 1.6, "idle_w": 26.0, "one_core_w": 28.1, "all_cores_w": 60.0},
            {"ghz": 1.2, "idle_w": 26.0, "one_core_w": 27.0, "all_cores_w": 42.5},
        ],
        "storage": [
            {"name": "local", "read_bps": 5e9, "write_bps": round(write_bps, -6), "sync_s": 0.0,
             "write_behind": True, "writeback_core_s_per_file": round(sf["writeback_core_s_per_file"], 8),
             "sync_s_per_file": round(sync_per_file, 9),
             "idle_w": 0.0, "j_per_byte": 0.0,
             "note": "virtio disk behind the page cache (writes reach it at the sync); write_bps and sync_s_per_file fitted on "
                     "the fit set's syncs, writeback_core_s_per_file on the cnn-io staging's (split.json; provenance below); reads "
                     "of a staged dataset come from the page cache (5 GB/s assumed)"},
            {"name": "shared", "read_bps": 1.0e9, "write_bps": 0.8e9, "remote": True, "link_bps": 1.25e9,
             "link_latency_s": 2e-4, "file_open_s": 1e-3, "idle_w": 0.0, "j_per_byte": 0.0, "link_j_per_byte": 2.0e-8,
             "note": "NOT on the recorded machine (it has no shared storage): an NFS-like server over 10 GbE with 1 ms per file open, assumed"},
        ],
        "gpu_idle_w": round(cnn["gpu_deep_idle_w"], 1),
        "gpu_d2h_bps": round(d2h, -6),
        "provenance": {
            "cpu_pstates": "NOT MEASURED (no RAPL powercap on the machine: traces/recordings/h200-lifecycle/logs/env.log). "
                           "A datasheet model: a 5th-gen Xeon at 350 W TDP / 60 cores = 5.8 W per core at full load, "
                           "16 cores = 93 W; idle 26 W (uncore and idle cores, 28 % of it); lower states scale the dynamic "
                           "part by (f/2.1 GHz)^2.5. CPU energy of every lifecycle run is a model output of these figures.",
            "cores": "lscpu on the machine (16 vCPUs, 1 thread per core)",
            "local.write_bps": f"fitted: cnn-io staging copy's os.sync(): the disk wrote {sf['disk_bytes'] / 1e6:.0f} MB (the copy, the "
                               f"dataset generated just before it, metadata) in the {sf['sync_s']:.3f} s from the host sample where it "
                               f"started writing to the phase end (the copy before it: {sf['copy_s']:.3f} s, no disk writes)" + rate_note(wcheck),
            "local.write_behind": "the page cache holds a copy's writes until the sync: 125 GiB of memory, the Linux default dirty "
                                  "thresholds (vm.dirty_background_ratio 10, vm.dirty_ratio 20: read on the machine, logs/staging-copies-env.log) far above a phase's bytes; the recording shows no disk writes "
                                  "during the copy",
            "local.sync_s_per_file": ("fitted with write_bps (see it): the sync's time per file written beyond its data "
                                      "(inode, directory entry, journal), split.json 2026-12-02 ~03:25 UTC" if wcheck else
                                      "0: no fit-set sync separates it (the staging-copies recording is not shipped)"),
            "local.writeback_core_s_per_file": f"fitted: cnn-io staging, the job's CPU beyond the copying process's "
                                               f"({sf['proc_core_s']:.2f} core-s) per file the sync wrote ({2 * sf['files']}: the copy "
                                               "and its freshly generated source)",
            "gpu_d2h_bps": f"measured: traces/recordings/h200-power/copy-h2d-1g (issue 16's fit set), 1 GiB pinned host-to-device "
                           f"copies, steady window: {d2h / 1e9:.1f} GB/s; taken for device-to-host as well (the same link). "
                           "The GPU's power during the copy is the GPU model's copy-engine price (models/gpus/h200.json "
                           "activity.copy_engine_w + DRAM pJ/B), not fitted here. torch.save copies to pageable memory, "
                           "likely slower: not measured",
            "gpu_idle_w": f"measured: cnn-io recorder idle:start window, NVML energy counter ({cnn['gpu_deep_idle_w']:.1f} W)",
            "shared": "assumed (see its note): the recorded jobs staged from a folder on the same disk",
            "split": "models/lifecycle/split.json (written before recording)",
            "staging_fit": f"cnn-io staging: {st['time_s']:.2f} s for {cnn['job']['dataset_bytes']} bytes in "
                           f"{cnn['job']['args']['images'] + cnn['job']['args']['val_images']} files",
        },
    }
    return node


def copy_fit(sc):
    """The staging copy's CPU per GB and per file (split.json, session 5): least squares without intercept of the
    copying process's CPU time over each copy call (job.json: time.process_time_ns where the call starts and where it
    returns) on (GB, files), over the staging-copies recording's copies (1 GiB by copyfile; 8 x 128 MiB, 2,000 x 256 KiB
    and 20,000 x 12 kB by copytree; three of each). Also per copy: the call's wall time and its os.sync() (time, and
    the disk's bytes over it from the host samples), for the in-sample checks."""
    cs = sc["job"]["copies"]
    x = [(c["bytes"] / 1e9, c["files"]) for c in cs]
    y = [(c["copied"]["cpu_ns"] - c["start"]["cpu_ns"]) / 1e9 for c in cs]
    per_gb, per_file = least_squares_2([(g, f, v) for (g, f), v in zip(x, y)])
    copies = [{"set": c["set"], "repeat": c["repeat"], "gb": g, "files": f, "cpu_s": v, "fit_cpu_s": per_gb * g + per_file * f,
               "copy_s": (c["copied"]["t_ns"] - c["start"]["t_ns"]) / 1e9, "sync_s": sy["sync_s"], "sync_disk_bytes": sy["disk_bytes"],
               "dirty_after_copy": c["copied"].get("dirty_bytes")}
              for c, (g, f), v, sy in zip(cs, x, y, copy_syncs(sc))]
    return {"per_gb": per_gb, "per_file": per_file, "copies": copies}


def copy_costs(cnn, node, sc):
    """The copies' CPU per GB and per file (split.json): the staging copy's from the staging-copies recording
    (copy_fit); the checkpoint's per GB from the cnn-io epoch-0 checkpoint's wall time (serialise_per_gb). Without
    the staging-copies recording (sc None), the session-4b prior: the staging copy's per GB is the checkpoint's,
    its per file the cnn-io staging process's CPU less that."""
    local = next(s for s in node["storage"] if s["name"] == "local")
    per_gb = serialise_per_gb(cnn, local["write_bps"], node["gpu_d2h_bps"], local.get("sync_s_per_file", 0.0))
    if sc is not None:
        cf = copy_fit(sc)
        return {"staging_per_gb": cf["per_gb"], "staging_per_file": cf["per_file"], "checkpoint_per_gb": per_gb, "copy_fit": cf}
    sf = staging_fit(cnn)
    per_file = (sf["proc_core_s"] - per_gb * cnn["job"]["dataset_bytes"] / 1e9) / sf["files"]
    return {"staging_per_gb": per_gb, "staging_per_file": per_file, "checkpoint_per_gb": per_gb, "copy_fit": None}


COPY_NOTE = "core_s_per_gb and core_s_per_file fitted on the staging-copies recording's copies (split.json)"

DAY2 = os.path.join(REC, "day2")  # the second recording day (split.json "day2"): its node probe, then both jobs
NODE2 = os.path.join(ROOT, "models", "lifecycle", "h200-node-day2.json")


def save_fit(sp):
    """The save probe's checkpoints (split.json day2): per save, from job.json's marks, torch.save's process CPU and wall
    time (start to f.flush()'s return) and the fsync (flush return to fsync return). Checkpoint core_s_per_gb: least
    squares without intercept of the CPU on GB; the saves' time off the CPU (wall less CPU, summed) sets the device-to-
    host rate (None when that sum is not positive)."""
    saves = [{"phase": k["phase"], "set": k["set"], "repeat": k["repeat"], "bytes": k["bytes"], "gb": k["bytes"] / 1e9,
              "cpu_s": (k["saved"]["cpu_ns"] - k["start"]["cpu_ns"]) / 1e9, "save_s": (k["saved"]["t_ns"] - k["start"]["t_ns"]) / 1e9,
              "fsync_s": (k["synced"]["t_ns"] - k["saved"]["t_ns"]) / 1e9} for k in sp["job"]["saves"]]
    per_gb = sum(x["gb"] * x["cpu_s"] for x in saves) / sum(x["gb"] ** 2 for x in saves)
    off_cpu = sum(x["save_s"] - x["cpu_s"] for x in saves)
    for x in saves:
        x["fit_cpu_s"] = per_gb * x["gb"]
    return {"per_gb": per_gb, "off_cpu_s": off_cpu, "d2h_bps": sum(x["bytes"] for x in saves) / off_cpu if off_cpu > 0 else None,
            "saves": saves}


def day_syncs(sc, sf):
    """The day's probe syncs as (file data, files, seconds): the staging copies' os.sync() and the saves' fsync."""
    files = {k["phase"]: k["files"] for k in sc["job"]["copies"]}
    return [(x["bytes"], files[x["phase"]], x["sync_s"]) for x in copy_syncs(sc)] + [(x["bytes"], 1, x["fsync_s"]) for x in sf["saves"]]


def day_writeback(sc):
    """Kernel writeback CPU per file synced (split.json day2): over the probe's staging copies, the job's CPU in each copy's
    phase less the copying process's (job.json marks, start to the sync's return), summed, over their files."""
    top = {r["name"]: r for r in sc["top"]}
    extra = sum(job_cpu(sc, top[k["phase"]]) - (k["synced"]["cpu_ns"] - k["start"]["cpu_ns"]) / 1e9 for k in sc["job"]["copies"])
    return max(0.0, extra / sum(k["files"] for k in sc["job"]["copies"]))


def fit_node_day(node1, sc, sp, day="day 2", name="h200-node-day2"):
    """A day's node (split.json day2): day 1's node with the parameters its probe fits replaced (the local disk's write
    rate, time per file synced and writeback CPU, the device-to-host rate, the GPU's idle power). Returns (node, costs)."""
    import copy as copy_mod
    rule = "split.json " + name.rsplit("-", 1)[-1]  # the day's rule: day2, day3
    sf, cf = save_fit(sp), copy_fit(sc)
    pts = day_syncs(sc, sf)
    inv_rate, per_file = least_squares_2(pts)
    if not (inv_rate > 0 and per_file >= 0):
        raise SystemExit(f"fit_lifecycle.py: the {day} sync fit gave {1 / inv_rate if inv_rate else float('inf'):.3g} B/s and "
                         f"{per_file:.3g} s per file (expected a positive rate and a non-negative time per file)")
    node = copy_mod.deepcopy(node1)
    node["name"] = name
    node["description"] += f"; calibrated on {day}'s node probe ({rule})"
    local = next(s for s in node["storage"] if s["name"] == "local")
    local["write_bps"], local["sync_s_per_file"] = round(1.0 / inv_rate, -6), round(per_file, 9)
    local["writeback_core_s_per_file"] = round(day_writeback(sc), 8)
    local["note"] = f"virtio disk behind the page cache (writes reach it at the sync); fitted on {day}'s probe ({rule})"
    if sf["d2h_bps"]:
        node["gpu_d2h_bps"] = round(sf["d2h_bps"], -6)
    node["gpu_idle_w"] = round(sc["gpu_deep_idle_w"], 1)
    model = [b * inv_rate + f * per_file for b, f, _ in pts]
    ncopy = len(sc["job"]["copies"])
    pv = node["provenance"]
    pv["local.write_bps"] = (f"fitted ({day}, {rule}): least squares without intercept of the probe's {len(pts)} syncs' durations "
                             f"on their file data and files: the {ncopy} staging copies' os.sync() ({sum(t for _, _, t in pts[:ncopy]):.3f} s "
                             f"measured, {sum(model[:ncopy]):.3f} s modelled) and the {len(pts) - ncopy} saves' fsync "
                             f"({sum(t for _, _, t in pts[ncopy:]):.3f} s measured, {sum(model[ncopy:]):.3f} s modelled)")
    pv["local.sync_s_per_file"] = f"fitted with write_bps ({day}: see it)"
    pv["local.writeback_core_s_per_file"] = (f"fitted ({day}): the probe's staging copies, the job's CPU in each copy's phase less the "
                                             "copying process's, summed, over their files")
    pv["gpu_d2h_bps"] = (f"fitted ({day}): the save probe's {len(sf['saves'])} saves' bytes over their torch.save calls' time off the "
                         f"CPU (wall less process CPU, summed: {sf['off_cpu_s']:.3f} s)" if sf["d2h_bps"] else
                         f"{day}: the saves spent no time off the CPU ({sf['off_cpu_s']:.3f} s): day 1's figure kept. " + pv["gpu_d2h_bps"])
    pv["gpu_idle_w"] = f"measured ({day}): the staging-copies probe's recorder idle:start window, NVML energy counter ({sc['gpu_deep_idle_w']:.1f} W)"
    pv["day"] = f"{day}: the node probe recorded in the same device session as the jobs it predicts ({rule})"
    pv.pop("staging_fit", None)
    costs = {"staging_per_gb": cf["per_gb"], "staging_per_file": cf["per_file"], "checkpoint_per_gb": sf["per_gb"],
             "copy_fit": cf, "save_fit": sf}
    return node, costs


def staging(j, files, cc, note):
    """The recorded staging: a copy between two folders of the one disk, then os.sync(), which also writes the dataset
    generated just before it (still dirty in the page cache: its bytes and files). From day 3 (split.json day3) cc may
    add the folder-size growth and the recently freed inodes the copy meets (`recent`: R and k of this job)."""
    ph = {"name": "staging copy shared -> local", "kind": "staging", "bytes": j["dataset_bytes"], "files": files,
          "from": "local", "to": "local", "core_s_per_gb": round(cc["staging_per_gb"], 4),
          "core_s_per_file": round(cc["staging_per_file"], 8), "sync_bytes": j["dataset_bytes"], "sync_files": files,
          "note": note + "; os.sync() also writes the dataset generated just before it (sync_bytes, sync_files: still dirty)"
                  + ("; " + COPY_NOTE if cc["copy_fit"] else "")}
    return with_day3_terms(ph, cc, cc.get("recent"))


def with_day3_terms(ph, cc, recent=None):
    """A staging phase with split.json day3's terms where cc has them: core_s_per_file_growth, and the recently freed
    inodes (R) and those taken before the copy (k) where the record gives them. Without them the phase is as before."""
    if cc.get("staging_growth") is not None:
        ph["core_s_per_file_growth"] = cc["staging_growth"]
    if recent:
        ph["recently_freed_inodes"], ph["reused_before"] = recent
    return ph


def copies_scenario(sc, cc):
    """The staging-copies recording as a job: each copy (folder to folder on the one disk, then os.sync(), which writes
    only the copy: the sources were generated and synced before the copies) and the GPU-idle rests between them at
    their measured durations."""
    phases = []
    for r in sc["top"]:
        if r["kind"] == "idle" and r["name"].startswith("rest"):
            phases.append({"name": r["name"], "kind": "idle", "seconds": round(r["time_s"], 3), "note": "measured duration (a rest)"})
        elif r["kind"] == "staging":
            c = next(c for c in sc["job"]["copies"] if c["phase"] == r["name"])
            phases.append(with_day3_terms({"name": r["name"], "kind": "staging", "bytes": c["bytes"], "files": c["files"], "from": "local",
                                           "to": "local", "core_s_per_gb": round(cc["staging_per_gb"], 4),
                                           "core_s_per_file": round(cc["staging_per_file"], 8),
                                           "note": f"recorded: shutil.{c['call']} between two folders of the one disk, then os.sync(); " + COPY_NOTE}, cc))
    return phases


def copies_doc(sc, cc, name=COPIES, node="../../models/lifecycle/h200-node.json", where="staging-copies"):
    return {"name": name, "description": "Staging copies of 1 GiB, 8 x 128 MiB, 2,000 x 256 KiB and 20,000 x 12 kB files on the "
                                         f"H200 machine's local disk, each synced, three of each (traces/recordings/h200-lifecycle/"
                                         f"{where}: the fit set of the staging copy's CPU)",
            "lifecycle": {"node": node, "gpu": "h200", "recorded_cpu_ghz": 2.1, "phases": copies_scenario(sc, cc)},
            "output": {"dir": f"../../out/lifecycle-{name}"}}


def probe_doc(sp, cc, name, node, day):
    """The save probe as a job: its checkpoints (torch.save of a state dict on the GPU, flushed and fsync'd), the GPU-idle
    rests before them at their measured durations, and its two diagnostic copies (the dirty one's os.sync() also writes
    its freshly generated sources). day: the recording day described ("day2", ...)."""
    saves = {k["phase"]: k for k in sp["job"]["saves"]}
    diag = {k["phase"]: k for k in sp["job"].get("diagnostic_copies", [])}
    phases = []
    for r in sp["top"]:
        if r["kind"] == "idle" and r["name"].startswith("rest"):
            phases.append({"name": r["name"], "kind": "idle", "seconds": round(r["time_s"], 3), "note": "measured duration (a rest)"})
        elif r["name"] in saves:
            phases.append({"name": r["name"], "kind": "checkpoint", "bytes": saves[r["name"]]["bytes"], "to": "local",
                           "core_s_per_gb": round(cc["checkpoint_per_gb"], 4), "note": "recorded: torch.save of a state dict on the GPU, flushed, fsync'd"})
        elif r["name"] in diag:
            k = diag[r["name"]]
            ph = {"name": r["name"], "kind": "staging", "bytes": k["bytes"], "files": k["files"], "from": "local", "to": "local",
                  "core_s_per_gb": round(cc["staging_per_gb"], 4), "core_s_per_file": round(cc["staging_per_file"], 8),
                  "note": "diagnostic (not fitted): shutil.copytree of 44,000 files of 12 kB, then os.sync()"}
            if not k["sources_synced"]:
                ph.update(sync_bytes=k["bytes"], sync_files=k["files"])
            phases.append(ph)
    copies = {1: "one", 2: "two"}.get(len(diag), str(len(diag)))
    desc = (f"The day-{day[3:]} node probe's checkpoint saves (50 MB to 2.2 GB state dicts on the GPU, three of each"
            + (f") and its {copies} diagnostic copies" if diag else ", no diagnostic copy)")
            + f" (traces/recordings/h200-lifecycle/{day}/save-probe)")
    return {"name": name, "description": desc,
            "lifecycle": {"node": node, "gpu": "h200", "recorded_cpu_ghz": 2.1, "phases": phases},
            "output": {"dir": f"../../out/lifecycle-{name}"}}


def cnn_scenario(cnn, cc, vwarm, shape=None):
    """The cnn-io job's phases: every fitted figure from cnn (day 1's fit phases); the phases themselves (epochs, their
    steps, checkpoint and dataset bytes, the measured set-up duration) from shape, the recording predicted (default cnn)."""
    shape = shape or cnn
    j = shape["job"]
    a = cnn["job"]["args"]
    nfiles = a["images"] + a["val_images"]
    per_img = j["dataset_bytes"] / nfiles
    ep0 = rows(cnn, "train")[0]
    va0 = rows(cnn, "validation")[0]
    steps = cnn["job"]["epochs"][0]["steps"]
    # Decoding cost per sample: the workers' CPU over the whole epoch (they decode exactly its batches, and keep
    # decoding while the profiler holds the training loop, so neither the part after the Kineto window nor the
    # epoch net of it counts them all). The host's step time: the part after the window (its warm-up steps and
    # the profiler left out).
    decode = (ep0["proc_cpu_core_s"] - ep0["main_cpu_core_s"]) / (steps * a["batch"])
    main_busy = min(1.0, ep0["net"]["main_cpu_core_s"] / ep0["net"]["time_s"])
    st = steady(cnn, ep0)
    n = st["next_calls"] - 1  # the last next() ends the epoch
    ld, vld = loader_fit(cnn, ep0), loader_fit(cnn, va0)
    fed = (st["time_s"] - st["data_wait_s"] + st["next_calls"] * ld["fetch_s"]) / n
    vsteps = math.ceil(a["val_images"] / a["batch"])
    # The validation loader's workers end with it: their CPU time moves into the training process's
    # children's time when they are reaped, so the process split is unreliable here; all the job's CPU of
    # the phase (job_cpu: the process tree and the kernel's work beyond the samplers) is put on the decoding.
    vdecode = (job_cpu(cnn, va0) - vwarm["core_s"]) / a["val_images"]
    # steady: the first validation's one-time costs and its loader start left out
    vfed = (va0["time_s"] - va0["data_wait_s"] - vwarm["s"] - vld["start_s"] + (va0["data_waits"]) * vld["fetch_s"]) / vsteps
    ck_cpu = cc["checkpoint_per_gb"]
    rec = "../../traces/recordings/h200-lifecycle/cnn-io/recording"
    phases = [staging(j, nfiles, cc, "recorded: shutil.copytree between two folders of the one disk (source in the page cache)"),
              {"name": "model set-up", "kind": "idle", "seconds": round(rows(shape, "setup")[1]["time_s"], 3),
               "note": "measured duration (model build, DataLoader set-up): not predicted"}]
    for e in j["epochs"]:
        k = e["epoch"]
        phases.append({"name": f"epoch {k}", "kind": "train", "steps": e["steps"], "samples_per_step": a["batch"],
                       "read_bytes_per_step": round(per_img * a["batch"]), "read_from": "local", "workers": a["workers"],
                       "prefetch": 4, "core_s_per_sample": round(decode, 7), "main_core_busy": round(main_busy, 4),
                       "host_step_s": round(fed, 6), "loader_start_s": round(ld["start_s"], 4), "trace": rec})
        phases.append({"name": f"validation {k}", "kind": "validation", "steps": vsteps, "samples_per_step": a["val_images"] / vsteps,
                       "read_bytes_per_step": round(per_img * a["val_images"] / vsteps), "read_from": "local",
                       "workers": a["workers"], "prefetch": 2, "core_s_per_sample": round(vdecode, 7),
                       "host_step_s": round(vfed, 6), "loader_start_s": round(vld["start_s"], 4), "gpu_step_s": "REPLAY/3",
                       "gpu_step_w": "REPLAY_W"})
        phases.append({"name": f"checkpoint {k}", "kind": "checkpoint", "bytes": e["checkpoint_bytes"], "to": "local",
                       "core_s_per_gb": round(ck_cpu, 4)})
    return phases


def llm_scenario(llm, cc, vwarm, shape=None):
    """The llm-finetune job's phases: every fitted figure from llm (day 1's fit phases); the phases themselves (segments
    and their steps, validations, checkpoints and their bytes, dataset bytes, the measured set-up duration) from shape,
    the recording predicted (default llm)."""
    shape = shape or llm
    j = shape["job"]
    a = llm["job"]["args"]
    tr = rows(llm, "train")
    va = rows(llm, "validation")
    seg0 = tr[0]
    with open(os.path.join(shape["dir"], "lifecycle.json")) as f:
        life = json.load(f)
    waits = [p for p in life["phases"] if p["kind"] == "data_wait"]

    def nsteps(r):
        return sum(1 for p in waits if r["t0_ns"] <= p["t0_ns"] and p["t1_ns"] <= r["t1_ns"])
    st = steady(llm, seg0)
    s0 = st["next_calls"]  # the loop breaks out: every next() is a step
    ld, vld = loader_fit(llm, seg0), loader_fit(llm, va[0])
    fed = (st["time_s"] - st["data_wait_s"] + s0 * ld["fetch_s"]) / s0
    main = min(1.0, st["main_cpu_core_s"] / st["time_s"])
    vmain = min(1.0, (job_cpu(llm, va[0]) - vwarm["core_s"]) / (va[0]["time_s"] - vwarm["s"]))
    loader = max(0.0, st["proc_cpu_core_s"] - st["main_cpu_core_s"]) / (s0 * a["batch"])
    v0 = va[0]
    vsteps = a["val_batches"]
    # steady: the first validation's one-time costs and its loader start left out
    vfed = (v0["time_s"] - v0["data_wait_s"] - vwarm["s"] - vld["start_s"] + v0["data_waits"] * vld["fetch_s"]) / vsteps
    rec = "../../traces/recordings/h200-lifecycle/llm-finetune/recording"
    phases = [staging(j, 1, cc, "recorded: one file copied (shutil.copyfile) between two folders of the one disk"),
              {"name": "model set-up", "kind": "idle", "seconds": round(rows(shape, "setup")[1]["time_s"], 3),
               "note": "measured duration: not predicted"}]
    tops = [r for r in shape["top"] if r["kind"] in ("train", "validation", "checkpoint")]
    ck = iter(j["checkpoints"])
    for r in tops:
        if r["kind"] == "train":
            phases.append({"name": f"training {len([p for p in phases if p['kind'] == 'train'])}", "kind": "train",
                           "steps": nsteps(r), "samples_per_step": a["batch"], "read_bytes_per_step": a["batch"] * (a["seq"] + 1) * 2,
                           "read_from": "local", "workers": a["workers"], "prefetch": 2, "core_s_per_sample": round(loader, 7),
                           "main_core_busy": round(main, 4), "host_step_s": round(fed, 6), "loader_start_s": round(ld["start_s"], 4),
                           "trace": rec})
        elif r["kind"] == "validation":
            phases.append({"name": f"validation {len([p for p in phases if p['kind'] == 'validation'])}", "kind": "validation",
                           "steps": vsteps, "samples_per_step": a["batch"], "read_bytes_per_step": a["batch"] * (a["seq"] + 1) * 2,
                           "read_from": "local", "workers": a["workers"], "prefetch": 2, "core_s_per_sample": round(loader, 7),
                           "main_core_busy": round(vmain, 4), "host_step_s": round(vfed, 6),
                           "loader_start_s": round(vld["start_s"], 4), "gpu_step_s": "REPLAY/3",
                           "gpu_step_w": "REPLAY_W"})
        else:
            c = next(ck)
            phases.append({"name": f"checkpoint step {c['step']}", "kind": "checkpoint", "bytes": c["bytes"], "to": "local",
                           "core_s_per_gb": round(cc["checkpoint_per_gb"], 4)})
    return phases


def replay_step(bin_, rec_dir):
    """GPU busy time and power of one training step: the recording's profiled steps replayed (native governor)."""
    sc = {"name": "step", "trace": rec_dir, "gpu": "h200", "policy": "native"}
    path = os.path.join("/tmp", f"lifecycle_step_{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump(sc, f)
    out = json.loads(subprocess.run([bin_, "run", path, "--json", "-o", "/tmp/lifecycle_step_out"], check=True,
                                    capture_output=True, text=True).stdout)
    n = len(out["steps"])
    busy = out["totals"]["busy_s"] / n
    j = (out["totals"]["energy_j"] - out["energy_by_phase_j"].get("host_gaps", 0.0)) / n
    return busy, j / busy


def resolve_validation(phases, busy, w):
    for p in phases:
        if p.get("gpu_step_s") == "REPLAY/3":
            p["gpu_step_s"] = round(busy / 3, 6)
            p["gpu_step_w"] = round(w, 1)
            p["note"] = "GPU step: a third of the replayed training step's busy time (forward only) at its power: an assumption, no trace of validation"
    return phases


POLICIES = [
    {"name": "GPU 1200 MHz in input-bound phases", "gpu_sm_mhz_input_bound": 1200},
    {"name": "CPU 1.6 GHz", "cpu_pstate": 1},
    {"name": "dataset on shared storage, staged to local", "dataset_on": "shared"},
    {"name": "dataset on shared storage, read in place", "dataset_on": "shared", "staging": "skip"},
]


def scenario(name, desc, phases, first, node="../../models/lifecycle/h200-node.json"):
    first = dict(first, note="one-time costs of the first training / validation phase (split.json: fitted on the first "
                             "phase of each kind only); later phases pay the steady costs")
    return {"name": name, "description": desc,
            "lifecycle": {"node": node, "gpu": "h200", "recorded_cpu_ghz": 2.1,
                          "phases": phases, "first_occurrence": first, "policies": POLICIES},
            "output": {"dir": f"../../out/lifecycle-{name}"}}


def like_for_like(a, r):
    """The measured figures of a phase over the same batches as the model's (which runs every step of the phase and no
    profiler). Without a Kineto window: the phase as measured. With one ("net" leaves the window out, its profiled
    steps with it): time and GPU J are the net figures plus the profiled steps at the steady per-step rates (the part
    after the window); CPU is the whole phase's less the profiler's own CPU in the training process (its CPU in the
    window beyond its steady rate over those steps). Not the net CPU: while the profiler holds the loop the loader
    workers decode the batches of the steps after it (their prefetch slots fill), so the net figure misses those."""
    out = {"time_s": r["net"]["time_s"], "gpu_j": r["net"]["gpu_j"], "cpu_core_s": job_cpu(a, r), "profiled_steps": 0}
    if not r.get("profiler"):
        return out
    d = la.load(a["dir"])
    w = la.profiler_window(d)
    n_win = sum(1 for p in d["life"]["phases"] if p["kind"] == "data_wait" and w[0] <= p["t0_ns"] < w[1])
    st = steady(a, r)
    step_s, step_j = st["time_s"] / st["next_calls"], st["gpu_j"] / st["next_calls"]
    pr = r["profiler"]
    excess = max(0.0, pr["main_cpu_core_s"] - st["main_cpu_core_s"] / st["time_s"] * n_win * step_s)
    whole = la.job_cpu_core_s(r, a["sampler_core_per_s"])
    return {"time_s": r["net"]["time_s"] + n_win * step_s, "gpu_j": r["net"]["gpu_j"] + n_win * step_j,
            "cpu_core_s": whole - excess, "profiled_steps": n_win, "profiler_cpu_core_s": excess}


def compare(bin_, path, a, fit_names, roles=None):
    out = json.loads(subprocess.run([bin_, "run", path, "--json", "-o", "/tmp/lifecycle_validation_out"], check=True, capture_output=True, text=True).stdout)
    sim = {p["name"]: p for p in out["phases"]}
    meas = [r for r in a["top"] if r["kind"] in ("staging", "train", "validation", "checkpoint")]
    names = [p["name"] for p in out["phases"] if p["kind"] != "idle"]
    res = []
    for r, n in zip(meas, names):
        s = sim[n]
        m = r["net"]
        lk = like_for_like(a, r)
        res.append({"phase": n, "kind": r["kind"], "role": (roles or {}).get(n, "fit" if n in fit_names else "held out"),
                    "time_s": [lk["time_s"], s["time_s"]], "gpu_j": [lk["gpu_j"], s["gpu_j"]],
                    "cpu_core_s": [lk["cpu_core_s"], s["cpu_core_s"]], "profiled_steps": lk["profiled_steps"],
                    "unc": {"time_s": 0.0, "gpu_j": m["gpu_j_unc"], "cpu_core_s": m["cpu_busy_core_s_unc"]},
                    "cpu_j_model": s["cpu_j"], "data_wait_s": [r["data_wait_s"], s["data_wait_s"]]})
    return out, res


def err(pair):
    m, s = pair
    return (s - m) / m * 100 if m else None


KEYS = ("time_s", "gpu_j", "cpu_core_s")


def verdict(pair, unc):
    """"yes": within 10 %; "unc": a larger error the measurement cannot tell apart from 10 % (its worst-case
    interpolation bound covers the rest); "no": a miss beyond the measurement's resolution."""
    m, sim = pair
    if not m:
        return "-"
    if abs(sim - m) <= 0.1 * abs(m):
        return "yes"
    return "unc" if abs(sim - m) <= 0.1 * abs(m) + unc else "no"


def cell(pair, unc, digits):
    """'meas ± bound / sim | err (bound %)', the error in bold when it is a miss beyond the bound."""
    m, sim = pair
    e = err(pair)
    v = verdict(pair, unc)
    meas = f"{m:.{digits}f}" + (f" ± {unc:.{digits}f}" if unc >= 0.5 * 10 ** -digits else "")
    if e is None:
        return f"{meas} / {sim:.{digits}f} | -"
    et = "%+.1f %%" % e + (" (± %.0f %%)" % (100 * unc / abs(m)) if unc > 0.05 * abs(m) else "")
    return f"{meas} / {sim:.{digits}f} | " + (f"**{et}**" if v == "no" else et)


def summed(sel):
    return {k: [sum(r[k][0] for r in sel), sum(r[k][1] for r in sel)] for k in KEYS}, {k: sum(r["unc"][k] for r in sel) for k in KEYS}


HEAD = ("time s meas / sim | err | GPU J meas ± bound / sim | err (bound) | CPU core-s meas ± bound / sim | err (bound)")


def table(name, res):
    lines = [f"### {name}", "", f"| phase | role | {HEAD} |", "|---|---|---|---|---|---|---|---|"]
    for r in res:
        lines.append(f"| {r['phase']} | {r['role']} | {cell(r['time_s'], 0, 2)} | {cell(r['gpu_j'], r['unc']['gpu_j'], 0)} | "
                     f"{cell(r['cpu_core_s'], r['unc']['cpu_core_s'], 1)} |")
    for role in ("fit", "held out"):
        sel = [r for r in res if r["role"] == role]
        if not sel:
            continue
        agg, unc = summed(sel)
        mape = {k: sum(abs(err(r[k])) for r in sel if err(r[k]) is not None) / len(sel) for k in KEYS}
        lines.append(f"| **all {role} ({len(sel)})** | | {cell(agg['time_s'], 0, 1)} | {cell(agg['gpu_j'], unc['gpu_j'], 0)} | "
                     f"{cell(agg['cpu_core_s'], unc['cpu_core_s'], 0)} |")
        lines.append(f"| mean abs error per phase, {role} | | | {mape['time_s']:.1f} % | | {mape['gpu_j']:.1f} % | | {mape['cpu_core_s']:.1f} % |")
    lines += ["", "Summed by kind (bounds summed: worst cases):", "",
              f"| kind | role | phases | {HEAD} | within 10 %? |", "|---|---|---|---|---|---|---|---|---|---|"]
    for kind in ("staging", "train", "validation", "checkpoint"):
        for role in ("fit", "held out"):
            sel = [r for r in res if r["kind"] == kind and r["role"] == role]
            if not sel:
                continue
            agg, unc = summed(sel)
            v = [verdict(agg[k], unc[k]) for k in KEYS]
            word = {"yes": "yes", "unc": "within the bound", "no": "**no**", "-": "-"}
            lines.append(f"| {kind} | {role} | {len(sel)} | {cell(agg['time_s'], 0, 2)} | {cell(agg['gpu_j'], unc['gpu_j'], 0)} | "
                         f"{cell(agg['cpu_core_s'], unc['cpu_core_s'], 1)} | time {word[v[0]]}, GPU J {word[v[1]]}, CPU {word[v[2]]} |")
    return "\n".join(lines) + "\n"


def by_set(rows):
    """rows grouped by their "set", the sets in the order they first appear: [(set, [rows])]."""
    groups = {}
    for r in rows:
        groups.setdefault(r["set"], []).append(r)
    return list(groups.items())


def mean_range(v, d):
    """'mean (min-max)' of v with d decimals."""
    return f"{sum(v) / len(v):.{d}f} ({min(v):.{d}f}-{max(v):.{d}f})"


def copy_table(cf, write_bps):
    """The staging-copies fit per set (means of its copies): the copying process's CPU against the fit, the copy call's
    wall time, and the sync against the node's write rate."""
    lines = ["### staging-copies: the copy's CPU fit (least squares over every copy, split.json)", "",
             f"Fitted: {cf['per_gb']:.4f} core-s per GB + {cf['per_file'] * 1e6:.2f} µs per file (the copying process's CPU "
             "time over each copy call, time.process_time_ns). Per set, mean of its copies (min-max):", "",
             "| set | GB | files | copy CPU core-s meas / fit | copy call wall s | sync s | disk bytes in the sync (GB) | sync GB/s (node: %.2f) |" % (write_bps / 1e9),
             "|---|---|---|---|---|---|---|---|"]
    for name, cs in by_set(cf["copies"]):
        def rng(k, d, scale=1.0):
            return mean_range([c[k] * scale for c in cs], d)
        rate = mean_range([c["sync_disk_bytes"] / c["sync_s"] / 1e9 for c in cs], 2)
        lines.append(f"| {name} | {cs[0]['gb']:.3f} | {cs[0]['files']} | {rng('cpu_s', 3)} / {cs[0]['fit_cpu_s']:.3f} | {rng('copy_s', 3)} | "
                     f"{rng('sync_s', 3)} | {rng('sync_disk_bytes', 3, 1e-9)} | {rate} |")
    return "\n".join(lines) + "\n"


def save_table(sf, node):
    """The day's save probe per set (means of its saves): torch.save's process CPU against the fit, its wall time, the
    fsync against the day's node."""
    local = next(s for s in node["storage"] if s["name"] == "local")
    lines = ["### day 2 save-probe: torch.save's CPU fit (least squares over every save, split.json day2)", "",
             f"Fitted: {sf['per_gb']:.4f} core-s per GB (the process's CPU over the torch.save call, time.process_time_ns, start to "
             f"f.flush()'s return). The saves' time off the CPU (wall less CPU, summed): {sf['off_cpu_s']:.3f} s"
             + (f" -> device-to-host {sf['d2h_bps'] / 1e9:.2f} GB/s" if sf["d2h_bps"] else "") + ". Per set, mean of its saves (min-max):", "",
             "| set | GB | save CPU core-s meas / fit | save wall s | fsync s meas / node |", "|---|---|---|---|---|"]
    for name, xs in by_set(sf["saves"]):
        def rng(k):
            return mean_range([x[k] for x in xs], 3)
        node_fsync = xs[0]["bytes"] / local["write_bps"] + local.get("sync_s_per_file", 0.0)
        lines.append(f"| {name} | {xs[0]['gb']:.3f} | {rng('cpu_s')} / {xs[0]['fit_cpu_s']:.3f} | {rng('save_s')} | {rng('fsync_s')} / {node_fsync:.3f} |")
    return "\n".join(lines) + "\n"


NODE_KEYS = (("local write_bps (GB/s)", lambda n: n["storage"][0]["write_bps"] / 1e9, 2),
             ("local sync_s_per_file (µs)", lambda n: n["storage"][0].get("sync_s_per_file", 0.0) * 1e6, 2),
             ("local writeback_core_s_per_file (µs)", lambda n: n["storage"][0]["writeback_core_s_per_file"] * 1e6, 2),
             ("gpu_d2h_bps (GB/s)", lambda n: n["gpu_d2h_bps"] / 1e9, 2), ("gpu_idle_w (W)", lambda n: n["gpu_idle_w"], 1))


def node_table(node1, cc1, node2, cc2):
    rows_ = [(k, f"{f(node1):.{d}f}", f"{f(node2):.{d}f}") for k, f, d in NODE_KEYS]
    rows_ += [("staging copy core-s per GB", f"{cc1['staging_per_gb']:.4f}", f"{cc2['staging_per_gb']:.4f}"),
              ("staging copy µs per file", f"{cc1['staging_per_file'] * 1e6:.2f}", f"{cc2['staging_per_file'] * 1e6:.2f}"),
              ("checkpoint (torch.save) core-s per GB", f"{cc1['checkpoint_per_gb']:.4f}", f"{cc2['checkpoint_per_gb']:.4f}")]
    lines = ["### Node parameters by day (split.json: day 1 from cnn-io's fit phases and staging-copies, day 2 from the day-2 probe)", "",
             "| parameter | day 1 (h200-node.json) | day 2 (h200-node-day2.json) |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows_]
    return "\n".join(lines) + "\n"


def kind_errs(res, kind, role=None):
    sel = [r for r in res if r["kind"] == kind and (role is None or r["role"] == role)]
    if not sel:
        return None
    agg, unc = summed(sel)
    marks = {"yes": "", "unc": "°", "no": "✗"}
    return f"({len(sel)}) " + " / ".join("%+.1f %%%s" % (err(agg[k]), marks[verdict(agg[k], unc[k])]) for k in KEYS)


def days_table(report):
    """Per job and kind, summed: day 1 (fit, held out) beside day 2 (held out, with the day-2 node and with day 1's)."""
    lines = ["### Per kind, both days side by side (time / GPU J / CPU core-s; summed over the phases, count in brackets; "
             "✗ a miss beyond 10 % plus the bound, ° beyond 10 % but within the bound)", "",
             "| job | kind | day 1 fit (in-sample) | day 1 held out | **day 2 held out, day-2 node** | day 2 held out, day-1 node |",
             "|---|---|---|---|---|---|"]
    for job_name in ("cnn-io", "llm-finetune"):
        d1 = report["jobs"].get(job_name, {}).get("phases", [])
        d2 = report["day2"]["jobs"].get(job_name, {}).get("phases", [])
        d2o = report["day2"]["jobs_day1_node"].get(job_name, {}).get("phases", [])
        for kind in ("staging", "train", "validation", "checkpoint"):
            cells = [kind_errs(d1, kind, "fit"), kind_errs(d1, kind, "held out"), kind_errs(d2, kind), kind_errs(d2o, kind)]
            lines.append(f"| {job_name} | {kind} | " + " | ".join(c or "-" for c in cells) + " |")
    return "\n".join(lines) + "\n"


def process_cpu_rows(day, a, res):
    """Per job's checkpoints: the process tree's own CPU (/proc/<pid>/stat of the training process and its
    descendants, its host samples), the measure before split.json "cpu_measure" (all CPUs' busy time less the samplers'
    rate at rest), the job CPU the tables use now and the model's."""
    ck = [r for r in a["top"] if r["kind"] == "checkpoint"]
    sim = [r for r in res if r["kind"] == "checkpoint"]
    tree = sum(r["net"]["proc_cpu_core_s"] for r in ck)
    old = sum(r["net"]["cpu_busy_core_s"] - a["sampler_core_per_s"] * r["net"]["time_s"] for r in ck)
    meas, mod = sum(r["cpu_core_s"][0] for r in sim), sum(r["cpu_core_s"][1] for r in sim)
    name = os.path.basename(os.path.dirname(a["dir"]))
    return (f"| {day} | {name} | {len(ck)} | {sum(r['time_s'] for r in ck):.2f} | {tree:.2f} | {old:.2f} ({(old - tree) / tree * 100:+.1f} %) | "
            f"{meas:.2f} | {mod:.2f} | {(mod - meas) / meas * 100:+.1f} % |")


def diagnostics(report, day1, d2):
    """Findings from the day-2 recording, reported (split.json day2: not used to fit or to choose)."""
    lines = ["### Diagnostics (measured; not fitted, not used to choose anything)", "",
             "Checkpoints, CPU: the job's process tree's own CPU time (utime + stime + cutime + cstime of /proc/<pid>/stat, "
             "the training process and its descendants, host samples) beside the measure before split.json's cpu_measure "
             "(all CPUs' busy time less the samplers' rate at rest, vs the tree), the job CPU the tables use now "
             "(the tree plus the CPU outside it beyond the samplers' rate at rest) and the model's:", "",
             "| day | job | checkpoints | time s | process tree core-s | all CPUs less samplers at rest (before) | job CPU core-s (tables) | model core-s | model vs tables |",
             "|---|---|---|---|---|---|---|---|---|"]
    for day, a, res in (("1", day1["cnn"], report["jobs"]["cnn-io"]["phases"]), ("1", day1["llm"], report["jobs"]["llm-finetune"]["phases"]),
                        ("2", d2.get("cnn-io"), report["day2"]["jobs"].get("cnn-io", {}).get("phases")),
                        ("2", d2.get("llm-finetune"), report["day2"]["jobs"].get("llm-finetune", {}).get("phases"))):
        if a is not None and res:
            lines.append(process_cpu_rows(day, a, res))
    lines += ["",
              "Copy calls of 12 kB files by folder size: the copying process's CPU per file (job.json marks; the cnn-io "
              "staging's from its host samples, the copy before the sync):", "",
              "| day | copy | files | sources | copy call s | core-s | µs per file |", "|---|---|---|---|---|---|---|"]
    for day, sc, cnn, sp in (("1", day1.get("sc"), day1["cnn"], None), ("2", d2.get(COPIES), d2.get("cnn-io"), d2.get("save-probe"))):
        cs = [c for c in (sc or {"job": {"copies": []}})["job"]["copies"] if c["set"] == "tiny-20k"]
        cs += (sp or {"job": {}})["job"].get("diagnostic_copies", [])
        for c in cs:
            cpu = (c["copied"]["cpu_ns"] - c["start"]["cpu_ns"]) / 1e9
            src = "synced" if c.get("sources_synced", True) else "dirty"
            lines.append(f"| {day} | {c.get('phase', c['set'])} | {c['files']} | {src} | {(c['copied']['t_ns'] - c['start']['t_ns']) / 1e9:.2f} | "
                         f"{cpu:.2f} | {cpu / c['files'] * 1e6:.0f} |")
        if cnn is not None:
            sf = staging_fit(cnn)
            lines.append(f"| {day} | cnn-io staging (copytree of the generated dataset) | {sf['files']} | dirty | {sf['copy_s']:.2f} | "
                         f"{sf['proc_core_s']:.2f} | {sf['proc_core_s'] / sf['files'] * 1e6:.0f} |")
    return "\n".join(lines) + "\n"


HISTORY = os.path.join(REC, "validation-session4b.json")


def history_table(report):
    """Per job, phase kind and role: the error before session 5 (validation-session4b.json) -> now, held-out and fit
    (in-sample) rows side by side."""
    with open(HISTORY) as f:
        old = json.load(f)["jobs"]
    lines = ["### Per kind: session 4b (before the staging-copies recording) -> now", "",
             "| job | kind | fit (in-sample): time / GPU J / CPU core-s | held out: time / GPU J / CPU core-s |", "|---|---|---|---|"]
    for job_name, j in report["jobs"].items():
        kinds = []
        for r in j["phases"]:
            if r["kind"] not in kinds:
                kinds.append(r["kind"])
        for kind in kinds:
            cells = []
            for role in ("fit", "held out"):
                sel = [r for r in j["phases"] if r["kind"] == kind and r["role"] == role]
                if not sel:
                    cells.append("-")
                    continue
                now, _ = summed(sel)
                was = old.get(job_name, {}).get(f"{kind}, {role}")
                cells.append(f"({len(sel)}) " + " / ".join(("%+.1f -> " % err(was[k]) if was else "new: ") + "%+.1f %%" % err(now[k]) for k in KEYS))
            lines.append(f"| {job_name} | {kind} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def day2_parts():
    """The day-2 recordings present (split.json day2), analysed: {name: analysis}."""
    return {n: job(n, DAY2) for n in (COPIES, "save-probe", "cnn-io", "llm-finetune")
            if os.path.isdir(os.path.join(DAY2, n, "recording"))}


def day2(args, day1, stale):
    """Day 2 (split.json day2): the node fitted on the day's probe, the day's jobs predicted with it and day 1's other
    parameters (and, beside them, with day 1's node). Writes the day-2 node and scenarios; returns (markdown, report)."""
    d = day2_parts()
    if COPIES not in d or "save-probe" not in d:
        return [], None
    node2, cc2 = fit_node_day(day1["node"], d[COPIES], d["save-probe"])
    write(NODE2, json.dumps(node2, indent=1) + "\n", args.check, stale)
    rel2 = "../../models/lifecycle/h200-node-day2.json"
    docs = {"day2-staging-copies": copies_doc(d[COPIES], cc2, "day2-staging-copies", rel2, "day2/staging-copies"),
            "day2-save-probe": probe_doc(d["save-probe"], cc2, "day2-save-probe", rel2, "day2")}
    cnn, llm, first = day1["cnn"], day1["llm"], day1["first"]
    with_day1_node = {}  # the same phases priced with day 1's node and copy costs
    for name, fn, fit_a, desc in (("cnn-io", cnn_scenario, cnn, "The I/O-heavy CNN job"), ("llm-finetune", llm_scenario, llm, "The GPU-bound GPT-like fine-tune")):
        if name not in d:
            continue
        busy, w = day1["replay"][name]
        ph = resolve_validation(fn(fit_a, cc2, first[name]["validation"], shape=d[name]), busy, w)
        ph1 = resolve_validation(fn(fit_a, day1["cc"], first[name]["validation"], shape=d[name]), busy, w)
        with_day1_node["day2-" + name] = scenario("day2-" + name, "", ph1, first[name])
        docs["day2-" + name] = scenario("day2-" + name, f"{desc} recorded on day 2 (traces/recordings/h200-lifecycle/day2/{name}), "
                                        "held out entirely: the day-2 node, every other parameter from day 1's fit phases "
                                        "(split.json day2)", ph, first[name], node=rel2)
    for n, doc in docs.items():
        write(os.path.join(SCEN, n + ".json"), json.dumps(doc, indent=1) + "\n", args.check, stale)
    rec_of = {"day2-staging-copies": COPIES, "day2-save-probe": "save-probe", "day2-cnn-io": "cnn-io", "day2-llm-finetune": "llm-finetune"}
    report = {"node": node2, "copy_fit": cc2["copy_fit"], "save_fit": cc2["save_fit"], "jobs": {}, "jobs_day1_node": {}}
    md = ["## Day 2: the node calibrated on the day, then the jobs predicted (split.json day2)", "",
          node_table(day1["node"], day1["cc"], node2, cc2)]
    diag = {k["phase"]: "diagnostic" for k in d["save-probe"]["job"].get("diagnostic_copies", [])}
    for n, doc in docs.items():
        an = d[rec_of[n]]
        probe = n in ("day2-staging-copies", "day2-save-probe")
        fit_names = {r["name"] for r in an["top"]} if probe else set()
        out, res = compare(args.bin, os.path.join(SCEN, n + ".json"), an, fit_names, diag)
        report["jobs"][rec_of[n]] = {"phases": res, "simulated": {"totals": out["totals"], "by_kind": out["by_kind"]},
                                     "measured": {"by_kind": an["by_kind"], "total": an["total"], "gpu_deep_idle_w": an["gpu_deep_idle_w"]}}
        md.append(table(n, res))
        if not probe:  # the same scenario with day 1's node: what calibrating on the day changes
            tmp = os.path.join(SCEN, f".tmp-{n}-day1-node-{os.getpid()}.json")
            with open(tmp, "w") as f:
                json.dump(with_day1_node[n], f)
            try:
                report["jobs_day1_node"][rec_of[n]] = {"phases": compare(args.bin, tmp, an, set())[1]}
            finally:
                os.remove(tmp)
    md.append(copy_table(cc2["copy_fit"], node2["storage"][0]["write_bps"]).replace("### staging-copies", "### day 2 staging-copies"))
    md.append(save_table(cc2["save_fit"], node2))
    return md, report


SWEEP, AGED = "folder-sweep", "folder-sweep-aged"
SWEEP_DAYS = ("day3", "day4")  # the days recorded under the day3 rule (split.json day3; day4: "the day3 rule, unchanged")


def day_parts(base, names):
    """The recordings of a day present and complete (run.json written: a job that failed leaves none), analysed."""
    return {n: job(n, base) for n in names if os.path.isfile(os.path.join(base, n, "recording", "run.json"))}


def read_log(base, name):
    path = os.path.join(base, "logs", name)
    return open(path).read() if os.path.exists(path) else ""


def sweep_doc(sw, cc, node, name, where, freed, day="day3"):
    """The folder sweep as a job (split.json day3, and every later sweep day): its copies (sources synced before: a sync
    writes only its copy) with the day's growth and scan terms, the recent and aged copies meeting the removal's freed
    inodes (the pool model, whatever the age: split.json day3 amended_before_recording); the GPU-idle rests at their
    measured durations."""
    copies = {c["phase"]: c for c in sw["job"]["copies"]}
    phases = []
    for r in sw["top"]:
        if r["kind"] == "idle" and r["name"].startswith(("rest", "wait")):
            phases.append({"name": r["name"], "kind": "idle", "seconds": round(r["time_s"], 3), "note": "measured duration"})
        elif r["name"] in copies:
            c = copies[r["name"]]
            near = c["condition"] in ("recent", "aged")
            phases.append(with_day3_terms({"name": r["name"], "kind": "staging", "bytes": c["bytes"], "files": c["files"], "from": "local",
                                           "to": "local", "core_s_per_gb": round(cc["staging_per_gb"], 4),
                                           "core_s_per_file": round(cc["staging_per_file"], 8),
                                           "note": f"recorded ({c['condition']}): shutil.copytree to a fresh folder, then os.sync()"},
                                          cc, (freed, c.get("created_since_deletion") or 0) if near else None))
    return {"name": name, "description": f"The day-{day[3:]} folder sweep (traces/recordings/h200-lifecycle/{day}/{where}): copies of "
                                         f"5,000-88,000 files of 12 kB, clean, after a removal, and aged (split.json {day})",
            "lifecycle": {"node": node, "gpu": "h200", "recorded_cpu_ghz": 2.1, "phases": phases},
            "output": {"dir": f"../../out/lifecycle-{name}"}}


def fit_sweep_node(node1, d, day="day3"):
    """A sweep day's node and copy costs (split.json day3, and the days recorded under its rule): fit_node_day on the
    day's staging copies and saves, then the folder sweep's growth and recently-freed-inode scan terms."""
    import folder_sweep_fit as fsf
    node_day, cc_day = fit_node_day(node1, d[COPIES], d["save-probe"], f"day {day[3:]}", f"h200-node-{day}")
    per_group, group_src = fsf.inodes_per_group(read_log(os.path.join(REC, day), "fs.log"))
    sj = d[SWEEP]["job"]
    growth = fsf.growth_fit(sj, cc_day["staging_per_gb"], cc_day["staging_per_file"])
    scan = fsf.scan_fit(sj, cc_day["staging_per_gb"], cc_day["staging_per_file"], growth, per_group)
    local = next(x for x in node_day["storage"] if x["name"] == "local")
    local["recent_free_scan_core_s"], local["inodes_per_group"] = round(scan, 12), per_group
    pv = node_day["provenance"]
    pv["local.recent_free_scan_core_s"] = (f"fitted (day {day[3:]}, split.json {day}): least squares without intercept over the folder "
                                           "sweep's recent copies of the process CPU less the linear price and growth, on the "
                                           f"recently freed inodes scanned (removal: {fsf.recently_freed(sj):.0f} inodes freed)")
    pv["local.inodes_per_group"] = group_src
    cc_day["staging_growth"] = growth
    cc_day["sweep"] = {"growth": growth, "scan": scan, "inodes_per_group": per_group}
    return node_day, cc_day


def sweep_day(args, day1, stale, day="day3"):
    """A day under the day3 rule (split.json day3; day4 applies it unchanged): the day-2 procedure plus the folder sweep's
    terms; the day's jobs held out. Writes the day's node (h200-node-DAY.json) and scenarios (DAY-*); returns (markdown, report)."""
    import folder_sweep_fit as fsf
    base, num = os.path.join(REC, day), day[3:]
    d = day_parts(base, (COPIES, "save-probe", SWEEP, AGED, "cnn-io", "llm-finetune"))
    if not all(n in d for n in (COPIES, "save-probe", SWEEP)):
        return [], None
    node_day, cc_day = fit_sweep_node(day1["node"], d, day)
    write(os.path.join(ROOT, "models", "lifecycle", f"h200-node-{day}.json"), json.dumps(node_day, indent=1) + "\n", args.check, stale)
    rel_node = f"../../models/lifecycle/h200-node-{day}.json"
    freed = fsf.recently_freed(d[SWEEP]["job"])
    rec_of = {f"{day}-{r}": r for r in (COPIES, "save-probe", SWEEP, AGED, "cnn-io", "llm-finetune") if r in d}
    docs = {f"{day}-staging-copies": copies_doc(d[COPIES], cc_day, f"{day}-staging-copies", rel_node, f"{day}/staging-copies"),
            # each day's probe scenario names its own day
            f"{day}-save-probe": probe_doc(d["save-probe"], cc_day, f"{day}-save-probe", rel_node, day)}
    for part in (SWEEP, AGED):
        if part in d:
            docs[f"{day}-{part}"] = sweep_doc(d[part], cc_day, rel_node, f"{day}-{part}", part, freed, day)
    rm = fsf.removal(read_log(base, "removal.log")) if "cnn-io" in d else None
    beside = {}  # not used to choose: today's price (no sweep terms) with the day's node, and day 1's node and costs
    today = {k: v for k, v in cc_day.items() if k not in ("staging_growth", "recent")}
    for name, fn, fit_a, desc in (("cnn-io", cnn_scenario, day1["cnn"], "The I/O-heavy CNN job"),
                                  ("llm-finetune", llm_scenario, day1["llm"], "The GPU-bound GPT-like fine-tune")):
        if name not in d:
            continue
        busy, w = day1["replay"][name]
        vw = day1["first"][name]["validation"]
        a = fit_a["job"]["args"]
        # R and k of this job's staging (split.json day3): the probe's removal, less the dataset generated before the copy
        recent = (rm["inodes_freed"], a["images"] + a["val_images"] + 2) if name == "cnn-io" else None
        ph = resolve_validation(fn(fit_a, dict(cc_day, recent=recent), vw, shape=d[name]), busy, w)
        docs[f"{day}-{name}"] = scenario(f"{day}-{name}", f"{desc} recorded on day {num} (traces/recordings/h200-lifecycle/{day}/{name}), "
                                         f"held out entirely: the day-{num} node and folder-sweep terms, every other parameter from "
                                         f"day 1's fit phases (split.json {day})", ph, day1["first"][name], node=rel_node)
        beside[("today's price", name)] = scenario(f"{day}-{name}", "", resolve_validation(fn(fit_a, today, vw, shape=d[name]), busy, w),
                                                   day1["first"][name], node=rel_node)
        beside[("day-1 node", name)] = scenario(f"{day}-{name}", "", resolve_validation(fn(fit_a, day1["cc"], vw, shape=d[name]), busy, w),
                                                day1["first"][name])
    for n, doc in docs.items():
        write(os.path.join(SCEN, n + ".json"), json.dumps(doc, indent=1) + "\n", args.check, stale)
    sw = cc_day["sweep"]
    report = {"node": node_day, "copy_fit": cc_day["copy_fit"], "save_fit": cc_day["save_fit"], "sweep_fit": sw,
              "removal": rm, "jobs": {}, "beside": {}}
    md = [f"## Day {num}: the node and the folder sweep calibrated on the day, then the jobs predicted (split.json {day})", "",
          f"Folder sweep (fit): growth {sw['growth'] * 1e9:.3f} ns per file per file in the folder, recently-freed-inode scan "
          f"{sw['scan'] * 1e9:.1f} ns per inode scanned, {sw['inodes_per_group']} inodes per group.", ""]
    for part in (SWEEP, AGED):
        if part in d:
            md += [fsf.sweep_table(d[part]["job"], cc_day["staging_per_gb"], cc_day["staging_per_file"], sw["growth"], sw["scan"],
                                   sw["inodes_per_group"]), ""]
    for n, doc in docs.items():
        an = d[rec_of[n]]
        probe = rec_of[n] not in ("cnn-io", "llm-finetune")
        fit_names = {r["name"] for r in an["top"]} if probe else set()
        out, res = compare(args.bin, os.path.join(SCEN, n + ".json"), an, fit_names)
        report["jobs"][rec_of[n]] = {"phases": res, "simulated": {"totals": out["totals"], "by_kind": out["by_kind"]},
                                     "measured": {"by_kind": an["by_kind"], "total": an["total"], "gpu_deep_idle_w": an["gpu_deep_idle_w"]}}
        md.append(table(n, res))
    for (label, name), doc in beside.items():
        tmp = os.path.join(SCEN, f".tmp-{day}-{name}-{os.getpid()}.json")
        with open(tmp, "w") as f:
            json.dump(doc, f)
        try:
            report["beside"].setdefault(label, {})[name] = {"phases": compare(args.bin, tmp, d[name], set())[1]}
        finally:
            os.remove(tmp)
    return md, report


def write(path, text, check, stale):
    if check:
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(path)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "dvfs-sim"))
    p.add_argument("--check", action="store_true")
    a = p.parse_args()
    stale = []
    cnn, llm = job("cnn-io"), job("llm-finetune")
    sc = job(COPIES) if os.path.isdir(os.path.join(REC, COPIES, "recording")) else None
    node = fit_node(cnn, sc)
    cc = copy_costs(cnn, node, sc)
    write(NODE, json.dumps(node, indent=1) + "\n", a.check, stale)
    if not a.check:
        pass
    cb, cw = replay_step(a.bin, os.path.join(REC, "cnn-io", "recording"))
    lb, lw = replay_step(a.bin, os.path.join(REC, "llm-finetune", "recording"))
    first = {n: {k: warmup(an, rows(an, k)[0]) for k in ("train", "validation")} for n, an in (("cnn-io", cnn), ("llm-finetune", llm))}
    cnn_ph = resolve_validation(cnn_scenario(cnn, cc, first["cnn-io"]["validation"]), cb, cw)
    llm_ph = resolve_validation(llm_scenario(llm, cc, first["llm-finetune"]["validation"]), lb, lw)
    docs = {"cnn-io": scenario("cnn-io", "The I/O-heavy CNN job recorded on the H200 (traces/recordings/h200-lifecycle/cnn-io): "
                                         "staging copy, 10 epochs of decode-bound training, validation and checkpoints", cnn_ph, first["cnn-io"]),
            "llm-finetune": scenario("llm-finetune", "The GPU-bound GPT-like fine-tune recorded on the H200 "
                                                     "(traces/recordings/h200-lifecycle/llm-finetune)", llm_ph, first["llm-finetune"])}
    if sc is not None:
        docs[COPIES] = copies_doc(sc, cc)
    for n, d in docs.items():
        write(os.path.join(SCEN, n + ".json"), json.dumps(d, indent=1) + "\n", a.check, stale)
    if a.check and stale:
        print("stale: " + ", ".join(stale))
        sys.exit(1)
    fit = {"cnn-io": {"staging copy shared -> local", "epoch 0", "validation 0", "checkpoint 0"},
           "llm-finetune": {"training 0", "validation 0"},
           COPIES: {r["name"] for r in rows(sc, "staging")} if sc else set()}
    report = {"note": "measured = NVML energy counter (GPU J), the job's process tree's CPU plus all other CPU beyond the samplers' rate at rest (CPU core-s; split.json cpu_measure), "
                      "phase marks (time); sim = dvfs-sim lifecycle model outputs. CPU joules are not measured (no RAPL).",
              "replayed_step": {"cnn-io": {"gpu_busy_s": cb, "gpu_busy_w": cw}, "llm-finetune": {"gpu_busy_s": lb, "gpu_busy_w": lw}},
              "jobs": {}}
    md = ["# Lifecycle validation (generated by models/lifecycle/fit_lifecycle.py)", "",
          "Per phase, measured on the H200 vs dvfs-sim's lifecycle model (`dvfs-sim run scenarios/lifecycle/NAME.json`). "
          "A phase holding the recorder's Kineto window (the first training phase) is measured over the same batches as the "
          "model runs: time and GPU J are the figures without the window plus its profiled steps at the steady per-step rates, "
          "CPU the whole phase's less the profiler's own CPU in the training process. "
          "CPU energy is not measured on this machine (no RAPL): CPU is compared in busy core-seconds, the job's process tree's "
          "(/proc/<pid>/stat) plus all other CPU beyond the samplers' rate at rest (split.json cpu_measure). "
          "GPU J: the NVML energy counter (read every 5 ms, updated every ~100 ms) interpolated between its updates; "
          "`± bound`: the worst-case error of that at the phase's two bounds (the GPU never below its lowest 100 ms mean "
          "of the recording; dvfs_sim.lifecycle_analysis.Counter.bound_error); CPU the same for /proc/stat read every "
          "50 ms. An error is **bold** when it exceeds 10 % plus that bound (a miss the measurement resolves).", ""]
    for n, an in (("cnn-io", cnn), ("llm-finetune", llm), (COPIES, sc)):
        if an is None:
            continue
        out, res = compare(a.bin, os.path.join(SCEN, n + ".json"), an, fit[n])
        report["jobs"][n] = {"phases": res, "simulated": {"totals": out["totals"], "by_kind": out["by_kind"], "policies": out["policies"]},
                             "measured": {"by_kind": an["by_kind"], "total": an["total"], "sampler_core_per_s": an["sampler_core_per_s"],
                                          "gpu_deep_idle_w": an["gpu_deep_idle_w"]}}
        md.append(table(n, res))
    local = next(s for s in node["storage"] if s["name"] == "local")
    if cc["copy_fit"]:
        md.append(copy_table(cc["copy_fit"], local["write_bps"]))
        report["copy_fit"] = cc["copy_fit"]
    if os.path.exists(HISTORY):
        md.append(history_table(report))
    day1 = {"node": node, "cc": cc, "cnn": cnn, "llm": llm, "sc": sc, "first": first, "replay": {"cnn-io": (cb, cw), "llm-finetune": (lb, lw)}}
    md2, report2 = day2(a, day1, stale)
    if report2:
        report["day2"] = report2
        md.append(days_table(report))
        md += md2
        md.append(diagnostics(report, day1, day2_parts()))
    for day in SWEEP_DAYS:
        md_n, report_n = sweep_day(a, day1, stale, day)
        if report_n:
            report[day] = report_n
            md += md_n
    write(os.path.join(REC, "validation.json"), json.dumps(report, indent=1, default=float) + "\n", a.check, stale)
    write(os.path.join(REC, "validation.md"), "\n".join(md), a.check, stale)
    if a.check and stale:
        print("stale: " + ", ".join(stale))
        sys.exit(1)
    print("\n".join(md))


if __name__ == "__main__":
    main()
