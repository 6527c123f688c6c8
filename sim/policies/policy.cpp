#include "sim/policies/policy.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

RecordedClockPolicy::RecordedClockPolicy(const GpuModel& m) : model_(m) {}

static double nearest(const std::vector<double>& table, double v) {
  auto it = std::lower_bound(table.begin(), table.end(), v);
  if (it == table.end()) return table.back();
  if (it != table.begin() && std::fabs(*std::prev(it) - v) <= std::fabs(*it - v)) return *std::prev(it);
  return *it;
}

std::optional<ClockPair> RecordedClockPolicy::before_kernel(const Kernel& k, const GpuTelemetry& t) {
  if (k.recorded_sm_mhz <= 0) return std::nullopt;  // unknown: keep the current clocks
  ClockPair c{nearest(model_.sm_clocks_mhz(), k.recorded_sm_mhz),
              k.recorded_mem_mhz > 0 ? nearest(model_.mem_clocks_mhz(), k.recorded_mem_mhz) : t.clocks.mem_mhz};
  if (c == t.requested) return std::nullopt;
  return c;
}

}  // namespace dvfs
