"""Python DVFS policies: callbacks at kernel and tick granularity driving the C++ replay."""
import json
import os

import pytest

import dvfs_sim
from repo_paths import ROOT

RECORDING = os.path.join(ROOT, "traces", "recordings", "h200-gpt3xl")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "kineto_current.json")


class Counting:
    """Asks for nothing: the replay must equal the C++ policy with the same fixed clocks."""

    def __init__(self, clocks=None):
        self.initial_clocks = clocks
        self.kernels = []

    def before_kernel(self, kernel, telemetry):
        self.kernels.append((kernel.index, kernel.kernel_class, kernel.phase, telemetry.sm_mhz))
        return None


def test_a_python_policy_that_asks_nothing_equals_the_cpp_max_and_static_policies():
    sc = {"trace": FIXTURE, "gpu": "h200"}
    p = Counting()
    py_max = dvfs_sim.run(sc, policy=p)
    cpp_max = dvfs_sim.run(dict(sc, policy="max"))
    assert py_max["totals"] == cpp_max["totals"] and py_max["steps"] == cpp_max["steps"]
    assert py_max["policy"] == "Counting" and py_max["python_policy"]["callbacks"] == len(p.kernels) == 4
    assert [k[0] for k in p.kernels] == [0, 1, 2, 3] and {k[3] for k in p.kernels} == {1980}
    static = dvfs_sim.run(dict(sc, policy={"name": "static", "sm_mhz": 990, "mem_mhz": 3201}))
    assert dvfs_sim.run(sc, policy=Counting({"sm_mhz": 990}))["totals"] == static["totals"]


