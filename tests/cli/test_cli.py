"""The command-line contract: what a user sees from `dvfs-sim`."""
import json
import os
import subprocess

from cli_errors import assert_one_line_error


def test_run_without_arguments_replays_the_default_scenario(cli, tmp_path):
    r = cli("run", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "gpt3xl-h200-native" in r.stdout
    assert "energy by phase" in r.stdout and "backward" in r.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert len(summary["steps"]) == 6
    assert summary["policy"] == "native"
    lines = (tmp_path / "timeline.csv").read_text().splitlines()
    assert lines[0] == "gpu,t_s,power_w,sm_mhz,mem_mhz,energy_j"
    # 10 ms samples over ~1.8 s of replay
    assert 150 < len(lines) < 250
    last = lines[-1].split(",")
    assert abs(float(last[5]) - summary["totals"]["energy_j"]) < 1e-3
    # the GPT-3 XL recording has no operator shapes: its kernels are priced by the class priors, and the header says so
    work = summary["trace"]["work"]
    assert work["class_prior_kernel_time_share"] > 0.9 and summary["gpu"]["activity_model"] is True
    assert "by class priors 96 %" in r.stdout and "record_shapes=True" in r.stdout
    # and a pre-pass at the top clocks puts that training at the power cap, where the priors were set
    assert work["class_prior_at_cap_kernel_time_share"] > 0.9
    assert "the regime the class priors were set in" in r.stdout


def test_launch_sized_elementwise_kernels_are_counted_and_survive_an_export_reimported(cli, root, tmp_path):
    # the default trace has no operator shapes: the importer sizes its ATen elementwise kernels from their launch and
    # the summary counts them among the class-prior kernels; the shipped model prices them by their prior, and a replay
    # exported and re-imported keeps them (source launch_elementwise), so it prices the same
    r = cli("run", os.path.join(root, "scenarios", "default.json"), "-o", tmp_path / "a", "--trace-out", tmp_path / "t.json.gz")
    assert r.returncode == 0, r.stderr
    first = json.loads((tmp_path / "a" / "summary.json").read_text())
    work = first["trace"]["work"]
    assert 0 < work["class_prior_elementwise_sized_from_launch"] <= work["class_prior"]
    scen = tmp_path / "again.json"
    scen.write_text(json.dumps({"name": "again", "trace": str(tmp_path / "t.json.gz"), "gpu": "h200", "policy": "native"}))
    r = cli("run", scen, "-o", tmp_path / "b")
    assert r.returncode == 0, r.stderr
    again = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert again["trace"]["work"]["class_prior_elementwise_sized_from_launch"] == work["class_prior_elementwise_sized_from_launch"]
    assert abs(again["totals"]["energy_j"] - first["totals"]["energy_j"]) < 1e-3 * first["totals"]["energy_j"]


def test_run_header_says_how_much_kernel_time_is_priced_from_counted_work(cli, root, tmp_path):
    # the same GPT-3 XL training recorded with operator shapes: most of its kernel time priced from counted work
    (tmp_path / "s.json").write_text(json.dumps({"name": "shapes", "gpu": "h200", "policy": "native",
                                                 "trace": os.path.join(root, "traces", "recordings", "h200-gpt3xl-shapes")}))
    r = cli("run", tmp_path / "s.json", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    share = json.loads((tmp_path / "out" / "summary.json").read_text())["trace"]["work"]["class_prior_kernel_time_share"]
    assert 0 <= share < 0.2
    assert "kernel time priced from counted work" in r.stdout and "record_shapes=True" not in r.stdout


def test_two_runs_write_byte_identical_summaries(cli, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli("run", "-o", a).returncode == 0
    assert cli("run", "-o", b).returncode == 0
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    assert (a / "timeline.csv").read_bytes() == (b / "timeline.csv").read_bytes()


def test_event_engine_gives_the_same_totals(cli, tmp_path):
    r = cli("run", "--engine", "event", "--json", "-o", tmp_path / "e")
    assert r.returncode == 0, r.stderr
    event = json.loads(r.stdout)
    local = json.loads(cli("run", "--json", "-o", tmp_path / "l").stdout)
    assert abs(event["totals"]["energy_j"] - local["totals"]["energy_j"]) < 1e-6 * local["totals"]["energy_j"]
    assert event["engine"] == "event"


def test_models_lists_every_gpu_with_its_status(cli):
    r = cli("models", "--json")
    assert r.returncode == 0, r.stderr
    models = {m["name"]: m for m in json.loads(r.stdout)}
    for name in ("h200", "a100-sxm4", "a40"):
        assert models[name]["status"] == "calibrated"
    for name, sibling in (("rtx-3080-ti", "a100-sxm4"), ("b200-like", "h200"), ("h100-sxm", "h200")):
        assert models[name]["status"] == "datasheet"
        assert models[name]["derived_from"] == sibling
    # the H100 is the H200's chip: its activity block is the fit one, unscaled; its memory is its own
    h100, h200 = (json.load(open(models[n]["file"])) for n in ("h100-sxm", "h200"))
    assert h100["activity"] == h200["activity"]
    assert h100["specs"]["mem_bandwidth_gbs"] == 3350 and h100["clocks"]["mem_mhz"] == [1593.0, 2619.0]
    sl = models["h200"]["switch_latency"]
    assert sl["sm"]["mean_s"] == 0.05 and sl["mem"]["mean_s"] == 0.05 and sl["firmware_s"] == 0.001
    assert models["b200-like"]["switch_latency"]["sm"]["mean_s"] == 0.0001
    text = cli("models").stdout
    assert "datasheet, not yet calibrated" in text


def test_validate_prints_both_clock_sources_and_json(cli, root, tmp_path):
    rec = os.path.join(root, "traces", "recordings", "h200-gpt3xl")
    r = cli("validate", rec, "--gpu", "h200")
    assert r.returncode == 0, r.stderr
    assert "clock source: native" in r.stdout and "clock source: recorded" in r.stdout
    assert "MAPE" in r.stdout
    out = tmp_path / "v.json"
    r = cli("validate", rec, "--gpu", "h200", "--json", "-o", out)
    rep = json.loads(r.stdout)
    assert json.loads(out.read_text()) == rep
    native = rep["clock_sources"][0]
    assert native["clock_source"] == "native"
    assert abs(native["total"]["energy_error_pct"]) < 10
    assert abs(native["total"]["time_error_pct"]) < 5


def test_validate_shapes_withheld_prices_a_shaped_recording_as_a_shapeless_trace(cli, root):
    rec = os.path.join(root, "traces", "recordings", "h200-prior-fit", "gpt-fp32-train-b2-l6")
    full = json.loads(cli("validate", rec, "--gpu", "h200", "--json").stdout)
    r = cli("validate", rec, "--gpu", "h200", "--shapes-withheld")
    assert r.returncode == 0, r.stderr
    assert "shapes withheld:" in r.stdout and "class priors" in r.stdout
    rep = json.loads(cli("validate", rec, "--gpu", "h200", "--json", "--shapes-withheld").stdout)
    assert rep["shapes_withheld_kernels"] > 1000 and "shapes_withheld_kernels" not in full
    # same recording, same measurement; only the pricing of the withheld kernels moves
    for a, b in zip(full["clock_sources"], rep["clock_sources"]):
        assert a["total"]["measured_energy_j"] == b["total"]["measured_energy_j"]
        assert a["total"]["simulated_energy_j"] != b["total"]["simulated_energy_j"]
    r = cli("validate", "--models", "--shapes-withheld")
    assert r.returncode != 0 and "--shapes-withheld takes one single-GPU recording" in r.stderr


def test_bench_prints_throughput_against_its_targets(cli):
    # --quick: each section's smallest case (the whole bench, ~70-95 s, is for figures, not for the test suite)
    r = cli("bench", "--events", "200000", "--quick")
    assert r.returncode == 0, r.stderr
    assert "M events/s" in r.stdout and "target >= 5 M/s" in r.stdout
    assert "llama-3.3-70b on 1,024 GPUs" in r.stdout and "target < 60 s" in r.stdout  # the 70B target case still runs
    assert "Perseus a100_gpt3-xl_pp4" in r.stdout and "power-budget environment step" in r.stdout
    for skipped in ("study grid: skipped (--quick)", "scaling tables: skipped (--quick)", "gpt3-175b: skipped (--quick)",
                    "Kareus frontier: skipped (--quick)", "fleet study: skipped (--quick)"):
        assert skipped in r.stdout, skipped
    assert "peak memory" in r.stdout
    assert cli("bench", "--quick", "--quick").returncode == 2  # a flag given twice is refused, as everywhere


def _scenario(tmp_path, root, **changes):
    doc = {"name": "t", "trace": os.path.join(root, "tests", "fixtures", "kineto_current.json"),
           "gpu": "h200", "policy": "native"}
    doc.update(changes)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_trace_or_recording_given_where_a_scenario_is_expected_is_named_as_such(cli, root, tmp_path):
    # `dvfs-sim run trace.json.gz` is what a new user types first: the error says what the file is and which
    # scenario would replay it, instead of "malformed JSON" or an unknown key of the trace's header
    fx = os.path.join(root, "tests", "fixtures")
    recording = os.path.join(root, "traces", "recordings", "h200-gpt3xl")
    cycles = os.path.join(root, "traces", "recordings", "h100-profiler-options", "cnn-scheduled")
    first_cycle = os.path.join(cycles, "vm_967.1796681556681751269.pt.trace.json.gz")
    for command in ("run", "compare"):
        for path, what, named in ((os.path.join(fx, "kineto_current.json.gz"), "is gzip-compressed (a trace?)", None),
                                  (os.path.join(fx, "kineto_current.json"), "traceEvents: a Kineto trace", None),
                                  (recording, "is a directory, expected a scenario file (JSON); it holds a recording", None),
                                  (cycles, "it holds 2 trace files: to replay one", first_cycle)):
            r = cli(command, path)
            shown = json.dumps(os.path.normpath(os.path.abspath(named or path)), ensure_ascii=False)  # as the message prints it
            assert_one_line_error(r, path, what, "expected a scenario file", '{"trace": ' + shown, '"gpu": "h200"')
    # a file another reader claims (trace_formats(): Nsight Systems' SQLite export, Chakra) is named by that reader
    for name, head, reader in (("export.sqlite", b"SQLite format 3\0", "nsys-sqlite"), ("job.0.et", b"\x0a\x05", "chakra")):
        f = tmp_path / name
        f.write_bytes(head + bytes(64))
        assert_one_line_error(cli("run", f), str(f), "is a trace of the " + reader + " reader", "expected a scenario file")
    named = _scenario(tmp_path, root, name="traceEvents")  # a scenario whose value spells the key is no trace
    r = cli("run", named, "-o", tmp_path / "named")
    assert r.returncode == 0, r.stderr
    for command in ("control", "fleet"):  # the power-budget and fleet commands read scenario files too
        gz = os.path.join(fx, "kineto_current.json.gz")
        assert_one_line_error(cli(command, gz), gz, "is gzip-compressed (a trace?)", "expected a scenario file")
    # the scenario the message suggests replays the recording
    message = cli("run", recording).stderr
    suggested = json.JSONDecoder().raw_decode(message, message.index('{"trace"'))[0]
    scenario = tmp_path / "suggested.json"
    scenario.write_text(json.dumps(suggested))
    r = cli("run", scenario, "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["totals"]["energy_j"] > 0


def test_bad_input_is_one_line_and_exit_code_2(cli, root, tmp_path):
    fx = os.path.join(root, "tests", "fixtures")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, polcy="max")), "s.json", "polcy", "unknown key")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, gpu="h900")), "gpu", "unknown GPU", "h200")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, policy="turbo")), "policy", "unknown policy")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, policy={"name": "static", "sm_mhz": 3000, "mem_mhz": 3201})),
                    "policy.sm_mhz", "not supported", "345-1980 MHz")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, repeat="x")), "repeat", "expected an integer")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, switch_latency={"sm": {"target_scaling": [[1500, 1], [900, 2]]}})),
                    "s.json", "switch_latency.sm.target_scaling", "strictly increasing")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, seed="x")), "seed", "non-negative integer")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, trace=os.path.join(fx, "truncated.json.gz"))),
                    "truncated.json.gz", "truncated gzip")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, trace=os.path.join(fx, "no_trace_events.json"))),
                    "no_trace_events.json", "traceEvents")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, trace=os.path.join(fx, "no_kernels.json"))),
                    "no_kernels.json", "no device activity")
    assert_one_line_error(cli("run", _scenario(tmp_path, root, trace="missing.json")), "trace", "not found")
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    assert_one_line_error(cli("run", bad), "bad.json", "malformed JSON")
    assert_one_line_error(cli("run", tmp_path / "nope.json"), "nope.json", "cannot open")
    assert_one_line_error(cli("validate", tmp_path, "--gpu", "h200"), "trace.json.gz", "missing")
    assert_one_line_error(cli("validate", os.path.join(root, "traces", "recordings", "h200-gpt3xl"), "--gpu", "h900"),
                    "--gpu", "unknown GPU")


