#!/usr/bin/env python3
"""Wall and CPU time of whole processes, to the tenth of a millisecond (GNU time rounds to 10 ms).

    bench/process_start.py [--runs N] LABEL=COMMAND [LABEL=COMMAND ...]

Runs every command N times (default 30), interleaved (a, b, c, a, b, c, ...) so that the machine's drift and other
processes' load fall on all of them alike; stdout and stderr go to /dev/null, the environment is this one's. Prints,
per label, the minimum and median wall time (posix_spawn to waitpid) and CPU time (the child's user + system time,
from wait4), then the load average. A command that fails stops the run. bench/workload_cache.sh uses it for the
cached start of the default scenario (issue 18: < 0.03 s) and the floor beside it.
"""
import os
import shlex
import statistics
import sys
import time


def parse(argv):
    runs, cmds = 30, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--runs":
            runs = int(args.pop(0))
        elif "=" in a:
            label, cmd = a.split("=", 1)
            cmds.append((label, shlex.split(cmd)))
        else:
            sys.exit(f"process_start.py: expected LABEL=COMMAND or --runs N, got {a!r}")
    if not cmds:
        sys.exit("usage: process_start.py [--runs N] LABEL=COMMAND ...")
    return runs, cmds


def run_once(cmd, devnull):
    start = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ,
                          file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"process_start.py: {shlex.join(cmd)} failed (exit {os.waitstatus_to_exitcode(status)})")
    return wall, usage.ru_utime + usage.ru_stime


def main():
    runs, cmds = parse(sys.argv[1:])
    devnull = os.open(os.devnull, os.O_WRONLY)
    wall = {label: [] for label, _ in cmds}
    cpu = {label: [] for label, _ in cmds}
    for _ in range(runs):
        for label, cmd in cmds:
            w, c = run_once(cmd, devnull)
            wall[label].append(w)
            cpu[label].append(c)
    width = max(len(label) for label, _ in cmds)
    for label, _ in cmds:
        print(f"  {label:<{width}}  wall min {min(wall[label]) * 1e3:5.1f} ms, median {statistics.median(wall[label]) * 1e3:5.1f} ms"
              f"   CPU min {min(cpu[label]) * 1e3:5.1f} ms, median {statistics.median(cpu[label]) * 1e3:5.1f} ms   ({runs} processes)")
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"  load average {load} on {os.cpu_count()} cores (figures compare only below ~1.5)")


if __name__ == "__main__":
    main()
