#include "sim/critical_path/critical_path_policy.hpp"

namespace dvfs {

namespace {
ClockPair first_pair(const StageClockPlan& p, const ComputationSetting& s) {
  return s.variant >= 0 ? p.kernel_plans[static_cast<std::size_t>(s.variant)].front() : s.clocks;
}
}  // namespace

CriticalPathPolicy::CriticalPathPolicy(std::string name, std::shared_ptr<const StageClockPlan> plan)
    : name_(std::move(name)), plan_(std::move(plan)) {}

ClockPair CriticalPathPolicy::initial_clocks() const { return first_pair(*plan_, plan_->settings.front()); }

ClockPair CriticalPathPolicy::ahead(double now_s) const {
  // Walk the plan's durations from the running computation to the one it has running at now + lead.
  const auto& set = plan_->settings;
  std::size_t j = static_cast<std::size_t>(current_);
  double t = current_end_s_;
  const double at = now_s + plan_->lead_s;
  while (t <= at && j + 1 < set.size()) t += plan_->planned_s[++j];
  return first_pair(*plan_, set[j]);
}

std::optional<ClockPair> CriticalPathPolicy::before_computation(const ComputationInfo& c, const GpuTelemetry& t) {
  sequence_ = nullptr;
  if (c.stage != plan_->stage || c.index < 0 || static_cast<std::size_t>(c.index) >= plan_->settings.size()) return std::nullopt;
  current_ = c.index;
  current_end_s_ = t.now_s + plan_->planned_s[static_cast<std::size_t>(c.index)];
  const ComputationSetting& s = plan_->settings[static_cast<std::size_t>(c.index)];
  if (s.variant >= 0) {
    sequence_ = &plan_->kernel_plans[static_cast<std::size_t>(s.variant)];
    next_ = 0;
    return std::nullopt;  // the first kernel asks for its own pair
  }
  return plan_->lead_s > 0 ? ahead(t.now_s) : s.clocks;
}

std::optional<ClockPair> CriticalPathPolicy::before_kernel(const Kernel&, const GpuTelemetry& t) {
  if (sequence_) {
    if (next_ >= sequence_->size()) return std::nullopt;
    return (*sequence_)[next_++];
  }
  if (plan_->lead_s > 0 && current_ >= 0) return ahead(t.now_s);
  return std::nullopt;
}

}  // namespace dvfs
