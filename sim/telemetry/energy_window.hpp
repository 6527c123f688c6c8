#pragma once
// The telemetry window of a power-limit loop or a policy: the energy of the last n control periods in a
// ring buffer, and the mean power over them (what NVML's windowed power reading gives a governor). The
// running sum is updated as new - oldest, in that order, so results do not depend on who owns a window.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace dvfs {

class EnergyWindow {
 public:
  EnergyWindow() = default;
  // A window of round(window_s / period_s) periods (at least one), as if the GPU had drawn `initial_w`
  // over all of them.
  EnergyWindow(double period_s, double window_s, double initial_w)
      : period_s_(period_s), energy_j_(static_cast<std::size_t>(std::max(1.0, std::round(window_s / period_s))), initial_w * period_s) {
    sum_j_ = energy_j_.front() * static_cast<double>(energy_j_.size());
  }
  bool empty() const { return energy_j_.empty(); }
  // The energy of the period that just ended replaces the oldest one.
  void push(double period_energy_j) {
    sum_j_ += period_energy_j - energy_j_[pos_];
    energy_j_[pos_] = period_energy_j;
    pos_ = (pos_ + 1) % energy_j_.size();
  }
  double mean_power_w() const { return sum_j_ / (period_s_ * static_cast<double>(energy_j_.size())); }

 private:
  double period_s_ = 0;
  std::vector<double> energy_j_;
  std::size_t pos_ = 0;
  double sum_j_ = 0;
};

}  // namespace dvfs