def test_usage_errors_exit_2(cli):
    assert cli().returncode == 2
    assert cli("frobnicate").returncode == 2
    assert cli("run", "--bogus").returncode == 2
    assert cli("validate").returncode == 2
    assert cli("--help").returncode == 0


def test_calibrate_profile_writes_a_model_that_run_and_validate_accept(cli, root, tmp_path):
    prof = os.path.join(root, "traces", "profiles", "perseus", "bloom+a100_sxm_bf16.csv")
    base = os.path.join(root, "models", "calibration", "a100-sxm4.base.json")
    out = tmp_path / "a100-bloom.json"
    r = cli("calibrate", "--profile", prof, "--base", base, "-o", out, "--date", "2026-01-02")
    assert r.returncode == 0, r.stderr
    assert "time MAPE" in r.stdout and "wrote " + str(out) in r.stdout
    model = json.loads(out.read_text())
    assert model["status"] == "calibrated"
    assert set(model["computations"]) == {"forward", "backward"}
    cal = model["provenance"]["calibration"]
    assert cal["date"] == "2026-01-02" and cal["data"] == "bloom+a100_sxm_bf16.csv"
    assert cal["fit_error_in_sample"]["time_mape_pct"] < 3
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"trace": os.path.join(root, "tests", "fixtures", "kineto_current.json"),
                                    "gpu": str(out), "policy": "native"}))
    r = cli("run", scenario, "-o", tmp_path / "run", "--json")
    assert r.returncode == 0, r.stderr


