#pragma once
// A kernel-loop recording of the power suite (traces/recorder/record_power_suite.py): one benchmark run in a
// loop, in one of two forms. Suite form: its steady unprofiled window measured by the NVML energy counter
// (run.json `micro.steady`) and three short profiled steps in the trace. Window form (run.json `micro.window` =
// "profiled"; `--only capped-windows`): the counter over the profiled window itself (50 steps, ~2 s), so that the
// measured power and the priced kernels come from the same seconds (at the power cap the suite's steady window ran
// at a lower clock than its profiled steps: docs/design-notes.md). What the power model must predict is the
// measured window's mean power.
#include "traces/src/recording.hpp"

#include <string>

namespace dvfs {

struct KernelLoop {
  std::string name;               // the benchmark, e.g. "gemm-bf16-4096"
  Recording recording;            // the profiled steps, kernels at their recorded clocks
  double steady_step_s = 0;       // one step of the unprofiled loop
  double steady_s = 0;            // the steady window
  double measured_power_w = 0;    // counter energy over the measured window / its length
  bool profiled_window = false;   // window form: measured over the profiled steps themselves
  Json micro;                     // run.json `micro`: what the loop runs (kind, dtype, shape, analytic work)
};

// run.json `micro.steady`: the unprofiled window's length, step time and counter mean power; InputError naming
// run_path and the field when missing or malformed. (A loop without kernels, idle, has only this.)
struct SteadyWindow {
  double seconds = 0, step_s = 0, mean_power_w = 0;
};
SteadyWindow read_steady_window(const Json& run, const std::string& run_path);

// Reads a loop recording of either form; InputError naming run.json's field when `micro.steady` (suite form) is
// missing or malformed or `micro.window` is not "profiled", or naming telemetry.csv when the counter does not
// advance over the profiled window (window form).
KernelLoop load_kernel_loop(const std::string& dir);

// The loop as it ran while measured. Suite form: the profiled steps' kernels, each step's idle time (its lead,
// the gaps between its kernels and its tail) scaled so that the step lasts steady_step_s (the profiler and the
// recorder's per-step synchronisation stretch profiled steps by up to 2.5x on launch-bound loops). Window form:
// the profiled steps as recorded (they are the measured window).
Workload steady_workload(const KernelLoop& loop);

}  // namespace dvfs
