"""What docs/validation.md says about activity power and the head dimension on the A40 (issue 22, s4_22), checked
against the data and the model: models/calibration/a40_activity.py fits the tensor energy per FLOP on the A40 stage
profiles, counts each A40 run set's tensor rate from its workload and its models-only anchor, and evaluates the
activity power on both A40 run sets. If new data or a changed a40 model breaks one of these, the documented reason
for not shipping activity power for the A40 pipeline computations no longer holds."""

import pytest

from conftest import BIN, load_script


@pytest.fixture(scope="module")
def evidence():
    return load_script("models/calibration/a40_activity.py")


@pytest.fixture(scope="module")
def rows(evidence):
    return evidence.profile_rows()


@pytest.fixture(scope="module")
def rates(evidence):
    return {rs: evidence.workload_rates(rs, binary=BIN) for rs in evidence.RUN_SETS}


def test_the_a40_stage_profiles_do_not_pin_the_tensor_energy_per_flop(evidence, rows):
    fits = [evidence.fit_tensor_energy(lo, hi, rows)[0] for lo, hi in evidence.RANGES]
    assert all(e > 0 for e in fits)
    assert max(fits) > 3 * min(fits)  # which clocks are fitted moves e_t more than threefold


def test_both_a40_workloads_run_below_the_calibration_workloads_tensor_rate(evidence, rows, rates):
    ref = evidence.reference_rates(rows)
    for rs, r in rates.items():
        for inst in ("forward", "backward"):
            assert r[inst][0] < 0.6 * ref[inst], (rs, inst)
    # the 3D set's count is the lower of the two: activity power lowers its computations' power the more
    assert rates["a40_gpt3-6.7b_dp2pp4tp2"]["forward"][0] < rates["a40_gpt3-2.7b_pp8"]["forward"][0]


def test_activity_power_predicts_the_27b_power_gap_but_not_the_3d_one(evidence, rows, rates):
    e_t = evidence.fit_tensor_energy(0, 1380, rows)[0]
    measured, predicted, n = evidence.measured_power_gap("a40_gpt3-2.7b_pp8", e_t, rates["a40_gpt3-2.7b_pp8"])
    assert n >= 20 and measured < -5 and predicted < -5 and abs(measured - predicted) < 5
    measured, predicted, n = evidence.measured_power_gap("a40_gpt3-6.7b_dp2pp4tp2", e_t, rates["a40_gpt3-6.7b_dp2pp4tp2"])
    assert n >= 20 and measured > 0 > predicted  # the 3D set draws more than the profile, the model says less


def test_activity_power_that_meets_the_27b_energy_breaks_the_3d_time(evidence, rows, rates):
    e_t = evidence.fit_tensor_energy(0, 1380, rows)[0]
    ref, clocks = evidence.reference_rates(rows), evidence.anchor_clocks(binary=BIN)
    out = {}
    for rs in evidence.RUN_SETS:
        out[rs] = evidence.mape(evidence.activity_variant(evidence.activity_factors(e_t, rates[rs], ref, clocks)), rs, BIN)
    assert out["a40_gpt3-2.7b_pp8"][1] < 6.0
    assert out["a40_gpt3-6.7b_dp2pp4tp2"][0] > 3.0


def test_head_dimension_80_does_not_carry_the_27b_power_response(evidence):
    # Head dimension 80 does give GPT-3 2.7B (and BLOOM-3B, the same block shape: hidden 2560, 32 heads, micro-batch 4)
    # over twice GPT-3 6.7B's score-matrix bytes per FLOP; yet BLOOM-3B slows under a 200 W limit more than GPT-3 6.7B.
    assert evidence.score_bytes_per_flop(2560, 32, 1024, 4, 1) > 2 * evidence.score_bytes_per_flop(4096, 32, 1024, 4, 2)
    slow = evidence.baseline_slowdowns()
    assert slow["gpt3-2.7b"][-1] < slow["gpt3-6.7b"][-1] < slow["bloom-3b"][-1]


def test_tensor_energy_fit_on_the_3d_set_leaves_the_27b_energy_missed(evidence, rows, rates):
    # The split allows fitting on the 3D set; fitting e_t on its models-only energy MAPE still leaves the 2.7B above 6 %.
    ref, clocks = evidence.reference_rates(rows), evidence.anchor_clocks(binary=BIN)
    e_t, res = evidence.fit_on_3d(rates, ref, clocks, BIN, grid=tuple(i / 10 for i in range(0, 11)))
    assert 0 < e_t <= 0.5
    assert res["a40_gpt3-2.7b_pp8"][1] > 6.0
    shipped_3d = evidence.mape(evidence.MODEL, "a40_gpt3-6.7b_dp2pp4tp2", BIN)[1]
    assert res["a40_gpt3-6.7b_dp2pp4tp2"][1] < shipped_3d  # the fit does lower the 3D's own energy error
