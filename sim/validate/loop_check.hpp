#pragma once
// Kernel loops of the power suite against a GPU model: the loop's steady window replayed (its profiled steps
// with the idle time of the unprofiled loop, traces/src/kernel_loop.hpp) under the native governor and at the
// recorded clocks; mean power, energy of one step and time of one step against the measured ones. At equal
// time the energy error is the mean-power error; under the native governor both can move.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "traces/src/kernel_loop.hpp"

#include <vector>

namespace dvfs {

Json validate_kernel_loop(const KernelLoop& loop, const GpuModel& model);

// A loop recording's measured steady mean power (DIR/run.json `micro.steady`): all there is to compare for idle,
// which has no kernel to replay.
double measured_steady_power_w(const std::string& dir);

// Count, mean, median, 90th percentile and maximum of |x| (percent figures: keys mean_pct, median_pct, ...); {} if empty.
Json abs_distribution(std::vector<double> x);

}  // namespace dvfs
