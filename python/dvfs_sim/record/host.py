"""Read-only host counters of a recording (issue 20): CPU package/DRAM energy from RAPL (powercap sysfs,
where the machine exposes it and this user may read it), CPU time (/proc/stat), disk and network bytes
(/proc/diskstats, /proc/net/dev), the I/O and CPU time of the training process and its children
(DataLoader workers): /proc/<pid>/io and /proc/<pid>/stat, and the samplers' own CPU time. Every column is a
cumulative counter as the kernel keeps it; per-phase figures are differences (docs/recording-format.md "host.csv").
Nothing is ever
written to sysfs or /proc.

The sampler runs in its own process (like the NVML one):

    python3 -m dvfs_sim.record._host_sampler_process OUT.csv PID PERIOD_S [EXCLUDED_PIDS]

prints "ready" once sampling, samples until its stdin says "stop" (or closes), then writes OUT.csv and
OUT.json (the RAPL domains found, their wrap ranges, and what could not be read, with the reason).
"""
import csv
import glob
import json
import os
import time

from dvfs_sim.record._child_process import ChildProcess, stop_on_input

POWERCAP = "/sys/class/powercap"
CPU_COLUMNS = ["cpu_user_ticks", "cpu_system_ticks", "cpu_idle_ticks", "cpu_iowait_ticks", "cpu_other_ticks"]
IO_COLUMNS = ["disk_read_bytes", "disk_write_bytes", "net_rx_bytes", "net_tx_bytes"]
PROC_COLUMNS = ["proc_read_bytes", "proc_write_bytes", "proc_rchar", "proc_wchar", "proc_cpu_ticks", "proc_count",
                "main_cpu_ticks"]
SAMPLER_COLUMNS = ["sampler_cpu_ticks"]


def _read(path):
    with open(path) as f:
        return f.read()


def rapl_domains(root=POWERCAP):
    """[(column name, energy_uj path, max_energy_range_uj or None)] of the readable RAPL zones, and a list of
    "path: why" for those found but not readable (e.g. energy_uj is root-only since Linux 5.10)."""
    found, unreadable = [], []
    for zone in sorted(glob.glob(os.path.join(root, "intel-rapl:*")) + sorted(glob.glob(os.path.join(root, "amd-rapl:*")))):
        e = os.path.join(zone, "energy_uj")
        if not os.path.exists(e):
            continue
        try:
            name = _read(os.path.join(zone, "name")).strip()
        except OSError:
            name = os.path.basename(zone)
        # package-0 -> rapl_package_0; a subzone (intel-rapl:0:1, dram) -> rapl_package_0_dram
        parts = os.path.basename(zone).split(":")[1:]
        col = "rapl_" + name.replace("-", "_")
        if len(parts) > 1:
            parent = os.path.join(root, ":".join(os.path.basename(zone).split(":")[:2]))
            try:
                col = "rapl_" + _read(os.path.join(parent, "name")).strip().replace("-", "_") + "_" + name.replace("-", "_")
            except OSError:
                col = "rapl_" + "_".join(parts) + "_" + name
        try:
            int(_read(e))
        except (OSError, ValueError) as err:
            unreadable.append(f"{e}: {err.__class__.__name__}: {err}")
            continue
        try:
            rng = int(_read(os.path.join(zone, "max_energy_range_uj")))
        except (OSError, ValueError):
            rng = None
        found.append((col, e, rng))
    return found, unreadable


