"""Staging copies of several file sizes, recorded phase by phase (issue 20, session 5): separates a staging copy's
CPU per GB from its CPU per file on the machine's local disk. The lifecycle fit set's one staging (cnn-io: 44,000
files of 12 kB) cannot tell the two apart; this job copies the same kind of folder to folder, same disk, with the
calls the two recorded jobs stage with:

    set        files  size       call                         (the job whose staging it is like)
    big-1      1      1 GiB      shutil.copyfile              (llm-finetune: one 200 MB token file)
    mid-8      8      128 MiB    shutil.copytree              (a folder of large shards)
    small-2k   2,000  256 KiB    shutil.copytree              (a folder of medium files)
    tiny-20k   20,000 12 kB      shutil.copytree              (cnn-io: 44,000 JPEGs of 12 kB)

Each copy is followed by os.sync() (as the jobs do) and is its own `staging` phase in lifecycle.json; every set is
copied three times (the order reversed every other round, to a fresh folder each time), with a GPU-idle rest phase (kind `idle`)
between copies. The source files are generated first and synced (their own `setup` phase), so that no dirty page of
the generation is written by a copy's os.sync(): unlike the two jobs, whose os.sync() also wrote the input generated
just before it (the lifecycle model's `sync_bytes`), here a copy's sync writes only the copy (sync_bytes 0). The
sources stay in the page cache (generated seconds before; 125 GiB of memory), as the jobs' sources did.

Beside the recorder's 50 ms host samples, job.json holds for every copy the exact instants (time.time_ns) and the
copying process's CPU time (time.process_time_ns: the kernel's per-task runtime, ns) at its start, where the copy
call returns and where os.sync() returns, and the kernel's Dirty / Writeback page counts (/proc/meminfo) there.
After the copies, a few small matrix products on the GPU give the recorder its profiled steps (it needs >= 1);
they are not part of the measurement.

    python3 staging_copies_job.py --out DIR [--scale S] [--rest-s R]

Writes DIR/recording/ (dvfs_sim.record layout, lifecycle.json and host.csv included) and DIR/job.json. --scale
shrinks every file size (tests on a machine without a GPU: DVFS_NVML=fake_pynvml). Runs on CUDA when there is one.
"""
import argparse
import json
import os
import shutil
import sys
import time

import torch

from dvfs_sim.record import Recorder

SETS = (  # name, files, bytes per file, call
    ("big-1", 1, 1 << 30, "copyfile"),
    ("mid-8", 8, 128 << 20, "copytree"),
    ("small-2k", 2000, 256 << 10, "copytree"),
    ("tiny-20k", 20000, 12 << 10, "copytree"),
)


def meminfo():
    """Dirty and Writeback bytes from /proc/meminfo (None where unreadable)."""
    out = {"dirty_bytes": None, "writeback_bytes": None}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, v = line.split(":", 1)
                if k in ("Dirty", "Writeback"):
                    out[k.lower() + "_bytes"] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return out


def generate(folder, files, size, block):
    """files files of size bytes each, filled from a random block at rotating offsets (incompressible)."""
    os.makedirs(folder, exist_ok=True)
    off = 0
    for i in range(files):
        with open(os.path.join(folder, f"f{i:05d}.bin"), "wb") as f:
            left = size
            while left > 0:
                n = min(left, len(block) - off)
                f.write(block[off:off + n])
                left -= n
                off = (off + n) % len(block)
        off = (off + 4096 * (i + 1)) % len(block)
    return files * size


def mark():
    return {"t_ns": time.time_ns(), "cpu_ns": time.process_time_ns(), **meminfo()}


def copy(name, call, src, dst):
    """One staging copy, then os.sync(); returns the three marks."""
    m0 = mark()
    if call == "copyfile":
        os.makedirs(dst, exist_ok=True)
        for n in sorted(os.listdir(src)):
            shutil.copyfile(os.path.join(src, n), os.path.join(dst, n))
    else:
        shutil.copytree(src, dst)
    m1 = mark()
    os.sync()
    m2 = mark()
    return {"start": m0, "copied": m1, "synced": m2}


