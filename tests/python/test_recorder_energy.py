"""The energy counter's resolution rule (dvfs_sim.record.energy) on synthetic telemetry, and the trace checks
(dvfs_sim.record.trace_file) on synthetic traces: no GPU, no PyTorch."""
import pytest

from dvfs_sim.record import energy
from dvfs_sim.record.trace_file import TraceMismatch, add_step_ranges, check_steps

MS = 1_000_000


def telemetry(watts, seconds, update_ms=100, sample_ms=5, t0=10**18):
    """Samples every sample_ms of a counter that advances every update_ms at a constant `watts`."""
    out = []
    for i in range(int(seconds * 1000 / sample_ms) + 1):
        t = t0 + i * sample_ms * MS
        ticks = (i * sample_ms) // update_ms
        out.append((t, 5_000_000.0 + watts * ticks * update_ms))  # mJ: W * ms
    return out


def steps(start_ms, step_ms, n, t0=10**18):
    return [{"t0_ns": t0 + int((start_ms + k * step_ms) * MS), "t1_ns": t0 + int((start_ms + (k + 1) * step_ms) * MS)}
            for k in range(n)]


def test_short_steps_get_the_window_energy_not_a_per_step_figure():
    s = energy.summarize(steps(1000, 44, 6), telemetry(300, 3))
    assert s["update_interval_s"] == pytest.approx(0.1)
    assert s["steps_resolved"] == 0 and not s["per_step_resolved"] and s["per_step_energy_j"] is None
    assert s["window_resolved"]  # 264 ms >= 2 x 100 ms
    assert s["window_mean_power_w"] == pytest.approx(300, rel=0.05)
    text = energy.describe(s, 6)
    assert "per-step energy not resolved (steps 44 ms < 2 x the counter's 100 ms updates)" in text
    assert "over the 6-step window" in text


def test_quantised_counter_differences_understate_a_short_window_and_interpolation_does_not():
    """The issue's 113 W: a counter read at the bounds of a 264 ms window sees 2 of its 100 ms jumps."""
    tel = telemetry(150, 3)
    b = steps(1010, 44, 6)
    t0, t1 = b[0]["t0_ns"], b[-1]["t1_ns"]
    read = lambda t: max(e for ts, e in tel if ts <= t)  # noqa: E731  the in-process read at a bound
    quantised_w = (read(t1) - read(t0)) / ((t1 - t0) / 1e6)
    assert quantised_w == pytest.approx(150 * 200 / 264, rel=0.01)  # 114 W
    assert energy.summarize(b, tel)["window_mean_power_w"] == pytest.approx(150, rel=0.05)


def test_long_steps_get_per_step_energy_and_a_too_short_window_gets_none():
    s = energy.summarize(steps(1000, 250, 4), telemetry(400, 3))
    assert s["per_step_resolved"] and len(s["per_step_energy_j"]) == 4
    for e in s["per_step_energy_j"]:
        assert e == pytest.approx(400 * 0.25, rel=0.1)
    assert "J per step (counter, each step >= 2 updates)" in energy.describe(s, 4)
    s = energy.summarize(steps(1000, 20, 6), telemetry(400, 3))
    assert not s["window_resolved"] and s["window_energy_j"] is None
    assert "no energy figure" in energy.describe(s, 6)
    assert energy.summarize(steps(1000, 20, 6), telemetry(400, 0.15))["update_interval_s"] is None


def test_the_rule_is_two_updates():
    assert energy.RESOLVE_UPDATES == 2
    assert energy.resolves(0.2, 0.1) and not energy.resolves(0.199, 0.1) and not energy.resolves(5, None)


def _trace(n_steps, kernels_per_step=3, gpu_step_ranges=(), markers=True):
    ev, corr = [], 0
    for i in range(n_steps + 1):
        if markers:
            ev.append({"ph": "X", "cat": "user_annotation", "name": f"dvfs_sim.step_bound#{i}", "ts": 1000.0 * i,
                       "dur": 0.0, "pid": 1, "tid": 1})
        if i == n_steps:
            break
        for k in range(kernels_per_step):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1000.0 * i + 10 + k,
                       "dur": 1, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": "k", "ts": 1000.0 * i + 20 + k, "dur": 1,
                       "args": {"correlation": corr}})
    for name in gpu_step_ranges:
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": name, "ts": 20.0, "dur": 5000.0})
    return {"baseTimeNanoseconds": 10**18, "traceEvents": ev}


def test_step_ranges_are_written_between_the_markers_and_checked():
    doc = _trace(4)
    assert add_step_ranges(doc, steps(0, 1, 4), "t.json") == "markers"
    assert check_steps(doc, 4) == {"kernels_per_step": [3, 3, 3, 3], "kernels_outside": 0, "device": True}
    with pytest.raises(TraceMismatch, match=r"expected one host range step0..step4 \(run.json lists 5 steps\)"):
        check_steps(doc, 5)


def test_the_issue_23_trace_is_refused_with_one_line():
    """What the recorder before issue 23 wrote on PyTorch 2.11: six host step ranges and one device-side step0."""
    doc = _trace(6, gpu_step_ranges=["step0"])
    add_step_ranges(doc, steps(0, 1, 6), "t.json")
    with pytest.raises(TraceMismatch) as e:
        check_steps(doc, 6, "vit_b32/trace.json.gz")
    assert str(e.value) == ("vit_b32/trace.json.gz: holds a device-side step range 'step0' that the importer would take "
                            "instead of the 6 recorded steps (a profiler or a script's own step ranges)")


def test_a_step_without_gpu_work_and_missing_markers_are_named():
    doc = _trace(3)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not (e.get("cat") == "kernel" and 1000 <= e["ts"] < 2000)]
    add_step_ranges(doc, steps(0, 1, 3), "t.json")
    with pytest.raises(TraceMismatch, match=r"step1 launched no GPU work \(1 of 3 steps empty\)"):
        check_steps(doc, 3)
    bare = _trace(2, markers=False)["traceEvents"]  # PyTorch without Kineto: a bare list, no baseTimeNanoseconds
    with pytest.raises(TraceMismatch, match="3 of the 3 step-bound markers are missing"):
        add_step_ranges(bare, steps(0, 1, 2), "t.json")
