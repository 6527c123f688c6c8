#!/usr/bin/env python3
"""Prints the README's "Limits and bad input" table: every robustness case with its exit code, wall time and
peak resident memory on this machine (measured here, not asserted by the tests).
    python3 tests/robustness/measure.py [path/to/dvfs-sim]"""
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
if len(sys.argv) > 1:
    os.environ["DVFS_SIM_BIN"] = os.path.abspath(sys.argv[1])
import test_robustness as t  # noqa: E402


def measure(args, cwd=None):
    t0 = time.monotonic()
    p = subprocess.Popen([t.BIN, *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().strip()
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_maxrss / 1024.0, err


def main():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for name, _ in t.REFUSED:
            d = t.case_dir(name, tmp)
            rows.append((name, measure(["run", d / "scenario.json", "-o", tmp / "out"])))
        for name, make, _ in t.GENERATED:
            sub = tmp / name
            sub.mkdir()
            rows.append((name, measure(["run", make(sub), "-o", sub / "out"])))
        for name, fix in [("validate-stuck-energy-counter", lambda i, row: [row[0], "102199886"] + row[2:]),
                          ("validate-decreasing-energy-counter", lambda i, row: [row[0], str(10**12 - int(row[1]))] + row[2:])]:
            sub = tmp / name
            sub.mkdir()
            rows.append((name, measure(["validate", t.recording(sub, fix), "--gpu", "h200"])))
        for args in (["bench", "--foo"], ["bench", "--events", "many"], ["bench", "--events", "1e20"],
                     ["bench", "--events", "-5"], ["bench", "--events", "0"]):
            rows.append((" ".join(args), measure(args)))
    print("| case | exit | wall s | peak RSS MiB | message |")
    print("|---|---|---|---|---|")
    for name, (rc, wall, rss, err) in rows:
        msg = err.splitlines()[-1] if err else ""
        print(f"| {name} | {rc} | {wall:.2f} | {rss:.0f} | {msg[:160].replace('|', '/')} |")


if __name__ == "__main__":
    main()
