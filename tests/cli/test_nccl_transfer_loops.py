"""NCCL transfers priced by their bytes (issue 16, forty-first round; split nccl_transfers_by_bytes), checked with
models/calibration/nccl_transfer_loops.py on traces/recordings/h100-power-41 and h100-power-41-card2 (two H100s): the
held-out loops within 10 % (the decision rule that adopted the form), where the communication prior prices them far
below, and power rising with the channels that move the bytes (the figures the recordings' READMEs quote)."""

import json
import os

import pytest

from conftest import ROOT, loops_report

SPLIT = os.path.join(ROOT, "models", "calibration", "h200-power-split.json")


@pytest.fixture(scope="module", params=["h100-power-41", "h100-power-41-card2"])
def card(request, tmp_path_factory):
    return loops_report("nccl_transfer_loops.py", request.param, tmp_path_factory)


def test_every_loop_the_split_names_was_recorded(card):
    split = json.load(open(SPLIT))["nccl_transfers_by_bytes"]
    assert set(split["loops"]) <= set(card["loops"])
    assert card["gpu"] == "h100-sxm"


def test_every_held_out_exchange_is_priced_within_ten_percent_by_its_bytes(card):
    for name, loop in card["loops"].items():
        if name.startswith("nccl41-"):
            assert abs(loop["energy_error_pct"]) <= 10, name


def test_the_communication_prior_priced_the_large_exchanges_far_below(card):
    for name in ("nccl41-sendrecv-2g", "nccl41-sendrecv-512m", "nccl41-sendrecv-1g-ch8"):
        loop = card["loops"][name]
        assert loop["nccl_prior_one_kernel_w"] < 0.7 * loop["measured_w"], name


def test_power_rises_with_the_channels_moving_the_same_bytes(card):
    loops = card["loops"]
    watts = [loops[f"nccl41-sendrecv-1g-ch{c}"]["measured_w"] for c in (1, 2, 4, 8)]
    assert watts == sorted(watts)
    assert [loops[f"nccl41-sendrecv-1g-ch{c}"]["blocks"] for c in (1, 2, 4, 8)] == [1, 2, 4, 8]
    assert watts[0] < loops["idle"]["measured_w"] + 40
