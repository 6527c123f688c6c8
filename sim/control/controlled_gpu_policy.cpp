#include "sim/control/controlled_gpu_policy.hpp"

#include <algorithm>

namespace dvfs {

ControlledGpuPolicy::ControlledGpuPolicy(const GpuModel& m, double tick_s, Hook hook, std::vector<ClockPair> plan)
    : model_(m), tick_s_(tick_s), hook_(std::move(hook)), plan_(std::move(plan)), last_(m.max_clocks()) {}

ClockPair ControlledGpuPolicy::initial_clocks() const { return model_.max_clocks(); }

ClockPair ControlledGpuPolicy::wanted(const ClockPair& c) const {
  if (ceiling_mhz_ <= 0 || c.sm_mhz <= ceiling_mhz_) return c;
  // The highest table clock not above the ceiling (the lowest clock when the ceiling is below the table).
  const auto& t = model_.sm_clocks_mhz();
  const auto it = std::upper_bound(t.begin(), t.end(), ceiling_mhz_ + 1e-9);
  return {it == t.begin() ? t.front() : *std::prev(it), c.mem_mhz};
}

std::optional<ClockPair> ControlledGpuPolicy::before_kernel(const Kernel& k, const GpuTelemetry& t) {
  if (!plan_.empty() && k.name_id < plan_.size()) last_ = plan_[k.name_id];
  const ClockPair w = wanted(last_);
  if (w == t.requested) return std::nullopt;
  return w;
}

std::optional<ClockPair> ControlledGpuPolicy::on_tick(const GpuTelemetry& t) {
  if (hook_) hook_(t.now_s);
  const ClockPair w = wanted(last_);
  if (w == t.requested) return std::nullopt;
  return w;
}

void ControlledGpuPolicy::set_sm_ceiling_mhz(double mhz) { ceiling_mhz_ = mhz > 0 ? mhz : 0; }

}  // namespace dvfs
