#pragma once
// The args a dvfs-sim trace export (sim/results/trace_export.hpp, docs/trace-export.md) adds to each device
// activity of a Kineto-layout trace, read back by the Kineto importer so that an exported simulated run
// imports as a recording made at the simulated clocks:
//   "sm clock (MHz)", "mem clock (MHz)"  the clocks the activity ran at (its recorded clocks on import)
//   "work": {"source": "shapes" | "launch_shape" | "copy_engine", "tensor precision": "bf16" | "fp8" | "tf32" | "none",
//            "tensor TFLOP/s", "fma TFLOP/s", "alu TOP/s", "memory TB/s"[, "memory fill TB/s"][, "unvectorised TB/s"]}
//            its work rates over
//            its duration
// A trace without them (any recorded Kineto trace) imports as before. Present with a wrong type: InputError.
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"
#include "traces/src/kernel_activity.hpp"

#include <cstddef>
#include <string>

namespace dvfs {

struct SimulatedArgs {
  float sm_mhz = 0, mem_mhz = 0;  // 0 = not given
  bool has_work = false;
  KernelRates work;  // applied as the importer applies estimated rates (apply_rates)
};

// The args of traceEvents[event] of `file`.
SimulatedArgs read_simulated_args(const Json& args, const std::string& file, std::size_t event);
// Sets the kernel's recorded clocks and work rates where the args gave them.
void apply_simulated_args(const SimulatedArgs& a, Kernel& k);

}  // namespace dvfs
