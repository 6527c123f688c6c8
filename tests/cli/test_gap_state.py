"""What the H200 draws between kernels and what a byte costs with its data (issue 16, seventh round), checked with
models/calibration/gap_state.py on traces/recordings/h200-gap-state and h200-copy-data: the gap state's model-free
fit says gaps draw idle power (+ ~5 W), so the engine keeps pricing gaps at idle (the split's rule); a copy's and an
add's power depend on the data's bits; the capped loops measured over one long profiled step agree better with the
model at their recorded clocks than the suite's steady window does."""

import json
import os

import pytest

from conftest import BIN, ROOT, load_script

SPLIT = os.path.join(ROOT, "models", "calibration", "h200-power-split.json")


@pytest.fixture(scope="module")
def script():
    return load_script("models/calibration/gap_state.py")


@pytest.fixture(scope="module")
def loops(script):
    return script.load_gap_loops(json.load(open(SPLIT))["gap_state"])


def test_fit_and_held_out_gap_loops_are_disjoint_and_cover_both_kernels_and_every_wait():
    g = json.load(open(SPLIT))["gap_state"]
    assert not set(g["fit"]) & set(g["held_out"])
    assert not set(g["references"]) & (set(g["fit"]) | set(g["held_out"]))
    waits = {"sync", "100us", "300us", "1ms", "3ms", "10ms", "30ms"}
    for kernel in ("add", "copy"):
        names = {n for n in g["fit"] + g["held_out"] if n.startswith("gap-%s-" % kernel)}
        assert {n.rsplit("-", 1)[1] for n in names} == waits


def test_each_loop_is_one_long_profiled_step_with_the_waits_it_names(loops):
    refs, fit, held = loops
    for n, l in {**fit, **held}.items():
        run = json.load(open(os.path.join(ROOT, "traces", "recordings", "h200-gap-state", n, "run.json")))
        assert run["micro"]["window"] == "profiled" and len(run["run"]["profiled_steps"]) == 1
        wait = run["micro"]["host_wait_s"]
        long_gaps = sorted(l.gaps_s)[-len(l.gaps_s) // 3:]  # every other gap follows a burst's synchronisation
        assert min(long_gaps) >= wait
    for r in refs.values():
        assert r.busy_s / r.seconds > 0.99  # back to back


def test_gaps_draw_idle_power_so_the_rule_keeps_the_engine_pricing_them_at_idle(script, loops):
    refs, fit, held = loops
    idle = script.idle_w()
    alpha, tau = script.fit_gap_state(fit, refs, idle)
    assert alpha < 0.05  # the rule's threshold: 'gaps draw idle power', nothing changes
    for l in fit.values():
        assert 0 <= script.gap_excess_w(l, refs[l.kernel], alpha, tau, idle) < 8  # a few W over idle, not hundreds
    # priced at idle, every gap loop is within 3.5 % from 30 us to 30 ms gaps, held out included
    for side in (fit, held):
        assert all(abs(e) < 3.5 for e in script.errors_pct(side, refs, 0.0, 1e-3, idle).values())


def test_a_byte_costs_what_its_bits_toggle_not_only_its_count(script):
    folder = os.path.join(ROOT, "traces", "recordings", "h200-copy-data")
    p = {n: script.window_power_w(os.path.join(folder, n))[0] for n in json.load(open(SPLIT))["copy_data"]["loops"]}
    assert p["copy-fp32-1g-empty"] == pytest.approx(p["copy-fp32-1g-zeros"], rel=0.05)  # never written = zeros
    assert p["copy-fp32-1g-random"] > 1.4 * p["copy-fp32-1g-zeros"]
    assert p["copy-fp32-1g-ones"] < 1.05 * p["copy-fp32-1g-zeros"]
    assert p["add-bf16-random"] - p["add-bf16-zeros"] > 150  # an SM kernel at the same rate: ~180 W of bits


def test_a_copy_engine_prices_its_bytes_apart_and_the_model_assumes_random_bits(script):
    cd = json.load(open(SPLIT))["copy_data"]
    # the first refit (one energy per byte for SM kernels and copy engines) was not kept; the second, with the copy
    # engine's own energy per byte, was (both rules written before their fit ran)
    assert "NOT kept" in cd["outcome"] and cd["copy_engine_bytes"]["outcome"].startswith("2026-12-02 ~08:05 UTC: KEPT")
    assert cd["measurement_of_record"] is True and cd["replaces"] == {"copy-d2d-1g": "copy-fp32-1g-random"}
    h200 = json.load(open(os.path.join(ROOT, "models", "gpus", "h200.json")))["activity"]
    assert h200["copy_engine_pj_per_byte"] > 1.5 * h200["memory_pj_per_byte"]
    folder = os.path.join(ROOT, "traces", "recordings", "h200-copy-data")
    random_copy = script.model_errors(BIN, os.path.join(folder, "copy-bf16-512m-random"))  # not the fit's copy
    zero_copy = script.model_errors(BIN, os.path.join(folder, "copy-bf16-512m-zeros"))
    assert abs(random_copy["recorded"][2]) < 6
    assert zero_copy["recorded"][2] > 30  # zero bytes cost less than the model's randn-like bits


def test_the_held_out_gap_copy_loops_read_within_four_percent(script):
    g = json.load(open(SPLIT))["gap_state"]
    for n in g["held_out"]:
        m = script.model_errors(BIN, os.path.join(ROOT, "traces", "recordings", "h200-gap-state", n))
        assert abs(m["native"][2]) < 4, n


def test_capped_loops_over_one_long_step_read_closer_to_the_model_at_their_recorded_clocks(script, models_report):
    g = json.load(open(SPLIT))["gap_state"]
    rows = script.suite_rows(BIN, models_report[1])
    suite, long_step = [], []
    for n in g["diagnostic_gapless"]["loops"]:
        m = script.model_errors(BIN, os.path.join(ROOT, "traces", "recordings", "h200-gap-state", "gapless-" + n))
        suite.append(abs(rows[n]["recorded"]["energy_error_pct"]))
        long_step.append(abs(m["recorded"][2]))
        # at the cap the native governor lands close either way (gemm-bf16-m1024 +4.2 % since the fourteenth round's
        # governor refit, split unsized_prior_ramp; +3.1 % or less for the others)
        assert abs(m["native"][2]) < 5
    assert sum(long_step) / len(long_step) < sum(suite) / len(suite) - 3
