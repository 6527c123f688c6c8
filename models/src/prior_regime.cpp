#include "models/src/prior_regime.hpp"

#include <algorithm>

namespace dvfs {

namespace {

// Consecutive windows of one rank's timeline: energy and kernel time accumulate until a window fills.
class WindowTally {
 public:
  WindowTally(double window_s, double threshold_w) : window_s_(window_s), threshold_w_(threshold_w) {}

  // A stretch of `len_s` seconds at `power_w`, kernel time or a gap.
  void add(double len_s, double power_w, bool kernel) {
    while (len_s > 0) {
      const double part = std::min(len_s, window_s_ - filled_s_);
      energy_j_ += part * power_w;
      if (kernel) kernel_s_ += part;
      filled_s_ += part;
      len_s -= part;
      if (filled_s_ >= window_s_) close();
    }
  }
  // The last, partial window is judged over what it holds.
  void finish() {
    if (filled_s_ > 0) close();
  }
  double at_cap_kernel_s() const { return at_cap_kernel_s_; }
  double kernel_s() const { return total_kernel_s_; }

 private:
  void close() {
    if (energy_j_ >= threshold_w_ * filled_s_) at_cap_kernel_s_ += kernel_s_;
    total_kernel_s_ += kernel_s_;
    energy_j_ = kernel_s_ = filled_s_ = 0;
  }

  double window_s_, threshold_w_;
  double energy_j_ = 0, kernel_s_ = 0, filled_s_ = 0;
  double at_cap_kernel_s_ = 0, total_kernel_s_ = 0;
};

}  // namespace

double at_cap_kernel_time_share(const Workload& wl, const GpuModel& model) {
  if (!model.prior_regime().present) return 1.0;
  const int top_sm = static_cast<int>(model.sm_clocks_mhz().size()) - 1;
  const int top_mem = static_cast<int>(model.mem_clocks_mhz().size()) - 1;
  const double idle_w = model.idle_power_w(top_sm);
  const double window_s = model.governor().window_s;
  const double threshold_w = model.prior_regime().cap_fraction * model.power_cap_w();
  double at_cap_s = 0, kernel_s = 0;
  for (const Rank& r : wl.ranks) {
    WindowTally tally(window_s, threshold_w);
    for (const Kernel& k : r.kernels) {
      tally.add(k.gap_before_s, idle_w, false);
      tally.add(model.kernel_time_s(k, top_sm, top_mem), model.kernel_power_w(k, top_sm, top_mem), true);
    }
    tally.finish();
    at_cap_s += tally.at_cap_kernel_s();
    kernel_s += tally.kernel_s();
  }
  return kernel_s > 0 ? at_cap_s / kernel_s : 1.0;
}

GpuModel bound_to_workload(const GpuModel& unbound, const Workload& wl) {
  const GpuModel bound = unbound.bound_to(wl.names);
  if (!bound.prior_regime().present) return bound;
  return bound.in_prior_regime(at_cap_kernel_time_share(wl, bound));
}

}  // namespace dvfs
