"""The day-3 folder sweep's fits (split.json `day3`): the staging copy's CPU beyond the day's linear price, as a
folder-size growth (per file per file already in the target folder) and as the scan of recently freed inodes
(ext4 without a journal skips recently freed inodes, nominally < 60 s, longer on the recorded machines; in a group
of only such inodes each new file's allocation scans every free one left). Pure functions over folder_sweep_job.py's
job.json and record_day_on_gpu.sh's logs; fit_lifecycle.py writes what they return into the day-3 node and scenarios. The scan count mirrors
sim/lifecycle/lifecycle_spec.cpp's recent_free_inodes_scanned."""
import re

DEFAULT_INODES_PER_GROUP = 8192  # the recording disk's geometry (16,777,216 inodes in 2,048 groups of 128 MiB)


def recent_free_inodes_scanned(n, k, per_group):
    """Free inodes scanned while n new files take recently freed inodes k .. k + n - 1, filled group by group: file j
    scans the per_group - (j mod per_group) free inodes left in its group."""
    scanned, j = 0.0, float(k)
    n = float(n)
    if n <= 0 or per_group <= 0:
        return 0.0
    while n > 0:
        left = per_group - (j % per_group)
        take = min(n, left)
        scanned += take * left - take * (take - 1) / 2
        j += take
        n -= take
    return scanned


def reused_inodes(files, recently_freed, reused_before):
    """The files of a copy that land on recently freed inodes: those the freed pool still holds."""
    return min(files, max(0.0, recently_freed - reused_before))


def copy_cpu_s(c):
    """The copying process's CPU over the copy call (job.json marks: start to copytree's return)."""
    return (c["copied"]["cpu_ns"] - c["start"]["cpu_ns"]) / 1e9


def linear_price(c, per_gb, per_file):
    return per_gb * c["bytes"] / 1e9 + per_file * c["files"]


def _no_intercept(xs, ys):
    den = sum(x * x for x in xs)
    return max(0.0, sum(x * y for x, y in zip(xs, ys)) / den) if den > 0 else 0.0


def growth_fit(job, per_gb, per_file):
    """core_s_per_file_growth: least squares without intercept, over the clean copies, of the process CPU less the
    linear price on files (files - 1) / 2; 0 if negative."""
    cs = [c for c in job["copies"] if c["condition"] == "clean"]
    if not cs:
        raise SystemExit("folder_sweep_fit: the folder sweep's job.json has no 'clean' copy (field copies[].condition)")
    xs = [c["files"] * (c["files"] - 1) / 2 for c in cs]
    ys = [copy_cpu_s(c) - linear_price(c, per_gb, per_file) for c in cs]
    return _no_intercept(xs, ys)


def recently_freed(job):
    """The inodes the sweep's removal freed (its free-inode marks before it and after its sync)."""
    d = job.get("deletion")
    if not d or "inodes_freed" not in d:
        raise SystemExit("folder_sweep_fit: the folder sweep's job.json has no deletion.inodes_freed (the removal's marks)")
    return float(d["inodes_freed"])


def scan_count(c, freed, per_group):
    k = float(c.get("created_since_deletion") or 0)
    return recent_free_inodes_scanned(reused_inodes(c["files"], freed, k), k, per_group)


def scan_fit(job, per_gb, per_file, growth, per_group):
    """recent_free_scan_core_s: least squares without intercept, over the recent copies, of the process CPU less the
    linear price and the growth term on the inodes scanned (R: the removal's freed inodes; k: files created since it)."""
    cs = [c for c in job["copies"] if c["condition"] == "recent"]
    if not cs:
        raise SystemExit("folder_sweep_fit: the folder sweep's job.json has no 'recent' copy (field copies[].condition)")
    freed = recently_freed(job)
    xs = [scan_count(c, freed, per_group) for c in cs]
    ys = [copy_cpu_s(c) - linear_price(c, per_gb, per_file) - growth * c["files"] * (c["files"] - 1) / 2 for c in cs]
    return _no_intercept(xs, ys)


def model_cpu_s(c, per_gb, per_file, growth, scan, per_group, freed=0.0):
    return (linear_price(c, per_gb, per_file) + growth * c["files"] * (c["files"] - 1) / 2
            + scan * scan_count(c, freed, per_group))


def inodes_per_group(fs_log_text):
    """'Inodes per group' of dumpe2fs -h in record_day_on_gpu.sh's fs.log: (value, source)."""
    m = re.search(r"^Inodes per group:\s*(\d+)", fs_log_text or "", re.M)
    if m:
        return int(m.group(1)), "dumpe2fs -h (fs.log)"
    return DEFAULT_INODES_PER_GROUP, "not in fs.log: the disk's default geometry (split.json day3)"


def removal(log_text):
    """record_day_on_gpu.sh's removal.log: files, folders, free inodes before / after, inodes freed."""
    vals = dict(re.findall(r"^(\w+): (-?\d+)\s*$", log_text or "", re.M))
    need = ("free_inodes_before", "free_inodes_after")
    missing = [k for k in need if k not in vals]
    if missing:
        raise SystemExit(f"folder_sweep_fit: removal.log lacks {', '.join(missing)} (expected 'name: integer' lines)")
    out = {k: int(v) for k, v in vals.items()}
    out["inodes_freed"] = out["free_inodes_after"] - out["free_inodes_before"]
    return out


def inner_rates(c):
    """Per-file cost between the marks inside a copy: [(files at the mark, us of process CPU per file since the last)]."""
    prev = (0, c["start"]["t_ns"], c["start"]["cpu_ns"])
    out = []
    for files, t, cpu, _free in c.get("inner", []):
        if files > prev[0]:
            out.append((files, (cpu - prev[2]) / 1e3 / (files - prev[0])))
        prev = (files, t, cpu)
    return out


def sweep_table(job, per_gb, per_file, growth, scan, per_group):
    """Markdown: each sweep copy's process CPU measured against the linear price and the full price."""
    freed = recently_freed(job) if job.get("deletion") else 0.0
    lines = ["| copy | files | age of the removal s | CPU core-s measured | linear price | with growth + scan | err |",
             "|---|---|---|---|---|---|---|"]
    for c in job["copies"]:
        meas = copy_cpu_s(c)
        lin = linear_price(c, per_gb, per_file)
        full = model_cpu_s(c, per_gb, per_file, growth, scan, per_group, freed if c["condition"] in ("recent", "aged") else 0.0)
        age = f"{c['age_s']:.0f}" if c.get("age_s") is not None else "-"
        lines.append(f"| {c['phase']} | {c['files']} | {age} | {meas:.3f} | {lin:.3f} | {full:.3f} | {(full / meas - 1) * 100:+.1f} % |")
    return "\n".join(lines)