def _rank_trace(path, rank, compute_us):
    """A rank's Kineto trace in PyTorch's layout: a GEMM, then an NCCL all-reduce of 100 MB over ranks 0 and 1."""
    nccl = {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 25000000, "Out msg nelems": 25000000,
            "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]"}
    events = [{"ph": "X", "cat": "kernel", "name": "ampere_bf16_gemm", "pid": 0, "tid": 7, "ts": 0, "dur": compute_us,
               "args": {"device": 0, "stream": 7}},
              {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7,
               "ts": compute_us, "dur": 500, "args": dict(nccl, device=0, stream=20)}]
    path.write_text(json.dumps({"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2}, "traceEvents": events}))
    return str(path)


def test_a_python_policy_replays_a_multi_rank_trace_on_the_scenario_cluster(tmp_path):
    traces = [_rank_trace(tmp_path / "rank0.json", 0, 1000), _rank_trace(tmp_path / "rank1.json", 1, 2000)]
    sc = {"trace": traces, "gpu": "h200", "cluster": {"gpus_per_node": 1, "inter_bw_bps": 1e9}}
    cpp_max = dvfs_sim.run(dict(sc, policy="max"))
    py_max = dvfs_sim.run(sc, policy=Counting())
    assert py_max["totals"] == cpp_max["totals"] and py_max["steps"] == cpp_max["steps"]
    # The 100 MB ring all-reduce over two GPUs at 1 GB/s takes 0.1 s: the cluster of the scenario ran it.
    assert cpp_max["totals"]["time_s"] > 0.1


def test_kernel_callbacks_see_the_kernel_and_their_requests_pay_the_switch_latency():
    class NonGemmAt1410:
        def before_kernel(self, kernel, telemetry):
            return (1980, 3201) if kernel.kernel_class == "gemm" else (1410, None)

    sc = {"trace": RECORDING, "gpu": "h200", "switch_latency": {"sm": {"mean_s": 0}, "mem": {"mean_s": 0}}}
    fast = dvfs_sim.run(sc, policy=NonGemmAt1410(), reuse_trace=True)
    native = dvfs_sim.run(dict(sc, policy="max"), reuse_trace=True)
    assert fast["totals"]["clock_switches"] > 100
    assert fast["totals"]["energy_j"] < native["totals"]["energy_j"]
    slow = dvfs_sim.run(dict(sc, switch_latency={"sm": {"mean_s": 0.01}}), policy=NonGemmAt1410(), reuse_trace=True)
    assert slow["totals"]["switch_latency_s"] > fast["totals"]["switch_latency_s"]


def test_kernel_views_carry_names_annotations_and_the_model_functions():
    seen = {}

    class Look:
        def before_kernel(self, kernel, telemetry):
            if kernel.index == 0:
                seen.update(name=kernel.name, annotations=kernel.annotations, step=kernel.step, kernel=kernel,
                            t_1410=kernel.time_s(1410, 3201), t_1980=kernel.time_s(1980, 3201),
                            p=kernel.power_w(1980, 3201), now=telemetry.now_s)

    dvfs_sim.run({"trace": FIXTURE, "gpu": "h200"}, policy=Look())
    assert seen["name"].startswith("nvjet_sm90") and "forward" in seen["annotations"] and seen["step"] == 0
    assert seen["t_1410"] > seen["t_1980"] > 0 and seen["p"] > 100 and seen["now"] > 0
    assert seen["kernel"].kernel_class == "gemm"  # a kept view stays valid after the run


def test_kernel_views_carry_the_counted_work_the_activity_model_prices():
    works = []

    class Look:
        def before_kernel(self, kernel, telemetry):
            works.append((kernel.duration_s, kernel.work))

    shaped = os.path.join(ROOT, "traces", "recordings", "h200-power", "gemm-bf16-4096")  # record_shapes: counted work
    dvfs_sim.run({"trace": shaped, "gpu": "h200"}, policy=Look())
    gemms = [(d, w) for d, w in works if w["tensor_tflops"] > 0]
    assert len(gemms) > 100 and all(w["source"] == "shapes" and w["tensor_precision"] == "bf16" for _, w in gemms)
    for d, w in gemms:
        assert w["tensor_tflops"] * d * 1e12 == pytest.approx(2.0 * 4096 ** 3, rel=1e-3)  # one 4096^3 GEMM's FLOPs

    class LookAtGemms:
        def before_kernel(self, kernel, telemetry):
            if kernel.kernel_class == "gemm":
                works.append((kernel.duration_s, kernel.work))

    works.clear()
    dvfs_sim.run({"trace": RECORDING, "gpu": "h200"}, policy=LookAtGemms(), reuse_trace=True)  # no shapes: class priors
    assert len(works) > 1000 and all(w["source"] == "unknown" and w["tensor_tflops"] == 0 for _, w in works)


def test_tick_callbacks_run_every_period_and_see_windowed_power():
    class PowerTarget(dvfs_sim.Policy):
        tick_period_s = 0.01

        def __init__(self):
            super().__init__()
            self.powers = []

        def on_tick(self, telemetry):
            self.powers.append(telemetry.window_power_w)
            return {"sm_mhz": 1410} if telemetry.window_power_w > 600 else {"sm_mhz": 1980}

    p = PowerTarget()
    s = dvfs_sim.run({"trace": RECORDING, "gpu": "h200"}, policy=p, reuse_trace=True)
    assert s["policy"] == "PowerTarget"
    assert len(p.powers) == pytest.approx(s["totals"]["time_s"] / 0.01, abs=2)
    assert max(p.powers) > 600 and s["totals"]["clock_switches"] > 2
    assert s["per_gpu"][0]["policy_ticks"] == len(p.powers)


def test_bad_python_policies_raise_input_errors_naming_the_policy_and_the_clock():
    sc = {"trace": FIXTURE, "gpu": "h200"}

    class Odd:
        def before_kernel(self, kernel, telemetry):
            return (1234, 3201)

    with pytest.raises(dvfs_sim.InputError, match=r'python policy "Odd": before_kernel\(\) sm_mhz: SM clock 1234 MHz is not '
                                                  r"supported by h200 \(expected one of 345-1980 MHz in 15 MHz steps\)"):
        dvfs_sim.run(sc, policy=Odd())

    class Text:
        name = "text"

        def before_kernel(self, kernel, telemetry):
            return "fast"

    with pytest.raises(dvfs_sim.InputError, match=r'python policy "text": before_kernel\(\): expected None, \(sm_mhz, mem_mhz\)'):
        dvfs_sim.run(sc, policy=Text())

    class NoPeriod:
        def on_tick(self, telemetry):
            return None

    with pytest.raises(dvfs_sim.InputError, match=r"tick_period_s: on_tick needs a tick period > 0 s"):
        dvfs_sim.run(sc, policy=NoPeriod())
    with pytest.raises(dvfs_sim.InputError, match=r"expected a before_kernel\(kernel, telemetry\) and/or on_tick"):
        dvfs_sim.run(sc, policy=object())
    with pytest.raises(dvfs_sim.InputError, match=r"initial_clocks mem_mhz: memory clock 1 MHz"):
        dvfs_sim.run(sc, policy=Counting((1980, 1)))
    with pytest.raises(dvfs_sim.InputError, match=r"synthetic: a Python policy drives replayed traces only"):
        dvfs_sim.run({"synthetic": {"model": "gpt3-xl", "pp": 2}, "gpu": "h200"}, policy=Counting())


def test_an_exception_in_a_callback_stops_the_run_and_reaches_the_caller():
    class Boom:
        def before_kernel(self, kernel, telemetry):
            if kernel.index == 2:
                raise KeyError("kernel 2")

    with pytest.raises(KeyError, match="kernel 2"):
        dvfs_sim.run({"trace": FIXTURE, "gpu": "h200"}, policy=Boom())
    assert dvfs_sim.run({"trace": FIXTURE, "gpu": "h200", "policy": "max"})["totals"]["energy_j"] > 0  # still usable


def test_every_cpp_policy_is_selectable_by_name_from_python():
    names = dvfs_sim.policy_names()
    assert {"max", "static", "native", "recorded", "per-kernel", "per-kernel-online", "pass-level", "static-best",
            "latency-aware"} <= set(names)
    pipeline = {e["name"] for e in dvfs_sim.policy_entries() if e["kind"] == "pipeline"}
    for name in names:
        policy = {"name": "static", "sm_mhz": 1410, "mem_mhz": 3201} if name == "static" else name
        if name in pipeline:  # critical-path policies plan a pipeline: a synthetic workload, not a trace
            s = dvfs_sim.run({"synthetic": {"model": "gpt3-xl", "pp": 2, "microbatches": 2}, "gpu": "h200", "policy": policy})
            assert s["policy"] == name
            continue
        # recorded replays recorded clocks: a small kernel-loop recording with its telemetry
        trace = os.path.join(ROOT, "traces", "recordings", "h200-power", "add-bf16") if name == "recorded" else FIXTURE
        s = dvfs_sim.run({"trace": trace, "gpu": "h200", "policy": policy})
        if name == "latency-aware":  # replays the candidates and keeps the best, native included
            assert s["plan"][0]["chosen"] and s["policy"] in names
        else:
            assert s["policy"] == name
