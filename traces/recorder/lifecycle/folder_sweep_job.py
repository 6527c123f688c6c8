"""Copies of folders of small files, by folder size and by the disk's recent deletions (issue 20, day 3; split.json
`day3`). On day 2 a copytree of 44,000 files of 12 kB cost 72 us per file in some stretches and up to ~700 us in
others: ramps of ~8,200 files (one ext4 block group's inodes) right after many files had been deleted. This probe
tells the folder's size apart from the deletions, with the call the cnn-io job stages with (shutil.copytree):

    condition  copies                              before them
    clean      5,000 / 20,000 / 44,000 / 88,000    nothing deleted on the disk in the session (sources generated, synced)
    recent     44,000 then 5,000                   every clean copy removed and synced seconds before
    aged       44,000 (--aged)                     the same removal, at least --min-age-s earlier

Files of --file-bytes (the cnn-io dataset's mean JPEG, 12,170 bytes), each copy to a fresh folder, then os.sync(),
its own `staging` phase after a GPU-idle rest. job.json holds each copy's marks (time.time_ns, the process's CPU
time.process_time_ns, the disk's free inodes by statvfs, Dirty/Writeback) at its start, where copytree returns and
where os.sync() returns, and `inner`: [files copied, t_ns, cpu_ns, free inodes] every --every files inside the copy
(the copy's per-file cost against its position). The removal (`deletion`) is marked the same way, with the files it
removed. --aged FIRST_OUT copies FIRST_OUT's 44,000-file source again into --out, after waiting until --min-age-s have
passed since FIRST_OUT's removal (the record_day script runs the save probe in between).

    python3 folder_sweep_job.py --out DIR [--files-scale F]                  clean and recent copies
    python3 folder_sweep_job.py --out DIR2 --aged DIR [--min-age-s 75]      the aged copy

Writes DIR/recording/ (dvfs_sim.record layout) and DIR/job.json. --files-scale shrinks the file counts (tests on a
machine without a GPU: DVFS_NVML=fake_pynvml). Runs on CUDA when there is one.
"""
import argparse
import json
import os
import shutil
import sys
import time

import torch

from dvfs_sim.record import Recorder

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from staging_copies_job import generate, mark, recorder_steps  # noqa: E402

CLEAN = (5000, 20000, 44000, 88000)
RECENT = (44000, 5000)
AGED = 44000


