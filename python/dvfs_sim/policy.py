"""Python DVFS policies: prototype a policy without recompiling. Any object with one or both hooks works;
subclassing Policy only documents the attributes.

    class CapAt1410:
        def before_kernel(self, kernel, telemetry):          # before each device activity
            return (1410, None) if kernel.kernel_class != "gemm" else (1980, None)

    class PowerTarget(dvfs_sim.Policy):
        tick_period_s = 0.01                                  # on_tick every 10 ms of simulated time
        def on_tick(self, telemetry):
            return {"sm_mhz": 1410} if telemetry.window_power_w > 600 else {"sm_mhz": 1980}

    dvfs_sim.run("scenarios/default.json", policy=CapAt1410())

Hooks return None (no change), (sm_mhz, mem_mhz) or {"sm_mhz": .., "mem_mhz": ..}; a missing or None
clock keeps the last request. Requests go through the switch latency of `actuator` ("nvml": driver
requests, the default; "firmware": the GPU's own governor) and must be clocks of the GPU model: anything
else raises dvfs_sim.InputError naming the policy, the hook and the clock. An exception raised by a hook
stops the run and reaches the caller unchanged.

`kernel` (dvfs_sim.Kernel): index, gpu, name, kernel_class, kind, duration_s (recorded), gap_before_s,
recorded_sm_mhz, recorded_mem_mhz, sm_fill, step, stream, phase, annotations, work (the counted work the
activity power model prices: source, tensor / fma TFLOP/s, alu TOP/s, memory TB/s at the recorded clocks; source
"unknown" where the class prior prices it; "launch_elementwise", an ATen elementwise kernel without shapes whose
rates were sized from its launch, also priced by the class prior by every shipped model), and the model's time_s(sm, mem) / power_w(sm, mem) of that kernel. `telemetry` (dvfs_sim.Telemetry): now_s, sm_mhz,
mem_mhz (in effect), requested_sm_mhz, requested_mem_mhz, window_power_w (mean over
telemetry_window_s), last_tick_power_w.

One object drives every GPU of a multi-GPU trace; define for_gpu(rank) returning a fresh object to keep
per-GPU state. Cost: see README ("Python policies").
"""


def policy_names():
    """Every policy a scenario's "policy" key accepts (the C++ policy registry; a Python policy is passed as
    policy=). The pipeline ones (critical-path, ...) need a `synthetic` workload: see policy_entries()."""
    return [e["name"] for e in policy_entries()]


def policy_entries():
    """The C++ policy registry: one dict per policy with name, summary, kind ("online", "planned" or
    "pipeline"), keys (of the scenario's policy object) and scenario_keys (top-level keys it reads)."""
    from ._native import core
    return list(core().policy_entries())


class Policy:
    """Optional base class: the attributes a Python policy may define, with their defaults. Define
    before_kernel(kernel, telemetry) and/or on_tick(telemetry) in the subclass (they are looked up,
    not inherited: a policy without before_kernel is not called per kernel, which keeps it cheap)."""

    #: name in summaries and messages (default: the class name)
    name = None
    #: seconds of simulated time between on_tick calls (required with on_tick)
    tick_period_s = 0.0
    #: window of telemetry.window_power_w (default: the tick period)
    telemetry_window_s = None
    #: clocks at the start: None (the model's highest), (sm, mem) or {"sm_mhz", "mem_mhz"}, or a method
    initial_clocks = None
    #: "nvml" (driver requests: the model's switch latency) or "firmware"
    actuator = "nvml"

    def __init__(self):
        if self.name is None:
            self.name = type(self).__name__
