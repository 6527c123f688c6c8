#pragma once
// The GPU's own power-limit loop under actuators that change at run time: the native governor's loop
// (sim/policies/native_governor.cpp: boost, lower the SM clock in proportion to the windowed power above
// limit x target_fraction, raise it one step while below) with a settable power limit, which takes effect
// `cap_latency_s` after it is set (GridPilot measured 97 ms end to end on a V100), and an SM clock ceiling.
// Every `ticks_per_control` ticks the governor first calls `on_control`, where the session meets SimGrid
// and reads the actuator board: a policy never touches the engine, the session's hook does.
#include "sim/policies/policy.hpp"

#include <functional>

namespace dvfs {

class ActuatedGovernor : public Policy {
 public:
  using ControlHook = std::function<void(ActuatedGovernor&, double now_s)>;
  ActuatedGovernor(const GpuModel& m, double cap_w, double cap_latency_s, int ticks_per_control, ControlHook on_control);
  std::string name() const override { return "actuated"; }
  Actuator actuator() const override { return Actuator::firmware; }
  ClockPair initial_clocks() const override { return model_.max_clocks(); }
  double tick_period_s() const override { return params_.control_period_s; }
  double telemetry_window_s() const override { return params_.window_s; }
  std::optional<ClockPair> on_tick(const GpuTelemetry& t) override;

  // New settings at local time now_s (the limit after the latency, the ceiling at once).
  void set_power_cap_w(double cap_w, double now_s);
  void set_sm_ceiling_mhz(double mhz);  // 0 = the top clock
  double power_cap_w() const { return cap_w_; }  // in effect
  int sm_index() const { return index_; }        // the clock the loop asks for
  bool throttled() const { return index_ < top_; }

 private:
  const GpuModel& model_;
  NativeGovernorParams params_;
  double cap_w_, pending_cap_w_ = 0, pending_at_s_ = -1, cap_latency_s_;
  int top_, index_, ceiling_;
  int ticks_per_control_;
  long ticks_ = 0;
  ControlHook on_control_;
};

}  // namespace dvfs
