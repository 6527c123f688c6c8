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


# What each case did before issue 17 (../shared/robustness/README.md); cases added here were found alongside.
BEFORE = {
    "exit3-number-overflow-1e400": "exit 3 (number overflow)",
    "fuzz-min-number-overflow": "exit 3 (number overflow)",
    "exit3-scenario-top-level-array": "exit 3 (invalid_iterator)",
    "exit3-stol-stream-string": "exit 3 (stol)",
    "exit3-stol-nelems": "exit 3 (stol)",
    "fuzz-min-ub-as_long": "exit 0, UB (float to int)",
    "fuzz-min-ub-read_dim3": "exit 0, UB (float to int)",
    "hang-dur-1e308": "> 60 s, 6 GB",
    "hang-kernels-1e6-s-apart": "> 60 s, 7 GB",
    "hang-oom-group-size-2e9": "> 60 s, 16 GB",
    "hang-timeline-interval-1e-12": "> 60 s, 10 GB",
    "wrong-repeat-2pow32-plus-1": "exit 0, ran once",
    "power-cap-override-not-reported": "exit 0, cap not reported",
    "segv-deep-nested-collective-name": "SIGSEGV",
    "scenario-nested-too-deep": "(not tried before)",
    "scenario-number-overflow": "exit 3",
    "model-top-level-array": "exit 3",
    "model-number-overflow": "exit 3",
    "hang-model-sm-step-1e-9": "> 60 s, 14 GB",
    "trace-rank-list-overflow": "signed overflow (UB)",
    "trace-rank-stride-overflow": "ranks silently truncated to int",
    "repeat-times-steps": "ran: 2e6 step rows in summary.json",
    "validate-stuck-energy-counter": "0.00 J measured, MAPE 0.00 %",
    "validate-decreasing-energy-counter": "-549 J measured",
    "bench --foo": "exit 3",
    "bench --events many": "exit 3",
    "bench --events 1e20": "accepted",
    "bench --events -5": "accepted",
    "bench --events 0": "accepted",
}


def measure(args, cwd=None):
    t0 = time.monotonic()
    p = subprocess.Popen([t.BIN, *map(str, args)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().strip()
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_maxrss / 1024.0, err


def main():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp_name = tmp
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
    print("| case | before | now: exit | wall s | peak RSS MiB | message (or result) |")
    print("|---|---|---|---|---|---|")
    for name, (rc, wall, rss, err) in rows:
        msg = err.splitlines()[-1] if err else ""
        msg = msg.replace(tmp_name + "/", "").replace("dvfs-sim: error: ", "")
        if len(msg) > 150:
            msg = msg[:147] + "..."
        if rc == 0 and name.startswith("validate"):
            msg = "falls back to integrated power, with a note"
        print(f"| {name} | {BEFORE.get(name, '')} | {rc} | {wall:.2f} | {rss:.0f} | {msg.replace('|', '/')} |")


if __name__ == "__main__":
    main()
