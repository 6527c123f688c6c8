#pragma once
// A kernel-loop recording of the power suite (traces/recorder/record_power_suite.py): one benchmark run in a
// loop, its steady unprofiled window measured by the NVML energy counter (run.json `micro.steady`) and three
// short profiled steps in the trace. What the power model must predict is the steady window's mean power.
#include "traces/src/recording.hpp"

#include <string>

namespace dvfs {

struct KernelLoop {
  std::string name;               // the benchmark, e.g. "gemm-bf16-4096"
  Recording recording;            // the profiled steps, kernels at their recorded clocks
  double steady_step_s = 0;       // one step of the unprofiled loop
  double steady_s = 0;            // the steady window
  double measured_power_w = 0;    // counter energy over the steady window / its length
  double steady_sm_mhz = 0;       // time-weighted mean of the NVML SM clock over the steady window
  bool self_paced = false;        // run.json micro.self_paced: the host sleeps inside each step (duty cycles)
  Json micro;                     // run.json `micro`: what the loop runs (kind, dtype, shape, analytic work)
};

// run.json `micro.steady`: the unprofiled window's length, step time and counter mean power; InputError naming
// run_path and the field when missing or malformed. (A loop without kernels, idle, has only this.)
struct SteadyWindow {
  double t0_ns = 0, t1_ns = 0, seconds = 0, step_s = 0, mean_power_w = 0;
};
SteadyWindow read_steady_window(const Json& run, const std::string& run_path);

// Reads a loop recording; InputError naming run.json's field when `micro.steady` is missing or malformed.
KernelLoop load_kernel_loop(const std::string& dir);

// The loop as it ran unprofiled: the profiled steps' kernels, each step's idle time (its lead, the gaps
// between its kernels and its tail) scaled so that the step lasts steady_step_s. The profiler and the
// recorder's per-step synchronisation stretch profiled steps by up to 2.5x on launch-bound loops.
// At the power cap the profiled window ran faster than the steady loop instead: its idle step boundaries let the cap
// controller raise the clock there (h200-clock-probe; docs/design-notes.md). A loop that is not self-paced and whose
// steady step is longer than its profiled kernels and the gaps between them is priced as the steady window ran:
// each kernel stretched by steady_stretch (its work per second divided by it), the gaps between kernels kept, no
// lead or tail left, at the steady window's mean SM clock.
Workload steady_workload(const KernelLoop& loop);
// The factor steady_workload stretches the profiled kernels by: 1 when the steady step leaves the kernels as
// recorded (idle is rescaled instead), > 1 when the steady loop's kernels took longer than the profiled ones.
double steady_stretch(const KernelLoop& loop);

}  // namespace dvfs
