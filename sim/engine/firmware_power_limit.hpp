#pragma once
// The GPU's own power-limit loop under a policy's clocks (ReplayOptions::firmware_power_cap): every
// control period it reads the windowed power and moves a ceiling over the SM clock by the native
// governor's loop (power_limit_step, sim/policies/native_governor.hpp). The SM clock that runs is the
// lower of the policy's and the ceiling; changes take effect at once (firmware latency is below the
// control period).
#include "models/src/gpu_model.hpp"
#include "sim/policies/native_governor.hpp"
#include "sim/telemetry/ticked_window.hpp"

#include <algorithm>

namespace dvfs {

class FirmwarePowerLimit {
 public:
  FirmwarePowerLimit() = default;
  // model: the governor's parameters (control period, window, target fraction, steps) and the SM clock
  //        table; the ceiling starts at its top clock.
  // cap_w: the power limit the loop holds (a controller may move it: set_cap_w).
  // The loop ticks only once started.
  FirmwarePowerLimit(const GpuModel& model, double cap_w)
      : governor_(&model.governor()), cap_w_(cap_w), top_(static_cast<int>(model.sm_clocks_mhz().size()) - 1), ceiling_idx_(top_) {}

  // Starts the loop, as if the GPU had drawn initial_w over its whole window.
  void start(double initial_w) { window_ = TickedWindow(governor_->control_period_s, governor_->window_s, initial_w); }
  void set_cap_w(double cap_w) { cap_w_ = cap_w; }

  double next_tick_s() const { return window_.next_tick_s(); }
  void add(double joules) { window_.add(joules); }
  // At next_tick_s(): the ceiling for the period starting now, given the SM clock the policy has in effect.
  int tick(int policy_sm_idx) {
    window_.tick();
    const double power = window_.mean_power_w();
    ceiling_idx_ = power_limit_step(*governor_, cap_w_, power, std::min(ceiling_idx_, policy_sm_idx), ceiling_idx_, top_);
    return ceiling_idx_;
  }
  int ceiling() const { return ceiling_idx_; }  // index into the SM clock table

 private:
  const NativeGovernorParams* governor_ = nullptr;
  double cap_w_ = 0;
  int top_ = 0, ceiling_idx_ = 0;
  TickedWindow window_;
};

}  // namespace dvfs
