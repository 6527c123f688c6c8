#pragma once
// Two replays of the same run compared: what the export round trips (Kineto layout, Chakra) must preserve.
#include "sim/core/workload.hpp"
#include "sim/engine/engine.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace dvfs::testing {

inline bool same(double a, double b, double tol = 1e-9) { return std::fabs(a - b) <= tol * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// Totals of two replays agree to 1e-9 (relative): time, energy, busy time, host gaps, each step's duration; each
// step's and class's energy to `parts_tol`.
inline void check_same_run(const RankOutcome& a, const RankOutcome& b, double parts_tol = 1e-9) {
  CHECK(same(a.stats.end_s, b.stats.end_s));
  CHECK(same(a.meter.total_j(), b.meter.total_j()));
  CHECK(same(a.meter.busy_s(), b.meter.busy_s()));
  CHECK(same(a.meter.gap_j(), b.meter.gap_j()));
  CHECK(a.stats.kernel_events == b.stats.kernel_events);
  REQUIRE(a.meter.steps().size() == b.meter.steps().size());
  for (std::size_t s = 0; s < a.meter.steps().size(); ++s) {
    CHECK(same(a.meter.steps()[s].energy_j, b.meter.steps()[s].energy_j, parts_tol));
    CHECK(same(a.meter.steps()[s].end_s - a.meter.steps()[s].start_s, b.meter.steps()[s].end_s - b.meter.steps()[s].start_s));
  }
  for (int c = 0; c < kKernelClassCount; ++c) CHECK(same(a.meter.class_j()[c], b.meter.class_j()[c], parts_tol));
}

// Every kernel of `a` with bytes on ATen's non-vectorised elementwise loop (split unvectorised_bytes) comes back in
// `b` at the same rate (floats, rescaled by the exporter to the simulated duration, here the recorded one); `a` has
// at least one.
inline void check_same_unvectorised_rates(const Workload& a, const Workload& b) {
  const auto& ka = a.ranks.at(0).kernels;
  const auto& kb = b.ranks.at(0).kernels;
  REQUIRE(ka.size() == kb.size());
  std::size_t unvectorised = 0;
  for (std::size_t i = 0; i < ka.size(); ++i) {
    if (ka[i].unvectorised_tbps <= 0) continue;
    ++unvectorised;
    CHECK(kb[i].unvectorised_tbps == Approx(ka[i].unvectorised_tbps).epsilon(1e-5));
  }
  CHECK(unvectorised > 0);
}

}  // namespace dvfs::testing
