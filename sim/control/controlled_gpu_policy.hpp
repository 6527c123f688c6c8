#pragma once
// The clocks a controlled GPU asks for through the driver: its top clocks, or a clock pair per activity name
// (a clock plan: per-kernel DVFS under the budget), never above an SM clock ceiling that a controller sets
// (nvmlDeviceSetGpuLockedClocks: a request that pays the switch latency). The power limit is not the
// policy's business: the GPU's firmware loop holds it under any requested clock (GpuReplayer's
// firmware_power_cap, its limit set by the session). Every tick the policy calls the session's hook, where
// the session meets SimGrid at control ticks and applies limits that have taken effect: a policy never
// touches the engine.
#include "sim/policies/policy.hpp"

#include <functional>
#include <vector>

namespace dvfs {

class ControlledGpuPolicy : public Policy {
 public:
  using Hook = std::function<void(double now_s)>;
  // plan_by_name: per activity name id, the pair to run it at (empty: the top clocks).
  ControlledGpuPolicy(const GpuModel& m, double tick_s, Hook hook, std::vector<ClockPair> plan_by_name = {});
  std::string name() const override { return plan_.empty() ? "controlled" : "per-kernel"; }
  ClockPair initial_clocks() const override;
  bool wants_kernel_events() const override { return true; }
  std::optional<ClockPair> before_kernel(const Kernel& k, const GpuTelemetry& t) override;
  double tick_period_s() const override { return tick_s_; }
  std::optional<ClockPair> on_tick(const GpuTelemetry& t) override;

  void set_sm_ceiling_mhz(double mhz);  // 0 = none
  double sm_ceiling_mhz() const { return ceiling_mhz_; }

 private:
  ClockPair wanted(const ClockPair& c) const;
  const GpuModel& model_;
  double tick_s_;
  Hook hook_;
  std::vector<ClockPair> plan_;
  double ceiling_mhz_ = 0;
  ClockPair last_{};  // the pair of the last activity's plan (the ceiling applies to it at a tick)
};

}  // namespace dvfs
