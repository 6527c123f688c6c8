#pragma once
// `native`: what the GPU does alone. It boosts to the highest SM clock and, like the firmware's
// power-limit loop, lowers the clock while the windowed power exceeds the cap and raises it again
// below. Parameters (period, window, gains, target) come from the GPU model file.
#include "sim/policies/policy.hpp"

namespace dvfs {

// One control period of the GPU's power-limit loop, the one implementation shared by the `native` policy
// and the firmware ceiling the engine applies under any policy (sim/engine/gpu_replayer.cpp): with the
// windowed power above cap x target_fraction the SM clock index steps down from `down_from`, in proportion
// to the excess; below the target by more than the margin it steps up from `up_from` (at most `top`);
// otherwise it stays at `up_from`.
int power_limit_step(const NativeGovernorParams& g, double cap_w, double power_w, int down_from, int up_from, int top);

class NativeGovernor : public Policy {
 public:
  explicit NativeGovernor(const GpuModel& m, double cap_w_override = 0);
  std::string name() const override { return "native"; }
  Actuator actuator() const override { return Actuator::firmware; }
  ClockPair initial_clocks() const override { return model_.max_clocks(); }
  double tick_period_s() const override { return params_.control_period_s; }
  double telemetry_window_s() const override { return params_.window_s; }
  std::optional<ClockPair> on_tick(const GpuTelemetry& t) override;

 private:
  const GpuModel& model_;
  NativeGovernorParams params_;
  double cap_w_;
  int index_;  // current SM clock index
};

}  // namespace dvfs