def test_calibrate_bad_input_names_file_row_and_problem(cli, root, tmp_path):
    base = os.path.join(root, "models", "calibration", "a100-sxm4.base.json")
    bad = tmp_path / "bad.csv"
    bad.write_text("stage,instruction,frequency,time\n0,forward,1410,0.05\n")
    r = cli("calibrate", "--profile", bad, "--base", base)
    assert r.returncode == 2
    assert r.stderr.strip() == "dvfs-sim: error: %s: row 1: missing column \"energy\" (expected stage,instruction,frequency,time,energy)" % bad
    bad.write_text("stage,instruction,frequency,time,energy\n0,forward,1410,0.05,20\n0,forward,1395,0.05,20\n0,forward,1400,0.05,20\n")
    r = cli("calibrate", "--profile", bad, "--base", base)
    assert r.returncode == 2 and "row 4 (frequency): frequency 1400 MHz is out of order" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = cli("calibrate", "--recording", tmp_path, "--base", "h200")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    r = cli("calibrate", "--profile", bad)
    assert r.returncode == 2 and "needs --base" in r.stderr


def test_validate_models_sections_prints_and_writes_only_those_sections(cli, tmp_path):
    out = tmp_path / "profiles.json"
    r = cli("validate", "--models", "--sections", "stage_profiles, retarget", "-o", out)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Stage profiles:") and "Retargeting A100 -> A40" in r.stdout
    assert "H200 recordings, calibrated h200 model" not in r.stdout and r.stdout.rstrip().splitlines()[-1].startswith("data: ")
    assert set(json.loads(out.read_text())) == {"stage_profiles", "retarget", "data"}
    for args, message in ((["--models", "--sections", "loops"], '--sections: expected some of stage_profiles, retarget, recordings, power_suite, each once, got "loops"'),
                          (["--models", "--sections", "retarget,retarget"], '"retarget" twice'),
                          (["--models", "--sections", "retarget,,recordings"], "--sections: expected comma-separated items with none empty"),
                          (["--sections", "retarget"], "validate --sections goes with --models"),
                          (["--models", "--perseus-runs", tmp_path], "validate --models takes no --perseus, --perseus-runs or --stream-pairs"),
                          (["--models", "--sections", "retarget", "--stream-pairs", tmp_path], "takes no --perseus")):
        assert_one_line_error(cli("validate", *args), message)


