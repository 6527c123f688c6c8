#pragma once
// Kernels whose counted work runs faster than the GPU can: a miscount of the importer (a table counted as
// streamed, a helper kernel given its operator's FLOPs) or data served from L2 priced as DRAM bytes. Either way
// the activity power model over-prices them; validate lists them so that a user (and we) can see it.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"

namespace dvfs {

// A kernel is beyond the part when its DRAM bytes per second exceed `margin` x the datasheet bandwidth, or its
// tensor FLOP/s `margin` x the dense peak of its precision (fp8 twice bf16, tf32 half). Parts without those
// datasheet figures check nothing. Returns {kernels, share_of_kernel_time, checked, top: [{name, kernels,
// seconds, memory_tbps, tensor_tflops}] (the `top` names with the most time, most first)}.
Json work_beyond_peak(const Workload& wl, const GpuSpecs& specs, double margin = 1.25, std::size_t top = 3);

}  // namespace dvfs
