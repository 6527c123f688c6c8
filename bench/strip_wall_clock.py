"""Removes wall-clock figures (machine seconds, not simulated ones) from the JSON files under a folder, in place,
so that two runs of bench/output_digest.sh can be compared byte for byte."""
import json
import pathlib
import re
import sys

WALL = re.compile(r"(wall|solve_s|elapsed|runtime_s|import_s|load_s|plan_s|frontier_s|curves_s|replay_s|peak_rss|_mib$)")


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if not WALL.search(k)}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


for p in pathlib.Path(sys.argv[1]).rglob("*"):
    if p.suffix in (".json", ".out") and p.is_file():
        text = p.read_text()
        try:
            body, tail = (text.rsplit("rc=", 1) if p.suffix == ".out" else (text, None))
            data = json.loads(body)
        except ValueError:
            continue
        out = json.dumps(strip(data), indent=1, sort_keys=True) + "\n"
        p.write_text(out + (f"rc={tail}" if tail is not None else ""))