def test_validate_models_reports_held_out_retarget_and_recording_figures(models_report):
    # the session's one run (about a minute): the text on stdout, the same report as JSON in -o's file
    r, rep = models_report
    held_out = [x for x in rep["stage_profiles"] if x["kind"] == "held-out"]
    assert {x["model"] for x in held_out} == {"a100-sxm4", "a40"}
    for x in held_out:
        assert x["meets_target"], x
        assert x["time_mape_pct"] <= 3 and x["energy_mape_pct"] <= 5
    assert all(x["points"] == 4 * 60 for x in rep["retarget"])
    # both workloads by each method: one share per computation, FLOPs and bytes, and its recompute sensitivity
    assert sorted(x["method"] for x in rep["retarget"]) == sorted(["share", "work", "work+recompute"] * 2)
    for x in rep["retarget"]:
        if x["method"] == "work":  # fit on the A100 rows only: a physical fraction of the datasheet bandwidth
            assert 0 < x["memory_efficiency"] <= 1 and len(x["series"]) == 4
    kinds = {x["recording"].rsplit("/", 1)[1]: x["kind"] for x in rep["recordings"]}
    assert kinds == {"h200-gpt3xl": "in-sample", "h200-llama1b": "held-out", "h200-gpt3-2.7b": "held-out",
                     "h200-llama3.2-3b": "held-out"}
    for x in rep["recordings"]:
        assert x["meets_target"] and x["energy_per_step_mape_pct"] <= 5, x
        assert abs(x["total_energy_error_pct"]) < 5
    # the capped loops measured three ways: the suite's steady window (of record), their own profiled window and one
    # long profiled step
    win = rep["power_suite"]["steady_window_rows"]
    assert len(win) == 45 and all(w["kind"] in ("in-sample", "held-out") for w in win)
    rows = {x["loop"]: x for x in rep["power_suite"]["loops"]}
    for w in win:
        assert rows[w["loop"]]["measured_over"] == "steady window"
        assert w["suite"]["recorded_energy_error_pct"] == rows[w["loop"]]["recorded"]["energy_error_pct"]
        assert w["gapless"]["measured_mean_power_w"] != w["suite"]["measured_mean_power_w"]
    # loops recorded more than once (split repeat_loops, repeat_held_out): every recording priced from its own trace,
    # the figure of record unchanged and the score against all recordings beside it
    rep_rows = {x["loop"]: x for x in rep["power_suite"]["repeated_loops"]}
    assert {"idle", "gemm-bf16-1024", "conv-7x7-s2-3c-224-b64", "memset-2g"} <= set(rep_rows)
    for name, x in rep_rows.items():
        assert len(x["recordings"]) >= 2 and x["kind"] == rows[name]["kind"]
        assert x["recordings"][0]["native_energy_error_pct"] == rows[name]["native"]["energy_error_pct"]
        errs = [r["native_energy_error_pct"] for r in x["recordings"]]
        assert abs(x["mean_native_energy_error_pct"] - sum(errs) / len(errs)) < 1e-9
    rs = rep["power_suite"]["repeated_loop_summary"]
    held = rep["power_suite"]["loop_summary"]["held_out"]
    assert rs["held_out_loops"] == held["native_energy_abs_error"]["count"]
    assert abs(rs["of_record"]["native_energy_abs_error_mean_pct"] - held["native_energy_abs_error"]["mean_pct"]) < 1e-9
    assert rs["of_record"]["native_within_8_pct"] == held["native_within_8_pct"]
    assert "against the mean over each loop's recordings" in r.stdout
    # the suite's held-out loops recorded on an H100, priced under the shipped h100-sxm sibling (split h100_held_out_loops)
    sib = rep["power_suite"]["sibling_loops"]
    assert sib["model"] == "h100-sxm" and len(sib["loops"]) == 45 and len(sib["idle"]) == 2
    assert all(x["kind"] == "held-out" for x in sib["loops"])
    assert sib["summary"]["native_energy_abs_error"]["count"] == 45
    assert "shipped h100-sxm model (never fit on that card's data)" in r.stdout
    # the fp64 loops (split fp64_tensor_energy): the fit loop and the held-out ones, apart from the suite's rows
    fp64 = {x["loop"]: x["kind"] for x in rep["power_suite"]["fp64_loops"]}
    assert fp64 == {"gemm-fp64-8192": "in-sample", "gemm-fp64-4096": "held-out", "cholesky-fp64-8192": "held-out",
                    "trsm-fp64-8192": "held-out"}
    # the FMA-chain loops (split busy_sm_fma): its refit was not kept, so none of them is labelled in-sample
    busy = {x["loop"]: x["kind"] for x in rep["power_suite"]["busy_sm_loops"]}
    assert busy == {"smallgrid-16": "not fit", "smallgrid-66": "not fit", "smallgrid-132": "not fit",
                    "smallgrid-8": "held-out", "smallgrid-33": "held-out", "smallgrid-264": "held-out"}
    assert "FMA chains on 8-264 blocks" in r.stdout
    # the non-vectorised elementwise loops (split unvectorised_bytes): its four fit loops and four held out, apart
    unvec = {x["loop"]: x["kind"] for x in rep["power_suite"]["unvectorised_loops"]}
    assert unvec == {"bcast-sub-col-fp32": "in-sample", "bcast-add-row-fp32": "in-sample", "strided-add-fp32": "in-sample",
                     "transpose-copy-fp32": "in-sample", "bcast-mul-head-bf16": "held-out", "bcast-sub-col-bf16": "held-out",
                     "contig-sub-fp32": "held-out", "contig-add-bf16": "held-out",
                     # recorded after the fit (split round16_unvectorised_loops), all held out
                     "permute-copy-5d-bf16": "held-out", "to-channels-last-fp32": "held-out", "to-nchw-bf16": "held-out",
                     "bcast-mul-col-fp32": "held-out", "bcast-add-channel-bf16": "held-out", "transpose-copy-bf16": "held-out",
                     "strided-mul-4-fp32": "held-out", "mixed-add-transposed": "held-out",
                     # recorded as fit loops for a strides term that was not kept (split strided_fit_loops)
                     "transpose-copy-fp32-8192": "not fit", "to-channels-last-bf16": "not fit", "to-nchw-fp32": "not fit",
                     "strided-add-8-fp32": "not fit", "bcast-mul-row-bf16": "not fit", "bcast-sub-col-fp32-256": "not fit",
                     "permute-copy-4d-fp32": "not fit", "outer-add-bf16": "not fit"}
    assert "non-vectorised path" in r.stdout
    # every held-out whole workload also priced with its operator shapes withheld (split shapes_withheld, report
    # only): a workload with counted work loses it, and the summary line gives both columns
    wl = rep["power_suite"]["workloads"]
    assert len(wl) >= 60 and all("shapes_withheld_total_energy_error_pct" in x for x in wl)
    with_shapes = [x for x in wl if x["shapes_withheld_kernels"] > 0]
    assert len(with_shapes) >= 40
    assert any(x["shapes_withheld_total_energy_error_pct"] != x["total_energy_error_pct"] for x in with_shapes)
    for x in wl:
        if x["shapes_withheld_kernels"] == 0:  # a trace without shapes: the same figure in both columns
            assert x["shapes_withheld_total_energy_error_pct"] == x["total_energy_error_pct"]
    ws = rep["power_suite"]["workload_summary"]  # both columns summarised in the JSON report as in the text
    for column, field in (("with_shapes", "total_energy_error_pct"),
                          ("shapes_withheld", "shapes_withheld_total_energy_error_pct")):
        assert ws[column]["native_within_8_pct"] == sum(abs(x[field]) <= 8 for x in wl)
        assert abs(ws[column]["native_energy_abs_error"]["mean_pct"] - sum(abs(x[field]) for x in wl) / len(wl)) < 1e-9
    assert "operator shapes withheld" in r.stdout and "shapes withheld" in r.stdout
    # split shapeless_prior_fit_workloads: held-out workloads with a script variant among the priors' fit data apart
    # from the rest, and the ten themselves (no shipped fit reads them)
    assert ws["shapes_withheld_variant_in_fit"]["workloads"] == 10
    assert (ws["shapes_withheld_variant_in_fit"]["workloads"] + ws["shapes_withheld_no_variant_in_fit"]["workloads"]
            == ws["shapes_withheld"]["workloads"] == len(wl))
    fit = rep["power_suite"]["prior_fit_workloads"]
    assert len(fit) == 10 and all(x["kind"] == "not fit" for x in fit)
    assert ws["prior_fit_shapes_withheld"]["workloads"] == 10
    assert "class priors' fit data below the cap" in r.stdout
    text = r.stdout
    assert "held-out" in text and "Retargeting A100 -> A40" in text and "h200-llama1b" in text
    assert "capped loops measured three ways" in text and "one long step" in text