def cpu_ticks(text):
    """/proc/stat's aggregate `cpu` line -> the CPU_COLUMNS values (USER_HZ ticks, all CPUs together)."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            v = [int(x) for x in line.split()[1:]]
            v += [0] * (10 - len(v))
            user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
            return [user + nice, system + irq + softirq, idle, iowait, steal]
    raise ValueError("/proc/stat: no aggregate cpu line")


def _whole_disks(sys_block="/sys/block"):
    try:
        return {d for d in os.listdir(sys_block) if not d.startswith(("loop", "ram", "zram", "dm-", "md", "sr"))}
    except OSError:
        return None


def disk_bytes(text, disks=None):
    """/proc/diskstats -> (read bytes, written bytes) of whole disks (sectors of 512 bytes; partitions, loop
    and device-mapper devices left out so that no byte counts twice)."""
    r = w = 0
    for line in text.splitlines():
        f = line.split()
        if len(f) < 10:
            continue
        name = f[2]
        if disks is not None and name not in disks:
            continue
        if disks is None and name.startswith(("loop", "ram", "zram", "dm-", "md", "sr")):
            continue
        r += int(f[5]) * 512
        w += int(f[9]) * 512
    return r, w


def net_bytes(text):
    """/proc/net/dev -> (received, transmitted) bytes of every interface but loopback."""
    rx = tx = 0
    for line in text.splitlines()[2:]:
        if ":" not in line:
            continue
        name, rest = line.split(":", 1)
        if name.strip() == "lo":
            continue
        f = rest.split()
        rx += int(f[0])
        tx += int(f[8])
    return rx, tx


def process_tree(pid, proc="/proc", exclude=()):
    """pid and its descendants (DataLoader workers are children of the training process), without the
    samplers (`exclude` and their children)."""
    children = {}
    for d in os.listdir(proc):
        if not d.isdigit():
            continue
        try:
            stat = _read(os.path.join(proc, d, "stat"))
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in exclude:
            continue
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_ticks_of(pid, proc="/proc"):
    """utime+stime+cutime+cstime of one process (/proc/<pid>/stat), or None when it cannot be read (it ended)."""
    try:
        st = _read(os.path.join(proc, str(pid), "stat")).rsplit(")", 1)[1].split()
        return int(st[11]) + int(st[12]) + int(st[13]) + int(st[14])
    except (OSError, ValueError, IndexError):
        return None


def process_counters(pids, proc="/proc"):
    """Sum over pids of /proc/<pid>/io (read_bytes, write_bytes, rchar, wchar) and utime+stime(+children's)
    ticks, the process count, and the first pid's own ticks (the training process); a process that ended
    between listing and reading is skipped (its counts leave the sum: see the doc)."""
    rb = wb = rc = wc = ticks = n = main = 0
    for p in pids:
        try:
            io = dict(line.split(": ") for line in _read(os.path.join(proc, str(p), "io")).splitlines() if ": " in line)
        except (OSError, ValueError):
            continue
        t = cpu_ticks_of(p, proc)
        if t is None:
            continue
        rb += int(io.get("read_bytes", 0))
        wb += int(io.get("write_bytes", 0))
        rc += int(io.get("rchar", 0))
        wc += int(io.get("wchar", 0))
        ticks += t
        main = t if p == pids[0] else main
        n += 1
    return [rb, wb, rc, wc, ticks, n, main]


class SamplerTicks:
    """The samplers' own CPU (the NVML sampler and this host sampler: the processes left out of the tree), cumulative:
    a sampler that ended keeps its last reading, so the sum never drops (the NVML sampler stops before the host one).
    Their CPU per NVML read depends on the GPU's state (docs/lifecycle.md), so a rate measured at rest cannot stand
    for it in every phase: this column measures it."""

    def __init__(self, pids, proc="/proc"):
        self.pids, self.proc, self.last = sorted(pids), proc, {}

    def __call__(self):
        for p in self.pids:
            t = cpu_ticks_of(p, self.proc)
            if t is not None:
                self.last[p] = max(t, self.last.get(p, 0))
        return [sum(self.last.values())]


class HostProbe:
    """One sample of every counter; columns() names them. Built once (the RAPL zones are found once)."""

    def __init__(self, pid, proc="/proc", powercap=POWERCAP, exclude=()):
        self.pid, self.proc, self.exclude = pid, proc, set(exclude) | {os.getpid()}
        self.rapl, self.unreadable = rapl_domains(powercap)
        self.disks = _whole_disks()
        self.sampler_ticks = SamplerTicks(self.exclude, proc)
        self.missing = []
        for path in ("stat", "diskstats", "net/dev", f"{pid}/io"):
            try:
                _read(os.path.join(proc, path))
            except OSError as e:
                self.missing.append(f"{os.path.join(proc, path)}: {e.__class__.__name__}")

    def columns(self):
        return ["t_ns"] + CPU_COLUMNS + IO_COLUMNS + PROC_COLUMNS + SAMPLER_COLUMNS + [c + "_uj" for c, _, _ in self.rapl]

    def _safe(self, fn, n):
        try:
            return list(fn())
        except (OSError, ValueError):
            return [""] * n

    def sample(self):
        t = time.time_ns()
        row = [t]
        row += self._safe(lambda: cpu_ticks(_read(os.path.join(self.proc, "stat"))), len(CPU_COLUMNS))
        row += self._safe(lambda: disk_bytes(_read(os.path.join(self.proc, "diskstats")), self.disks), 2)
        row += self._safe(lambda: net_bytes(_read(os.path.join(self.proc, "net/dev"))), 2)
        row += self._safe(lambda: process_counters(process_tree(self.pid, self.proc, self.exclude), self.proc), len(PROC_COLUMNS))
        row += self.sampler_ticks()
        for _, path, _ in self.rapl:
            row += self._safe(lambda: [int(_read(path))], 1)
        return row

    def describe(self):
        return {"rapl_domains": [{"column": c + "_uj", "path": p, "max_energy_range_uj": r} for c, p, r in self.rapl],
                "rapl_unreadable": self.unreadable,
                "rapl_note": None if self.rapl else ("no RAPL powercap zone readable: CPU energy not measured"
                                                     + (" (zones exist but are not readable)" if self.unreadable else
                                                        f" ({POWERCAP}/intel-rapl* absent)")),
                "missing": self.missing, "clk_tck": os.sysconf("SC_CLK_TCK"), "cpus": os.cpu_count(),
                "pid": self.pid, "disks": sorted(self.disks) if self.disks is not None else None}


def sample_loop(probe, period_s, stop):
    rows = []
    while not stop.is_set():
        t = time.monotonic()
        rows.append(probe.sample())
        stop.wait(max(0.0, period_s - (time.monotonic() - t)))
    rows.append(probe.sample())  # the last sample at the stop: the recording's end is covered
    return rows


def write(path, probe, rows, period_s):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(probe.columns())
        w.writerows(rows)
    meta = probe.describe()
    meta["period_s"] = period_s
    meta["samples"] = len(rows)
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump(meta, f, indent=1)


class HostSampler:
    """The host sampler process, driven from the recording process (same protocol as nvml.Sampler)."""

    def __init__(self, path, pid, period_s, exclude=()):
        self.path, self.pid, self.period_s, self.exclude, self.proc = path, pid, period_s, list(exclude), None

    def start(self, timeout_s=30):
        self.proc = ChildProcess("dvfs_sim.record._host_sampler_process",
                                 [self.path, self.pid, repr(self.period_s), ",".join(map(str, self.exclude))])
        line = self.proc.start(timeout_s)
        if line is None or line.strip() != "ready":
            raise RuntimeError(f"the host sampler process did not start within {timeout_s} s")

    def stop(self, timeout_s=60):
        rc = self.proc.stop(timeout_s) if self.proc is not None else None
        self.proc = None
        if rc not in (None, 0):
            raise RuntimeError(f"the host sampler process failed (exit code {rc})")


def main(argv):
    path, pid, period_s = argv[0], int(argv[1]), float(argv[2])
    exclude = [int(x) for x in argv[3].split(",") if x] if len(argv) > 3 else []
    probe = HostProbe(pid, exclude=exclude)
    stop = stop_on_input()
    print("ready", flush=True)
    rows = sample_loop(probe, period_s, stop)
    write(path, probe, rows, period_s)

