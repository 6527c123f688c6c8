#pragma once
// A control loop's telemetry: the energy drawn since the last tick, and at each tick (every period_s of
// local time) that period's energy entering an EnergyWindow, as a GPU's power readout does for a policy
// or the firmware's power-limit loop. The replayer reports energy as it goes (add) and ticks it when
// local time reaches next_tick_s(); the window knows nothing of what reads it.
#include "sim/telemetry/energy_window.hpp"

#include <limits>

namespace dvfs {

class TickedWindow {
 public:
  TickedWindow() = default;  // never ticks
  // Ticks every period_s from local time period_s; the window (window_s) starts as if the GPU had drawn
  // initial_w over all of it.
  TickedWindow(double period_s, double window_s, double initial_w)
      : period_s_(period_s), next_tick_s_(period_s), window_(period_s, window_s, initial_w) {}

  double next_tick_s() const { return next_tick_s_; }
  void add(double joules) { period_j_ += joules; }
  // At next_tick_s(): the period's energy enters the window and the next period starts. Returns the
  // period's mean power.
  double tick() {
    window_.push(period_j_);
    const double power_w = period_j_ / period_s_;
    period_j_ = 0;
    next_tick_s_ += period_s_;
    return power_w;
  }
  bool empty() const { return window_.empty(); }
  double mean_power_w() const { return window_.mean_power_w(); }

 private:
  double period_s_ = 0;
  double next_tick_s_ = std::numeric_limits<double>::infinity();
  double period_j_ = 0;
  EnergyWindow window_;
};

}  // namespace dvfs