def copy_summary(marks):
    """'copy W s (C core-s), sync S s' of one copy's marks."""
    return (f"copy {(marks['copied']['t_ns'] - marks['start']['t_ns']) / 1e9:.3f} s "
            f"({(marks['copied']['cpu_ns'] - marks['start']['cpu_ns']) / 1e9:.3f} core-s), sync "
            f"{(marks['synced']['t_ns'] - marks['copied']['t_ns']) / 1e9:.3f} s")


def job_arguments(doc, scale_help, files_help, rest_help, flags=()):
    """The node-probe jobs' command line (this one and save_probe_job.py), parsed; `flags`: (name, help) of on/off
    options of one job."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, help_text in flags:
        p.add_argument(name, action="store_true", help=help_text)
    p.add_argument("--out", required=True)
    p.add_argument("--scale", type=float, default=1.0, help=scale_help)
    p.add_argument("--files-scale", type=float, default=1.0, help=files_help)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rest-s", type=float, default=1.0, help=rest_help)
    p.add_argument("--idle-s", type=float, default=2.0)
    p.add_argument("--steps", default="2:2")
    p.add_argument("--matrix", type=int, default=2048, help="side of the matrices of the profiled steps")
    return p.parse_args()


def recorder_steps(rec, dev, matrix, steps):
    """The recorder's warm-up and profiled steps (two matrix products each), after the measured phases: not part of
    the measurement, there so that the recording has a Kineto window."""
    with rec.phase("profiled steps for the recorder (not part of the measurement)", "other"):
        x = torch.randn(matrix, matrix, device=dev)
        for _ in range(steps + 1):
            y = x @ x
            if dev == "cuda":
                torch.cuda.synchronize()
            rec.step()
        del y


def main():
    a = job_arguments(__doc__, "file sizes times this (tests)", "file counts times this (tests)", "GPU-idle rest before each copy")
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    sets = [(n, max(1, round(k * a.files_scale)), max(1, int(s * a.scale)), c) for n, k, s, c in SETS]
    shared, local = os.path.join(a.out, "shared"), os.path.join(a.out, "local")
    os.makedirs(local, exist_ok=True)
    warm, prof = (int(x) for x in a.steps.split(":"))
    rec = Recorder(os.path.join(a.out, "recording"), warmup=warm, profiled=prof, idle_s=a.idle_s,
                   command="staging_copies_job.py " + " ".join(sys.argv[1:]), nvml_module=os.environ.get("DVFS_NVML", "pynvml"))
    job = {"script": "staging_copies_job.py", "args": vars(a), "device": dev, "torch": torch.__version__,
           "sets": [{"name": n, "files": k, "file_bytes": s, "bytes": k * s, "call": c} for n, k, s, c in sets],
           "copies": []}
    t_job = time.time()
    with rec:
        with rec.phase("generate source files and sync (not part of the job: makes its input)", "setup"):
            block = os.urandom(64 << 20)
            for n, k, s, _ in sets:
                generate(os.path.join(shared, n), k, s, block)
            del block
            os.sync()
        job["after_generation"] = mark()
        order = []
        for r in range(a.repeats):
            order += [(r, st) for st in (sets if r % 2 == 0 else sets[::-1])]
        for r, (n, k, s, c) in order:
            with rec.phase(f"rest before {n} #{r}", "idle"):
                time.sleep(a.rest_s)
            with rec.phase(f"staging {n} #{r}", "staging"):
                marks = copy(n, c, os.path.join(shared, n), os.path.join(local, f"{n}-{r}"))
            job["copies"].append({"phase": f"staging {n} #{r}", "set": n, "repeat": r, "files": k, "bytes": k * s,
                                  "call": c, **marks})
            print(f"{n} #{r}: {copy_summary(marks)}, dirty after copy {(marks['copied']['dirty_bytes'] or 0) / 1e6:.0f} MB",
                  flush=True)
        with rec.phase("rest after the copies", "idle"):
            time.sleep(a.rest_s)
        recorder_steps(rec, dev, a.matrix, warm + prof)
    job["wall_s"] = time.time() - t_job
    with open(os.path.join(a.out, "job.json"), "w") as f:
        json.dump(job, f, indent=1)


if __name__ == "__main__":
    main()
