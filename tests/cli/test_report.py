"""`dvfs-sim report OUT_DIR` (sim/results/html_report.hpp) and the trace export through the command line
(docs/trace-export.md): the page is self-contained, names its sources, and renders in headless Chromium
to a picture that is not blank; an exported trace is a Kineto-layout Chrome trace that the importer reads."""
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest

from cli_errors import assert_one_line_error


def png_colours(path):
    """Distinct RGB(A) colours of an 8-bit, non-interlaced truecolour PNG (what Chromium writes)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, ctype, _, _, interlace = header
    assert depth == 8 and ctype in (2, 6) and interlace == 0, f"unexpected PNG format {header}"
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, colours, i = bytearray(stride), set(), 0
    for _ in range(height):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        colours.update(bytes(line[x:x + bpp]) for x in range(0, stride, bpp))
        prev = line
    return colours


def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing: setup.sh installs it (the report test renders the page in CI)")
        pytest.skip("chromium is not installed (apt-get install chromium): the rendering check is skipped")
    return exe


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = os.environ.get("DVFS_SIM_ROOT", os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    BIN = os.environ.get("DVFS_SIM_BIN", os.path.join(root, "build", "dvfs-sim"))
    out = tmp_path_factory.mktemp("run")
    r = subprocess.run([BIN, "run", "-o", str(out), "--trace-out", str(out / "trace.json.gz")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return out


def test_report_is_self_contained_and_names_its_sources(cli, run_dir):
    r = cli("report", run_dir)
    assert r.returncode == 0, r.stderr
    html = (run_dir / "report.html").read_text()
    assert html.count("<svg") >= 4  # power and clock over time, energy by phase and by class
    assert "summary.json" in html and "timeline.csv" in html
    assert "<script" not in html
    assert not re.search(r"(src|href)\s*=\s*\"(https?:)?//", html), "the page must not fetch anything"
    assert "energy by phase" in html and "energy by kernel class" in html


def test_report_renders_to_a_picture_that_is_not_blank(cli, run_dir, tmp_path):
    exe = chromium()
    assert cli("report", run_dir).returncode == 0
    png = tmp_path / "report.png"
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--screenshot={png}",
                        "--window-size=900,1400", "file://" + str(run_dir / "report.html")],
                       capture_output=True, text=True, timeout=180)
    assert png.exists(), r.stderr[-2000:]
    colours = png_colours(png)
    assert len(colours) > 50, f"only {len(colours)} colours: the page rendered blank"


def test_report_of_a_directory_with_nothing_to_draw_is_one_line_exit_2(cli, tmp_path):
    r = cli("report", tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "nothing to report" in r.stderr


def test_exported_trace_has_kineto_layout_and_replays_as_a_trace(cli, run_dir, tmp_path):
    doc = json.load(gzip.open(run_dir / "trace.json.gz", "rt"))
    events = doc["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    counters = {e["name"] for e in events if e.get("ph") == "C"}
    assert kernels and all("correlation" in e["args"] and "energy (J)" in e["args"] for e in kernels)
    assert {"power (W)", "SM clock (MHz)", "memory clock (MHz)", "energy (J)"} <= counters
    assert doc["deviceProperties"][0]["name"].endswith("(simulated: h200)")
    summary = json.load(open(run_dir / "summary.json"))
    busy = summary["totals"]["energy_j"] - summary["energy_by_phase_j"]["host_gaps"] - summary["totals"]["switch_energy_j"]
    assert sum(e["args"]["energy (J)"] for e in kernels) == pytest.approx(busy, rel=1e-9)
    # The exported trace is a trace the simulator replays.
    sc = tmp_path / "again.json"
    sc.write_text(json.dumps({"trace": str(run_dir / "trace.json.gz"), "gpu": "h200", "policy": "max"}))
    r = cli("run", sc, "-o", tmp_path / "again", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["totals"]["kernel_events"] == summary["totals"]["kernel_events"]


def test_trace_out_on_a_study_is_refused(cli, root, tmp_path):
    r = cli("run", os.path.join(root, "scenarios/power-budget/fleet-mixed.json"), "--trace-out", tmp_path / "t.json.gz")
    assert r.returncode == 2 and "--trace-out" in r.stderr


def test_validate_trace_out_feeds_a_report_of_measured_against_simulated(cli, root, tmp_path):
    out = tmp_path / "val"
    r = cli("validate", os.path.join(root, "traces/recordings/h200-gpt3xl"), "--gpu", "h200", "--trace-out", out)
    assert r.returncode == 0, r.stderr
    for f in ("native.trace.json.gz", "recorded.trace.json.gz", "native.timeline.csv", "recorded.timeline.csv", "measured.csv", "validate.json"):
        assert (out / f).exists(), f
    measured = (out / "measured.csv").read_text().splitlines()
    assert measured[0] == "t_s,power_w,sm_mhz,mem_mhz" and len(measured) > 10
    assert cli("report", out).returncode == 0
    html = (out / "report.html").read_text()
    assert "Simulated vs measured power (W)" in html and "Simulated vs measured SM clock (MHz)" in html
    assert "measured.csv" in html and "MAPE over steps" in html


def test_compare_trace_writes_one_trace_per_policy_and_the_report_draws_the_table(cli, root, tmp_path):
    out = tmp_path / "cmp"
    r = cli("compare", "--policies", "static-best", "--trace", "-o", out, "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert [row["policy"] for row in rows] == ["native", "static-best"]
    for row in rows:
        doc = json.load(gzip.open(row["trace"], "rt"))
        assert any(e.get("cat") == "kernel" for e in doc["traceEvents"])
        assert doc["dvfs_sim"]["policy"] == row["policy"]
    assert cli("report", out).returncode == 0
    assert "Energy saved and slowdown vs native" in (out / "report.html").read_text()


def test_report_refuses_timeline_rows_that_are_not_numbers_naming_the_line(cli, run_dir, tmp_path):
    # Rows of nan, text, two cells or 1e308 were plotted (an axis to 2.5e307), exit 0.
    out = tmp_path / "bad"
    shutil.copytree(run_dir, out)
    lines = (out / "timeline.csv").read_text().splitlines()
    huge = lines[1].split(",")
    huge[lines[0].split(",").index("power_w")] = "1e308"
    for bad, needle in ((",".join(["nan"] * len(huge)), "line 3."), ("1,2", "line 3: expected"), (",".join(huge), "line 3.power_w")):
        (out / "timeline.csv").write_text("\n".join([lines[0], lines[1], bad] + lines[2:]) + "\n")
        assert_one_line_error(cli("report", out), "timeline.csv", needle)


@pytest.mark.parametrize("name, text, field, expected", [
    # SIGSEGV (an empty pair read past its end) and exit 3 "type must be number" before.
    ("f.json", '{"frontier":{"relaxed_points":[[]]}}', "frontier.relaxed_points[0]", "expected a pair of finite numbers"),
    ("f.json", '{"frontier":{"relaxed_points":[[1]]}}', "frontier.relaxed_points[0]", "expected a pair of finite numbers"),
    ("f.json", '{"runs":[{"frontier":{"relaxed_points":[]}}]}', "runs[0].frontier.relaxed_points", "expected a non-empty list"),
    ("f.json", '{"frontier":{"relaxed_points":[[1,2]],"vs_perseus":5}}', "frontier.vs_perseus", "expected a list of objects"),
    # Exit 3 on nlohmann's type_error 306 / 305 / 302 before.
    ("compare.json", "{}", "rows", "expected a non-empty list of policy rows"),
    ("compare.json", '{"rows":[1]}', "rows[0]", "expected an object, got number"),
    ("compare.json", "[]", "(top level)", "expected an object, got array"),
    ("compare.json", '{"rows":[{"policy":"max","energy_j":"1"}]}', "rows[0].energy_j", "expected a number, got string"),
    ("summary.json", '{"totals":5}', "totals", "expected an object, got number"),
    ("summary.json", '{"totals":{"clock_switches":"<b>"}}', "totals.clock_switches", "expected an integer"),
    ("summary.json", '{"totals":{},"energy_by_phase_j":{"forward":"x"}}', "energy_by_phase_j.forward", "expected a number"),
    ("summary.json", '{"stages":5}', "stages", "expected a list of objects, got number"),
    ("summary.json", '{"stages":[]}', "stages", "expected a non-empty list of pipeline stages"),
    ("summary.json", '{"stages":[{"stage":0,"energy_per_gpu_j":"x"}]}', "stages[0].energy_per_gpu_j", "expected a number, got string"),
    ("summary.json", '{"stages":[{"stage":0,"energy_per_gpu_j":1e300}]}', "stages[0].energy_per_gpu_j", "expected a finite number"),
    ("validate.json", "{}", "clock_sources", "expected a non-empty list of clock sources"),
    ("validate.json", '{"clock_sources":[{"steps":[3]}]}', "clock_sources[0].steps[0]", "expected an object, got number"),
    ("validate.json", '{"clock_sources":[{"mape":[]}]}', "clock_sources[0].mape", "expected an object, got array"),
])
def test_report_refuses_a_corrupted_output_file_naming_the_file_and_field(cli, tmp_path, name, text, field, expected):
    (tmp_path / name).write_text(text)
    assert_one_line_error(cli("report", tmp_path), name, field + ": " + expected)


def test_report_of_a_missing_directory_or_a_file_says_which(cli, tmp_path):
    assert_one_line_error(cli("report", tmp_path / "absent"), "absent", "no such directory (expected an output directory")
    (tmp_path / "file").write_text("{}")
    assert_one_line_error(cli("report", tmp_path / "file"), "file", "is not a directory (expected an output directory")


def test_report_of_a_synthetic_run_and_a_frontier_draws_them(cli, tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({"model": "gpt3-xl", "gpus": 2, "iteration_s": 1.0, "energy_j": 2e3,
                                                       "stages": [{"stage": 0, "energy_per_gpu_j": 900.0, "pipeline_wait_mean_s": 0.1},
                                                                  {"stage": 1, "energy_per_gpu_j": 1100.0, "pipeline_wait_mean_s": 0.0}]}))
    (tmp_path / "perseus.json").write_text(json.dumps({"frontier": {"relaxed_points": [[1.0, 10.0], [1.2, 9.0]],
                                                                    "vs_perseus": [{"perseus_iteration_s": 1.1, "perseus_energy_j": 9.5}]}}))
    r = cli("report", tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "report.html").read_text()
    assert "Simulated energy per GPU by pipeline stage" in html and "Iteration time vs energy" in html and "Perseus plans" in html
