#include "sim/energy/energy_meter.hpp"

#include "sim/core/limits.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

EnergyMeter::EnergyMeter(std::size_t steps, std::size_t annotation_sets, std::size_t sm_clocks, double timeline_interval_s)
    : steps_(steps),
      set_j_(std::max<std::size_t>(annotation_sets, 1), 0.0),
      class_j_(kKernelClassCount, 0.0),
      class_s_(kKernelClassCount, 0.0),
      residency_s_(sm_clocks, 0.0),
      interval_s_(timeline_interval_s) {}

std::size_t EnergyMeter::timeline_bin(double t) const {
  // The bin index is corrected after the division so that rounding can never leave t outside
  // [bin start, bin end). Bins past the row limit all map to it (room_for refuses them).
  const double raw = std::max(0.0, std::floor(t / interval_s_));
  if (!(raw < kMaxTimelineRows)) return static_cast<std::size_t>(kMaxTimelineRows);
  auto bin = static_cast<std::size_t>(raw);
  while ((static_cast<double>(bin) + 1) * interval_s_ <= t) ++bin;
  return bin;
}

void EnergyMeter::add_energy(double t_s, double joules, int step) {
  if (joules == 0) return;
  total_j_ += joules;
  switch_j_ += joules;
  if (step >= 0) steps_[step].energy_j += joules;
  if (interval_s_ > 0 && !timeline_overflowed_) {
    const std::size_t bin = timeline_bin(t_s);
    if (!room_for(bin)) return;
    timeline_[bin].energy_j += joules;
  }
}

bool EnergyMeter::room_for(std::size_t bin) {
  if (bin >= static_cast<std::size_t>(kMaxTimelineRows)) {
    timeline_overflowed_ = true;
    return false;
  }
  if (bin >= timeline_.size()) timeline_.resize(bin + 1);
  return true;
}

void EnergyMeter::add_to_timeline(double t0, double dt, double p, double f, double m) {
  // Spread the segment over the fixed intervals it covers.
  if (timeline_overflowed_) return;
  const double t1 = t0 + dt;
  auto bin = timeline_bin(t0);
  double t = t0;
  for (;;) {
    if (!room_for(bin)) return;
    const double bin_end = (static_cast<double>(bin) + 1) * interval_s_;
    const double piece = std::min(t1, bin_end) - t;
    TimelinePoint& tp = timeline_[bin];
    tp.energy_j += p * piece;
    tp.sm_mhz_time += f * piece;
    tp.mem_mhz_time += m * piece;
    if (bin_end >= t1) break;
    t = bin_end;
    ++bin;
  }
}

}  // namespace dvfs
