"""Checkpoint saves of several sizes, recorded phase by phase (issue 20, session 6): the node probe's torch.save part.
The lifecycle model prices a checkpoint as a device-to-host copy, torch.save's CPU per GB (one core) and an fsync
at the disk's rate; the first recording day had one fit checkpoint (cnn-io epoch 0, 90 MB, 0.15 s) to price it.
This job saves, on the machine's local disk, state dicts held on the GPU (as both jobs' are) of

    set        bytes     tensors (fp32, on the GPU)
    save-50M   ~50 MB    a mix of 1024x1024 and 1024x4096 matrices, one 4 kB vector beside each
    save-200M  ~200 MB   (the same mix: the LLM fine-tune's layers are such matrices)
    save-800M  ~800 MB
    save-2200M ~2.2 GB   (the LLM fine-tune's checkpoint: model + AdamW state)

each as the jobs do: open(path, "wb"), torch.save(sd, f), f.flush(), os.fsync(f.fileno()). Every set is saved three
times (order reversed every other round), each its own `checkpoint` phase after a 1 s GPU-idle rest (kind `idle`); the
file is removed in the rest after it (not measured). job.json holds for every save the exact instants (time.time_ns)
and the process's CPU time (time.process_time_ns) at its start, where f.flush() returned (torch.save done) and where
os.fsync() returned, with the kernel's Dirty / Writeback bytes there.

Then two diagnostic copies (not fitted: split.json, session 6): 44,000 files of 12 kB in one folder (the cnn-io
dataset's count and size), copied by shutil.copytree and os.sync()'d, once from sources generated and synced before
(`diag-44k-clean`) and once from sources generated just before the copy and left dirty (`diag-44k-dirty`, as cnn-io
stages). They tell whether cnn-io's 59 us per file (the staging-copies fit: 39 us) comes from the folder's size or
from its dirty sources.

    python3 save_probe_job.py --out DIR [--scale S] [--files-scale F] [--repeats N] [--rest-s R] [--no-diag]

--no-diag leaves the diagnostic copies out (day 3: folder_sweep_job.py measures copies apart; split.json `day3`).

Writes DIR/recording/ (dvfs_sim.record layout) and DIR/job.json. --scale shrinks the state dicts, --files-scale the
diagnostic copies' file counts (tests on a machine without a GPU: DVFS_NVML=fake_pynvml).
"""
import json
import os
import shutil
import sys
import time

import torch

from dvfs_sim.record import Recorder

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from staging_copies_job import copy, copy_summary, generate, job_arguments, mark, recorder_steps  # noqa: E402

SETS = (("save-50M", 50e6), ("save-200M", 200e6), ("save-800M", 800e6), ("save-2200M", 2.2e9))
SHAPES = ((1024, 1024), (1024, 4096))  # fp32: 4 MiB and 16 MiB
DIAG = (("diag-44k-clean", True), ("diag-44k-dirty", False))


def state_dict(target, dev, scale):
    """A state dict of fp32 tensors on dev of about target bytes: matrices of SHAPES in turn, a 1024-vector beside each
    (scaled down by --scale for tests: the matrices' rows shrink)."""
    sd, total, i = {}, 0, 0
    while total < target:
        r, c = SHAPES[i % len(SHAPES)]
        r = max(1, int(r * scale))
        sd[f"layer{i}.weight"] = torch.randn(r, c, device=dev)
        sd[f"layer{i}.bias"] = torch.zeros(1024 if scale >= 1 else 4, device=dev)
        total += sd[f"layer{i}.weight"].numel() * 4 + sd[f"layer{i}.bias"].numel() * 4
        i += 1
    return sd, total, 2 * i


def save(sd, path, dev):
    """One checkpoint as the jobs write it; returns the three marks."""
    if dev == "cuda":
        torch.cuda.synchronize()
    m0 = mark()
    with open(path, "wb") as f:
        torch.save(sd, f)
        f.flush()
        m1 = mark()
        os.fsync(f.fileno())
        m2 = mark()
    return {"start": m0, "saved": m1, "synced": m2}


