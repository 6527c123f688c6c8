#pragma once
// Replaying a kernel trace recorded on one GPU on another: each kernel's recorded duration is split,
// with the recording GPU's model, into the part that scales with the SM clock, the part that scales
// with the memory clock and the rest (time_shape, models/README.md). The SM part is rescaled by dense
// tensor throughput (specs.bf16_dense_tflops, taken at the kernel's recorded clock on the source and at
// the target's top clock), the memory part by memory bandwidth (specs.mem_bandwidth_gbs); the rest
// (launch latency, synchronisation) is kept. The kernel is then "recorded" at the target's top
// clocks. Host gaps do not change. SM fill (blocks per SM) is kept as recorded.
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"

namespace dvfs {

struct RetargetReport {
  std::string from, to;
  double compute_ratio = 0;  // source throughput at its top clock / target's
  double memory_ratio = 0;   // source bandwidth / target's
  double recorded_busy_s = 0, retargeted_busy_s = 0;
};

RetargetReport retarget_workload(Workload& wl, const GpuModel& from, const GpuModel& to);

}  // namespace dvfs
