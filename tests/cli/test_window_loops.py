"""What docs/design-notes.md says about the capped loops measured over their own profiled window (issue 16, fifth
round), checked with models/calibration/window_loops.py on traces/recordings/h200-clock-probe/window-loops and the
shipped h200 model: priced against the energy of the window whose kernels it prices, the model misses those loops
by about half of what the power suite's steady-window comparison says; no fit reads these recordings."""

import json
import os

import pytest

from conftest import BIN, ROOT, load_script


@pytest.fixture(scope="module")
def win():
    return load_script("models/calibration/window_loops.py").rows(BIN)


def test_the_window_recordings_are_in_no_list_of_the_power_suites_split():
    split = json.dumps(json.load(open(os.path.join(ROOT, "models", "calibration", "h200-power-split.json")))["fit"])
    assert "window-" not in split


def test_over_their_own_window_the_capped_loops_miss_by_about_half_as_much_at_the_recorded_clocks(win):
    assert len(win) == 10
    mean_window = sum(abs(w["recorded"]) for w in win.values()) / len(win)
    mean_suite = sum(abs(w["suite"][2]) for w in win.values()) / len(win)
    assert mean_window < mean_suite - 2.0
    for loop in ("gemm-bf16-m1024", "tanh-bf16", "gelu-bf16", "gemm-bf16-4096"):  # held out in the suite, > 2.5 % there
        assert abs(win[loop]["recorded"]) < 5.0, loop
        assert win[loop]["suite"][0] == "held-out"
