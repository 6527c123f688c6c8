#include "sim/policies/native_governor.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

NativeGovernor::NativeGovernor(const GpuModel& m, double cap_w_override)
    : model_(m),
      params_(m.governor()),
      cap_w_(cap_w_override > 0 ? cap_w_override : m.power_cap_w()),
      index_(static_cast<int>(m.sm_clocks_mhz().size()) - 1) {}

int power_limit_step(const NativeGovernorParams& g, double cap_w, double power_w, int down_from, int up_from, int top) {
  const double target = cap_w * g.target_fraction;
  if (power_w > target) {
    // Proportional step down: a large excess brings the clock down quickly.
    const int steps = std::max(1, static_cast<int>(std::lround((power_w - target) * g.down_gain_steps_per_w)));
    return std::max(0, down_from - steps);
  }
  if (power_w < target - g.up_margin_w) return std::min(top, up_from + static_cast<int>(g.up_steps_per_period));
  return up_from;
}

std::optional<ClockPair> NativeGovernor::on_tick(const GpuTelemetry& t) {
  const int top = static_cast<int>(model_.sm_clocks_mhz().size()) - 1;
  const int next = power_limit_step(params_, cap_w_, t.window_power_w, index_, index_, top);
  if (next == index_) return std::nullopt;
  index_ = next;
  return ClockPair{model_.sm_clocks_mhz()[index_], t.requested.mem_mhz};
}

}  // namespace dvfs