def arguments(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--aged", default="", help="the first run's --out: copy its 44,000-file source again (aged condition)")
    p.add_argument("--min-age-s", type=float, default=75.0, help="aged copy: least time since the first run's removal")
    p.add_argument("--file-bytes", type=int, default=12170)
    p.add_argument("--files-scale", type=float, default=1.0, help="file counts times this (tests)")
    p.add_argument("--every", type=int, default=500, help="files between two marks inside a copy")
    p.add_argument("--rest-s", type=float, default=1.0, help="GPU-idle rest before each copy")
    p.add_argument("--idle-s", type=float, default=2.0)
    p.add_argument("--steps", default="2:2")
    p.add_argument("--matrix", type=int, default=2048, help="side of the matrices of the profiled steps")
    return p.parse_args(argv)


def free_inodes(path):
    """The disk's free inodes (statvfs f_ffree) of the file system holding path."""
    return os.statvfs(path).f_ffree


def fs_mark(path):
    """staging_copies_job's mark (time, process CPU, Dirty / Writeback) with the disk's free inodes."""
    return {**mark(), "free_inodes": free_inodes(path)}


def marking_copy2(every, inner, path):
    """shutil.copy2 (copytree's own copy function) that appends [files, t_ns, cpu_ns, free inodes] every `every` files."""
    count = [0]

    def copy_fn(src, dst):
        out = shutil.copy2(src, dst)
        count[0] += 1
        if count[0] % every == 0:
            inner.append([count[0], time.time_ns(), time.process_time_ns(), free_inodes(path)])
        return out
    return copy_fn


def copy_folder(src, dst, every):
    """One copytree to a fresh folder, then os.sync(); its marks and the marks inside it."""
    inner = []
    root = os.path.dirname(dst)
    m0 = fs_mark(root)
    shutil.copytree(src, dst, copy_function=marking_copy2(every, inner, root))
    m1 = fs_mark(root)
    os.sync()
    m2 = fs_mark(root)
    return {"start": m0, "copied": m1, "synced": m2, "inner": inner}


def remove_folders(folders, root):
    """Removes the folders (shutil.rmtree), then os.sync(); the marks and the files removed."""
    files = sum(len(os.listdir(f)) for f in folders)
    m0 = fs_mark(root)
    for f in folders:
        shutil.rmtree(f)
    m1 = fs_mark(root)
    os.sync()
    m2 = fs_mark(root)
    return {"start": m0, "removed": m1, "synced": m2, "files": files, "folders": len(folders),
            "inodes_freed": m2["free_inodes"] - m0["free_inodes"]}


def summary(c):
    s = (c["copied"]["t_ns"] - c["start"]["t_ns"]) / 1e9
    cpu = (c["copied"]["cpu_ns"] - c["start"]["cpu_ns"]) / 1e9
    return (f"{c['phase']}: {c['files']} files, copy {s:.3f} s ({cpu:.3f} core-s, {cpu / max(1, c['files']) * 1e6:.0f} us/file), "
            f"sync {(c['synced']['t_ns'] - c['copied']['t_ns']) / 1e9:.3f} s, free inodes {c['start']['free_inodes']}")


def main(argv=None):
    a = arguments(argv)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    n = lambda k: max(1, round(k * a.files_scale))  # noqa: E731
    local = os.path.join(a.out, "local")
    os.makedirs(local, exist_ok=True)
    warm, prof = (int(x) for x in a.steps.split(":"))
    rec = Recorder(os.path.join(a.out, "recording"), warmup=warm, profiled=prof, idle_s=a.idle_s,
                   command="folder_sweep_job.py " + " ".join(sys.argv[1:] if argv is None else argv),
                   nvml_module=os.environ.get("DVFS_NVML", "pynvml"))
    job = {"script": "folder_sweep_job.py", "args": vars(a), "device": dev, "torch": torch.__version__,
           "file_bytes": a.file_bytes, "copies": []}
    if a.aged:
        with open(os.path.join(a.aged, "job.json")) as f:
            first = json.load(f)
        job["deletion"] = first["deletion"]
        src_of = {c["files"]: c["source"] for c in first["copies"]}
    t_job = time.time()

    def one_copy(condition, files, src, dst, created_since_deletion=None):
        with rec.phase(f"rest before {condition} {files}", "idle"):
            time.sleep(a.rest_s)
        with rec.phase(f"staging {condition} {files}", "staging"):
            marks = copy_folder(src, dst, a.every)
        c = {"phase": f"staging {condition} {files}", "condition": condition, "files": files, "bytes": files * a.file_bytes,
             "call": "copytree", "source": src, "target": dst, **marks}
        if created_since_deletion is not None:
            c["created_since_deletion"] = created_since_deletion
        if "deletion" in job:
            c["age_s"] = (marks["start"]["t_ns"] - job["deletion"]["synced"]["t_ns"]) / 1e9
        job["copies"].append(c)
        print(summary(c), flush=True)
        return c

    with rec:
        if a.aged:
            k = n(AGED)
            with rec.phase("wait for the removal's age (not part of the job)", "idle"):
                left = a.min_age_s - (time.time_ns() - job["deletion"]["synced"]["t_ns"]) / 1e9
                time.sleep(max(0.0, left))
            created = sum(c["files"] + 1 for c in first["copies"] if c["condition"] == "recent")  # files and folders since the removal
            one_copy("aged", k, src_of[k], os.path.join(local, f"aged-{k}"), created_since_deletion=created)
        else:
            shared = os.path.join(a.out, "shared")
            counts = sorted({n(k) for k in CLEAN + RECENT})
            with rec.phase("generate source files and sync (not part of the job: makes its input)", "setup"):
                block = os.urandom(64 << 20)
                for k in counts:
                    generate(os.path.join(shared, f"n{k}"), k, a.file_bytes, block)
                del block
                os.sync()
            job["sets"] = [{"files": k, "file_bytes": a.file_bytes, "source": os.path.join(shared, f"n{k}")} for k in counts]
            clean = [one_copy("clean", n(k), os.path.join(shared, f"n{n(k)}"), os.path.join(local, f"clean-{n(k)}")) for k in CLEAN]
            with rec.phase("remove the clean copies and sync (frees their inodes; not part of the job)", "setup"):
                job["deletion"] = remove_folders([c["target"] for c in clean], local)
            print(f"removed {job['deletion']['files']} files, {job['deletion']['inodes_freed']} inodes freed", flush=True)
            created = 0
            for k in RECENT:
                c = one_copy("recent", n(k), os.path.join(shared, f"n{n(k)}"), os.path.join(local, f"recent-{n(k)}"),
                             created_since_deletion=created)
                created += c["files"] + 1  # its files and its folder
        with rec.phase("rest after the copies", "idle"):
            time.sleep(a.rest_s)
        recorder_steps(rec, dev, a.matrix, warm + prof)
    job["wall_s"] = time.time() - t_job
    with open(os.path.join(a.out, "job.json"), "w") as f:
        json.dump(job, f, indent=1)


if __name__ == "__main__":
    main()
