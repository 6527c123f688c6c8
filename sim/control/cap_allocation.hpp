#pragma once
// Splitting a group's power target into per-GPU power limits (pure function).
#include <vector>

namespace dvfs {

// Water-filling: a GPU measured well below its limit (by more than `headroom_w`) asks for its measured
// power + headroom; the others (at their limit: throttled, or about to be) ask for max_w. Each gets
// min(ask, level), the level chosen so the limits sum to `target_w`; every limit stays in [min_w, max_w]
// (so the sum exceeds the target when n x min_w does). When every ask is met, what is left of the target
// is spread equally over the GPUs below max_w (it falls short of the target only when all are at max_w).
std::vector<double> allocate_caps(double target_w, const std::vector<double>& measured_w, const std::vector<double>& caps_w,
                                  double min_w, double max_w, double headroom_w);

// The same target split equally (workload-blind).
std::vector<double> equal_caps(double target_w, std::size_t gpus, double min_w, double max_w);

}  // namespace dvfs
