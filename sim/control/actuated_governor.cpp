#include "sim/control/actuated_governor.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

ActuatedGovernor::ActuatedGovernor(const GpuModel& m, double cap_w, double cap_latency_s, int ticks_per_control, ControlHook on_control)
    : model_(m),
      params_(m.governor()),
      cap_w_(cap_w > 0 ? cap_w : m.power_cap_w()),
      cap_latency_s_(cap_latency_s),
      top_(static_cast<int>(m.sm_clocks_mhz().size()) - 1),
      index_(top_),
      ceiling_(top_),
      ticks_per_control_(ticks_per_control),
      on_control_(std::move(on_control)) {}

void ActuatedGovernor::set_power_cap_w(double cap_w, double now_s) {
  if (cap_w == (pending_at_s_ >= 0 ? pending_cap_w_ : cap_w_)) return;
  pending_cap_w_ = cap_w;
  pending_at_s_ = now_s + cap_latency_s_;
  if (cap_latency_s_ <= 0) cap_w_ = cap_w, pending_at_s_ = -1;
}

void ActuatedGovernor::set_sm_ceiling_mhz(double mhz) {
  const auto& t = model_.sm_clocks_mhz();
  if (mhz <= 0) {
    ceiling_ = top_;
    return;
  }
  // The highest table clock not above the ceiling (the lowest clock when it is below the table).
  ceiling_ = std::max(0, static_cast<int>(std::upper_bound(t.begin(), t.end(), mhz + 1e-9) - t.begin()) - 1);
}

std::optional<ClockPair> ActuatedGovernor::on_tick(const GpuTelemetry& t) {
  ++ticks_;
  if (on_control_ && ticks_per_control_ > 0 && ticks_ % ticks_per_control_ == 0) on_control_(*this, t.now_s);
  if (pending_at_s_ >= 0 && t.now_s + 1e-12 >= pending_at_s_) cap_w_ = pending_cap_w_, pending_at_s_ = -1;
  // The native governor's loop (native_governor.cpp), then the ceiling.
  const double target = cap_w_ * params_.target_fraction;
  int next = index_;
  if (t.window_power_w > target) {
    const int steps = std::max(1, static_cast<int>(std::lround((t.window_power_w - target) * params_.down_gain_steps_per_w)));
    next = std::max(0, index_ - steps);
  } else if (t.window_power_w < target - params_.up_margin_w) {
    next = std::min(top_, index_ + static_cast<int>(params_.up_steps_per_period));
  }
  next = std::min(next, ceiling_);
  if (next == index_) return std::nullopt;
  index_ = next;
  return ClockPair{model_.sm_clocks_mhz()[static_cast<std::size_t>(index_)], t.requested.mem_mhz};
}

}  // namespace dvfs
