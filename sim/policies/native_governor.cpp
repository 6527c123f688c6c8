#include "sim/policies/native_governor.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

NativeGovernor::NativeGovernor(const GpuModel& m, double cap_w_override)
    : model_(m),
      params_(m.governor()),
      cap_w_(cap_w_override > 0 ? cap_w_override : m.power_cap_w()),
      index_(static_cast<int>(m.sm_clocks_mhz().size()) - 1) {}

std::optional<ClockPair> NativeGovernor::on_tick(const GpuTelemetry& t) {
  const double target = cap_w_ * params_.target_fraction;
  const int top = static_cast<int>(model_.sm_clocks_mhz().size()) - 1;
  int next = index_;
  if (t.window_power_w > target) {
    // Proportional step down: a large excess brings the clock down quickly.
    const int steps = std::max(1, static_cast<int>(std::lround((t.window_power_w - target) * params_.down_gain_steps_per_w)));
    next = std::max(0, index_ - steps);
  } else if (t.window_power_w < target - params_.up_margin_w) {
    next = std::min(top, index_ + static_cast<int>(params_.up_steps_per_period));
  }
  if (next == index_) return std::nullopt;
  index_ = next;
  return ClockPair{model_.sm_clocks_mhz()[index_], t.requested.mem_mhz};
}

}  // namespace dvfs
