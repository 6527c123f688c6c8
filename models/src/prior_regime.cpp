#include "models/src/prior_regime.hpp"

#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

namespace {

// Consecutive windows of one rank's timeline: energy and kernel time accumulate until a window fills.
class WindowTally {
 public:
  WindowTally(double window_s, double threshold_w) : window_s_(window_s), threshold_w_(threshold_w) {}

  // A stretch of `len_s` seconds at `power_w`, kernel time or a gap.
  void add(double len_s, double power_w, bool kernel) {
    if (!(len_s > 0) || !std::isfinite(len_s)) return;
    const double room = window_s_ - filled_s_;
    if (len_s < room) {
      take(len_s, power_w, kernel);
      return;
    }
    // the open window fills: close it by the branch, not by a sum that may land one ulp short of window_s
    take(room, power_w, kernel);
    close();
    len_s -= room;
    // whole windows at one power are judged at once: a long gap or kernel must not cost one step per window
    const double whole = std::floor(len_s / window_s_);
    if (whole > 0) {
      if (kernel) {
        total_kernel_s_ += whole * window_s_;
        if (power_w >= threshold_w_) at_cap_kernel_s_ += whole * window_s_;
      }
      len_s -= whole * window_s_;
    }
    if (len_s > 0) take(len_s, power_w, kernel);
  }
  // The last, partial window is judged over what it holds.
  void finish() {
    if (filled_s_ > 0) close();
  }
  double at_cap_kernel_s() const { return at_cap_kernel_s_; }
  double kernel_s() const { return total_kernel_s_; }

 private:
  void take(double part_s, double power_w, bool kernel) {
    energy_j_ += part_s * power_w;
    if (kernel) kernel_s_ += part_s;
    filled_s_ += part_s;
  }
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

double placed_at_cap_share(const GpuModel& placed, const Workload& wl) {
  return placed.prior_regime().present ? placed.at_cap_share() : at_cap_kernel_time_share(wl, placed);
}

std::string class_prior_regime_line(double at_cap_share, bool below_cap_scales_applied) {
  const std::string share = at_cap_share > 0 && at_cap_share < 0.005 ? std::string("under 1") : printf_text("%.0f", 100 * at_cap_share);
  if (at_cap_share >= kAtCapShareForCapPriors)
    return "a pre-pass at the top clocks puts " + share + " % of the kernel time in windows at the power cap: the regime the "
           "class priors were set in, where they held on the at-cap recordings (docs/validation.md)";
  const std::string head = "a pre-pass at the top clocks puts only " + share + " % of the kernel time in windows at the power cap: ";
  if (below_cap_scales_applied)
    return head + "priced with the model's below-cap scales of the class priors (class_prior_regime)";
  return head + "below it the class priors read high on most held-out workloads (validate --models, \"shapes withheld\"): "
                "expect this energy too high";
}

GpuModel bound_to_workload(const GpuModel& unbound, const Workload& wl) {
  const GpuModel bound = unbound.bound_to(wl.names);  // bound_to leaves any earlier regime: the at-cap priors
  if (!bound.prior_regime().present) return bound;
  return bound.in_prior_regime(at_cap_kernel_time_share(wl, bound));
}

}  // namespace dvfs