def test_calibrate_recording_with_telemetry_outside_the_trace_is_a_one_line_error(cli, root, tmp_path):
    src = os.path.join(root, "traces", "recordings", "h200-gpt3xl")
    rec = tmp_path / "shifted"
    rec.mkdir()
    for name in ("run.json", "trace.json.gz"):
        with open(os.path.join(src, name), "rb") as f:
            (rec / name).write_bytes(f.read())
    with open(os.path.join(src, "telemetry.csv")) as f:
        lines = f.read().splitlines()
    header, rows = lines[0], lines[1:]
    t = header.split(",").index("t_ns")
    shifted = []
    for row in rows:  # one hour later: no sample covers the trace
        cells = row.split(",")
        cells[t] = str(int(cells[t]) + 3600 * 10**9)
        shifted.append(",".join(cells))
    (rec / "telemetry.csv").write_text("\n".join([header] + shifted) + "\n")
    r = cli("calibrate", "--recording", rec, "--base", "h200")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "telemetry.csv: t_ns: telemetry does not overlap the trace" in lines[0]


def test_compare_prints_one_table_and_writes_csv_and_json(cli, root, tmp_path):
    scen = os.path.join(root, "scenarios", "kernel-dvfs", "rtx-3080-ti.json")
    r = cli("compare", scen, "--policies", "max,pass-level,per-kernel,latency-aware", "--budget", "1", "--latency", "0",
            "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "trace retargeted from h200" in r.stdout
    table = json.loads((tmp_path / "compare.json").read_text())
    rows = {x["policy"]: x for x in table["rows"]}
    assert list(rows) == ["native", "max", "pass-level", "per-kernel", "latency-aware"]
    assert rows["native"]["energy_saved_pct"] == 0 and rows["native"]["slowdown_pct"] == 0
    for p in ("pass-level", "per-kernel", "latency-aware"):
        assert rows[p]["slowdown_pct"] <= 1.0 + 1e-6, rows[p]
        assert rows[p]["energy_saved_pct"] > 0, rows[p]
    assert rows["per-kernel"]["energy_saved_pct"] >= rows["pass-level"]["energy_saved_pct"]
    assert rows["per-kernel"]["clock_switches"] > rows["pass-level"]["clock_switches"] > 0
    # with no switch latency every request takes effect at once
    assert all(r["switches_applied"] == r["clock_switches"] for r in rows.values())
    assert "requests   applied" in r.stdout and "no request took effect" not in r.stdout
    csv_lines = (tmp_path / "compare.csv").read_text().splitlines()
    assert csv_lines[0].startswith("gpu,policy,budget_pct") and len(csv_lines) == 6
    assert "clock_switches,switches_applied,switch_latency_s" in csv_lines[0]


def test_compare_says_when_no_clock_request_took_effect(cli, root, tmp_path):
    # Per kernel under the H200's 50 ms switch latency: every request is superseded before it takes effect.
    r = cli("compare", "--policies", "per-kernel", "--budget", "1", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    row = json.loads((tmp_path / "compare.json").read_text())["rows"][1]
    assert row["policy"] == "per-kernel" and row["clock_switches"] > 1000 and row["switches_applied"] == 0
    assert "no request took effect: each was superseded within the switch latency" in r.stdout
    # the default trace has no operator shapes: the note says its savings rest on the class priors, and that a
    # pre-pass puts the trace at the cap, where the priors were set
    notes = " ".join(json.loads((tmp_path / "compare.json").read_text()).get("notes", []))
    assert "priced by class priors" in notes and "the regime the class priors were set in" in notes


def test_compare_bad_input_is_one_line_and_exit_2(cli, root):
    scen = os.path.join(root, "scenarios", "kernel-dvfs", "h200.json")
    for args, needle in ((("--budget", "-1"), "--budget: expected a slowdown budget from 0 to 1000 %"),
                         (("--budget", "1e300"), "--budget: expected a slowdown budget from 0 to 1000 %"),
                         (("--latency", "-0.1"), "--latency: expected a switch latency >= 0 s"),
                         (("--budget", "lots"), "--budget: expected a slowdown budget in %"),
                         (("--policies", "per-kernal"), "unknown policy \"per-kernal\"")):
        r = cli("compare", scen, *args)
        assert r.returncode == 2, (args, r.stdout)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], (args, r.stderr)


def test_synth_runs_a_70b_pipeline_and_rejects_bad_layouts(cli):
    r = cli("synth", "--model", "llama-3.3-70b", "--tp", "8", "--pp", "8", "--dp", "16")
    assert r.returncode == 0, r.stderr
    assert "1024 GPUs (128 actors)" in r.stdout and "64 micro-batches" in r.stdout
    for args, needle in ((("--tp", "3", "--pp", "8"), "tp: TP 3 does not divide"),
                         (("--pp", "7"), "pp: 80 layers do not split into 7 stages"),
                         (("--tp", "0"), "--tp: expected a positive integer"),
                         (("--power-cap", "0"), "--power-cap: expected a power limit > 0 W")):  # 0 ran as no cap
        r = cli("synth", "--model", "llama-3.3-70b", *args)
        assert r.returncode == 2, args
        assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, (args, r.stderr)


def test_synth_straggler_shows_as_waiting_at_the_all_reduce(cli, tmp_path):
    base = cli("synth", "--model", "llama-3.2-3b", "--tp", "1", "--pp", "2", "--dp", "4", "--microbatches", "4", "--json")
    slow = cli("synth", "--model", "llama-3.2-3b", "--tp", "1", "--pp", "2", "--dp", "4", "--microbatches", "4",
               "--straggler", "1:1.2", "--json", "-o", tmp_path / "s.json")
    assert base.returncode == 0 and slow.returncode == 0, slow.stderr
    b, s = json.loads(base.stdout), json.loads(slow.stdout)
    assert json.loads((tmp_path / "s.json").read_text()) == s
    assert s["iteration_s"] > 1.15 * b["iteration_s"]
    assert s["extrinsic_wait_gpu_s"] > 10 * max(b["extrinsic_wait_gpu_s"], 1e-3)
    assert s["gpus"] == 8 and len(s["stages"]) == 2
    r = cli("synth", "--model", "llama-3.2-3b", "--dp", "2", "--straggler", "5:1.2")
    assert r.returncode == 2 and "straggler" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    for bw in ("0", "-1e7"):  # -1 inside means "the model's NIC": a negative one ran with that default
        r = cli("synth", "--model", "llama-3.2-3b", "--inter-bw", bw)
        assert_one_line_error(r, "--inter-bw: expected a bandwidth in bytes/s in [1, 1e15], got " + bw)


def test_synth_plans_per_kernel_clocks_for_every_stage(cli):
    r = cli("synth", "--model", "llama-3.2-3b", "--pp", "2", "--dp", "2", "--microbatches", "4",
            "--policy", "per-kernel", "--budget", "1", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["policy"] == "per-kernel" and res["budget_pct"] == 1 and res["plan_s"] > 0
    r = cli("synth", "--model", "llama-3.2-3b", "--policy", "per-kernel", "--budget", "-2")
    assert r.returncode == 2 and "--budget" in r.stderr


def test_run_accepts_a_synthetic_multi_gpu_scenario(cli, root, tmp_path):
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({"synthetic": {"model": "llama-3.2-3b", "tp": 1, "pp": 2, "dp": 2, "microbatches": 4},
                                "gpu": "h200", "policy": "native"}))
    r = cli("run", scen, "-o", tmp_path / "out", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["gpus"] == 4 and res["iteration_s"] > 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == res
    for bad, needle in (({"model": "llama-3.2-3b", "tpp": 2}, "synthetic.tpp: unknown key"),
                        ({"model": "llama-3.2-3b", "tp": 0}, "synthetic.tp: expected an integer in [1, 1000000], got 0"),
                        ({"model": "llama-3.2-3b", "schedule": "zigzag"}, "synthetic.schedule: expected 1f1b, gpipe or interleaved-1f1b"),
                        ({"model": "llama-3.2-3b", "dp": 2, "straggler": {"replica": 2, "factor": 1.1}},
                         "synthetic.straggler.replica: expected a replica index"),
                        ({"model": "llama-3.2-3b", "pp": 2, "dp": 2, "gpus": 8}, "synthetic.gpus: expected TP x CP x PP x DP = 4 GPUs"),
                        ({"model": "llama-3.2-3b", "cluster": {"topology": "torus"}}, "synthetic.cluster.topology: expected"),
                        ({"model": "llama-3.2-3b", "cluster": {"inter_bw_bps": 0}}, "synthetic.cluster.inter_bw_bps"),
                        ({"model": "llama-3.2-3b", "gradient_sync": {"mode": "zero3"}}, "synthetic.gradient_sync.mode: expected"),
                        ({"model": "llama-3.2-3b", "vpp": 2, "schedule": "1f1b"}, "synthetic.schedule: expected 1 model chunk per stage for the 1f1b schedule"),
                        ({"model": "gpt-9"}, "s.json: synthetic.model: unknown model \"gpt-9\"")):
        scen.write_text(json.dumps({"synthetic": bad, "gpu": "h200", "policy": "native"}))
        r = cli("run", scen)
        assert r.returncode == 2, (bad, r.stdout)
        assert len(r.stderr.strip().splitlines()) == 1 and needle in r.stderr, (bad, r.stderr)


def test_synth_writes_one_row_per_simulated_gpu_and_refuses_layouts_that_cannot_run(cli, tmp_path):
    csv = tmp_path / "gpus.csv"
    r = cli("synth", "--model", "llama-3.2-3b", "--pp", "2", "--dp", "2", "--microbatches", "4", "--per-gpu", csv)
    assert r.returncode == 0, r.stderr
    rows = csv.read_text().strip().splitlines()
    assert rows[0].startswith("gpu,replica,stage,tp_rank,gpus,energy_per_gpu_j") and len(rows) == 1 + 4
    for args, needle in ((["--model", "llama-3.3-70b", "--tp", "8", "--dp", "2", "--microbatches", "1"], "needs about"),
                         (["--model", "llama-3.3-70b", "--tp", "8", "--pp", "8", "--dp", "16", "--gpus", "512"], "--gpus"),
                         (["--model", "llama-3.2-3b", "--pp", "4", "--vpp", "7", "--microbatches", "6"], "multiple of the pipeline stages"),
                         (["--model", "llama-3.2-3b", "--topology", "torus"], "--topology"),
                         (["--model", "llama-3.2-3b", "--gradient-sync", "zero3"], "--gradient-sync")):
        assert_one_line_error(cli("synth", *args), needle)


def test_a_list_option_with_an_empty_item_is_one_line(cli, root):
    # "--policies ," compared nothing, "--sizes 16,,32" and "--controller ," skipped the empty item
    pb = os.path.join(root, "scenarios", "power-budget")
    for args, opt in ((("compare", os.path.join(root, "scenarios", "default.json"), "--policies", ","), "--policies"),
                      (("fleet", os.path.join(pb, "fleet-mixed.json"), "--sizes", "16,,32"), "--sizes"),
                      (("control", os.path.join(pb, "grpo-7b-16gpu.json"), "--controller", "pid,"), "--controller")):
        assert_one_line_error(cli(*args), opt, "none empty")


def test_options_and_keys_that_changed_nothing_are_refused(cli, root, tmp_path):
    # Each ran before as if it were not there: an empty option value fell back to the default, a budget under a policy
    # that plans nothing, --trace-gpus with no trace to write, a budget beside a clock plan, an empty clock_plan.
    assert_one_line_error(cli("run", "--engine", ""), "--engine: expected a value, got an empty string")
    assert_one_line_error(cli("run", "-o", ""), "expected a value, got an empty string")
    assert_one_line_error(cli("report", ""), "expected a value, got an empty string")
    assert_one_line_error(cli("run", "--trace-gpus", "0-7"), "--trace-gpus: expected with --trace-out")
    assert_one_line_error(cli("synth", "--model", "llama-3.2-3b", "--pp", "2", "--budget", "5"),
                          "--budget: the native policy takes no slowdown budget")
    plan37 = os.path.join(root, "scenarios", "critical-path", "gpt3-xl-pp4-a100-perseus-plan37.json")
    with open(plan37) as f:
        doc = json.load(f)
    doc["clock_plan"] = os.path.join(root, "traces", "perseus-runs", "a100_gpt3-xl_pp4", "37.sched.json.gz")
    doc["output"] = {"dir": str(tmp_path / "out")}
    for change, needle in (({"policy": {"name": "critical-path", "budget_pct": 10}}, "drop policy.budget_pct"),
                           ({"clock_plan": ""}, 'clock_plan: no plan file at ""'),
                           ({"clock_plan": str(tmp_path)}, "clock_plan: no plan file at")):
        s = tmp_path / "s.json"
        s.write_text(json.dumps({**doc, **change}))
        assert_one_line_error(cli("run", s), "s.json", needle)


def test_options_and_keys_that_would_change_nothing_are_refused_naming_them(cli, root, tmp_path):
    from pathlib import Path
    root = Path(root)
    synthetic = {"name": "sy", "synthetic": {"model": "gpt3-xl", "tp": 1, "pp": 4, "dp": 2, "microbatches": 8},
                 "gpu": "h200", "policy": "native"}
    scen = tmp_path / "s.json"
    for extra, needle in (({"repeat": 3}, "repeat: a synthetic job does not take it"),
                          ({"engine": "event"}, "engine: a synthetic job does not take it"),
                          ({"trace_gpu": "a100-sxm4"}, "trace_gpu: a synthetic job does not take it"),
                          ({"output": {"timeline_interval_s": 0.5}}, "output.timeline_interval_s: a synthetic job writes no timeline"),
                          ({"output": {"dir": ""}}, "output.dir: expected a folder path, got an empty string")):
        scen.write_text(json.dumps(dict(synthetic, **extra)))
        assert_one_line_error(cli("run", scen), "s.json: " + needle)
    scen.write_text(json.dumps(synthetic))
    assert_one_line_error(cli("run", scen, "--engine", "event"), "--engine: expected a trace replay: a synthetic job")
    assert_one_line_error(cli("synth", "--model", "gpt3-xl", "--pp", "4", "--microbatches", "8", "--policy", "static"),
                          "--policy: static needs its clocks")
    grpo = root / "scenarios" / "power-budget" / "grpo-7b-16gpu.json"
    assert_one_line_error(cli("run", grpo, "-o", tmp_path / "o"), "-o: a control study prints its result and writes no files")
    assert_one_line_error(cli("run", root / "scenarios" / "lifecycle" / "cnn-io.json", "--stream-overlap", "busy-union"),
                          "--stream-overlap: expected a trace replay: a lifecycle study")
    assert_one_line_error(cli("compare", root / "scenarios" / "default.json", "--policies", "max", "--budget", "5", "-o", tmp_path / "c"),
                          "--budget: none of the policies compared takes a slowdown budget")
    assert_one_line_error(cli("run", root / "scenarios" / "default.json", "-o", tmp_path / "d", "--trace-out", tmp_path / "t.json.gz",
                              "--trace-gpus", "5"), "--trace-gpus: expected GPUs of this run (0 to 0), got 5")
    bare = tmp_path / "bare.json.gz"  # a trace without its telemetry: no recorded clock to replay
    bare.write_bytes((root / "traces" / "recordings" / "h200-gpt3xl" / "trace.json.gz").read_bytes())
    scen.write_text(json.dumps({"name": "nt", "trace": str(bare), "gpu": "h200", "policy": "recorded"}))
    assert_one_line_error(cli("run", scen, "-o", tmp_path / "nt"), "policy: the recorded policy replays each kernel at the clocks")


def test_validate_refuses_telemetry_clocks_the_model_cannot_run_or_none_at_all(cli, root, tmp_path):
    import csv
    import shutil
    from pathlib import Path
    src = Path(root) / "traces" / "recordings" / "h200-unseen-5" / "dcgan-train-b256"
    for clock, needle in (("5000", "telemetry sm_mhz: a recorded SM clock of 5000 MHz lies outside h200's clocks (345-1980 MHz)"),
                          ("1", "a recorded SM clock of 1 MHz lies outside"),
                          ("0", "policy: the recorded policy replays each kernel at the clocks its telemetry reported, and this trace has none")):
        rec = tmp_path / ("sm" + clock)
        shutil.copytree(src, rec)
        rows = list(csv.reader(open(rec / "telemetry.csv")))
        col = rows[0].index("sm_mhz")
        for row in rows[1:]:
            row[col] = clock
        with open(rec / "telemetry.csv", "w", newline="") as f:
            csv.writer(f).writerows(rows)
        assert_one_line_error(cli("validate", rec, "--gpu", "h200"), needle)


def test_an_option_given_twice_and_a_name_that_is_no_folder_are_refused(cli, root, tmp_path):
    import os
    assert_one_line_error(cli("run", os.path.join(root, "scenarios", "default.json"), "-o", tmp_path / "a", "-o", tmp_path / "b"),
                          "--output: At Most 1 required but received 2")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    # a flag given twice was taken as once
    assert_one_line_error(cli("models", "--json", "--json"), "--json: given 2 times; expected at most once")
    assert_one_line_error(cli("--no-cache", "models", "--no-cache"), "--no-cache: given 2 times; expected at most once")
    scen = tmp_path / "s.json"
    for name in ("../escaped", "", ".."):
        scen.write_text(json.dumps({"name": name, "trace": os.path.join(root, "tests", "fixtures", "kineto_current.json"),
                                    "gpu": "h200", "policy": "max"}))
        assert_one_line_error(cli("run", scen), "s.json: name: expected a name usable as a folder")