def main():
    a = job_arguments(__doc__, "state dict sizes times this (tests)", "diagnostic copies' file counts times this (tests)",
                      "GPU-idle rest before each save",
                      flags=(("--no-diag", "no diagnostic copies (the saves only)"),))
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    local = os.path.join(a.out, "local")
    os.makedirs(os.path.join(local, "checkpoints"), exist_ok=True)
    warm, prof = (int(x) for x in a.steps.split(":"))
    rec = Recorder(os.path.join(a.out, "recording"), warmup=warm, profiled=prof, idle_s=a.idle_s,
                   command="save_probe_job.py " + " ".join(sys.argv[1:]), nvml_module=os.environ.get("DVFS_NVML", "pynvml"))
    job = {"script": "save_probe_job.py", "args": vars(a), "device": dev, "torch": torch.__version__, "sets": [], "saves": [],
           "diagnostic_copies": []}
    diag_files = max(1, round(44000 * a.files_scale))
    t_job = time.time()
    with rec:
        with rec.phase("state dicts on the device (not part of the job: makes its input)", "setup"):
            dicts = {}
            for n, target in SETS:
                sd, b, tensors = state_dict(target * a.scale, dev, a.scale)
                dicts[n] = sd
                job["sets"].append({"name": n, "tensors": tensors, "tensor_bytes": b})
            if dev == "cuda":
                torch.cuda.synchronize()
        order = []
        for r in range(a.repeats):
            order += [(r, n) for n, _ in (SETS if r % 2 == 0 else SETS[::-1])]
        prev = None
        for r, n in order:
            with rec.phase(f"rest before {n} #{r}", "idle"):
                t_end = time.time() + a.rest_s
                if prev:
                    os.remove(prev)  # the last save's file: its removal is not measured
                time.sleep(max(0.0, t_end - time.time()))
            path = os.path.join(local, "checkpoints", f"{n}-{r}.pt")
            with rec.phase(f"checkpoint {n} #{r}", "checkpoint"):
                marks = save(dicts[n], path, dev)
            b = os.path.getsize(path)
            job["saves"].append({"phase": f"checkpoint {n} #{r}", "set": n, "repeat": r, "bytes": b, "files": 1, **marks})
            prev = path
            print(f"{n} #{r}: {b / 1e6:.0f} MB, save {(marks['saved']['t_ns'] - marks['start']['t_ns']) / 1e9:.3f} s "
                  f"({(marks['saved']['cpu_ns'] - marks['start']['cpu_ns']) / 1e9:.3f} core-s), fsync "
                  f"{(marks['synced']['t_ns'] - marks['saved']['t_ns']) / 1e9:.3f} s", flush=True)
        with rec.phase("rest after the saves", "idle"):
            os.remove(prev)
            del dicts
            os.sync()
            time.sleep(a.rest_s)
        block = os.urandom(64 << 20)
        for n, clean in (() if a.no_diag else DIAG):
            src, dst = os.path.join(a.out, "shared", n), os.path.join(local, n)
            with rec.phase(f"generate {n} source files" + (" and sync" if clean else " (left dirty)"), "setup"):
                generate(src, diag_files, 12 << 10, block)
                if clean:
                    os.sync()
                m = mark()
            with rec.phase(f"staging {n}", "staging"):
                marks = copy(n, "copytree", src, dst)
            job["diagnostic_copies"].append({"phase": f"staging {n}", "set": n, "files": diag_files, "bytes": diag_files * (12 << 10),
                                             "sources_synced": clean, "dirty_before": m["dirty_bytes"], "call": "copytree", **marks})
            print(f"{n}: {copy_summary(marks)}", flush=True)
            with rec.phase(f"rest after {n}", "idle"):
                time.sleep(a.rest_s)
        del block
        recorder_steps(rec, dev, a.matrix, warm + prof)
    job["wall_s"] = time.time() - t_job
    with open(os.path.join(a.out, "job.json"), "w") as f:
        json.dump(job, f, indent=1)


if __name__ == "__main__":
    main()
