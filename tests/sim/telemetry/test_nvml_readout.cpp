#include "sim/telemetry/nvml_readout.hpp"
#include "sim/telemetry/window_stats.hpp"

#include <catch2/catch.hpp>

#include <numeric>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

// `low` W, then `high` W from t_step on, in 25 ms bins.
PowerSeries step_series(double duration_s, double t_step, double low, double high) {
  PowerSeries p;
  p.bin_s = 0.025;
  const auto n = static_cast<std::size_t>(duration_s / p.bin_s + 0.5);
  for (std::size_t i = 0; i < n; ++i) p.power_w.push_back(static_cast<double>(i) * p.bin_s < t_step - 1e-9 ? low : high);
  return p;
}

}  // namespace

TEST_CASE("every NVML field reads a constant power as it is", "[telemetry]") {
  const PowerSeries p = step_series(10, 100, 250, 250);
  for (NvmlField f : {NvmlField::average, NvmlField::instant, NvmlField::energy_counter, NvmlField::exact}) {
    const auto s = nvml_samples(p, f, 0.5);
    REQUIRE(s.size() == 20);
    for (std::size_t k = 1; k < s.size(); ++k) CHECK(s[k] == Approx(250).epsilon(1e-9));
  }
}

TEST_CASE("the 1 s average lags a power step by one second, the exact interval mean does not", "[telemetry]") {
  const PowerSeries p = step_series(10, 5.0, 100, 500);
  const auto avg = nvml_samples(p, NvmlField::average, 0.5);
  const auto exact = nvml_samples(p, NvmlField::exact, 0.5);
  // Sample k is taken at (k + 1) x 0.5 s: at 5.5 s half of the trailing second is after the step.
  CHECK(exact[10] == Approx(500));  // [5.0, 5.5]
  CHECK(avg[10] == Approx(300));    // [4.5, 5.5]
  CHECK(avg[11] == Approx(500));    // [5.0, 6.0]
  CHECK(avg[9] == Approx(100));
}

TEST_CASE("the instant field sees only 25 ms of every 100 ms (Yang et al., SC'24)", "[telemetry]") {
  // 50 ms bursts of 600 W every 100 ms, at 25-75 ms of each period: the window before each refresh
  // (75-100 ms) never sees them, the average does.
  PowerSeries p;
  p.bin_s = 0.025;
  for (int i = 0; i < 400; ++i) p.power_w.push_back((i % 4 == 1 || i % 4 == 2) ? 600.0 : 100.0);
  NvmlSpec spec;
  const auto inst = nvml_samples(p, NvmlField::instant, 0.5, spec);
  const auto avg = nvml_samples(p, NvmlField::average, 0.5, spec);
  CHECK(inst[5] == Approx(100));
  CHECK(avg[5] == Approx(350));
  // Another refresh phase (50 ms later: the window 25-50 ms) sees only the bursts.
  spec.phase_s = 0.05;
  CHECK(nvml_samples(p, NvmlField::instant, 0.5, spec)[5] == Approx(600));
}

TEST_CASE("differentiating the energy counter sums to the true energy up to its last advance", "[telemetry]") {
  PowerSeries p;
  p.bin_s = 0.025;
  for (int i = 0; i < 400; ++i) p.power_w.push_back(100.0 + 5.0 * (i % 17));
  NvmlSpec spec;
  spec.phase_s = 0.05;
  const auto c = nvml_samples(p, NvmlField::energy_counter, 0.5, spec);
  const double sum_j = std::accumulate(c.begin(), c.end(), 0.0) * 0.5;
  // The last advance before t = 10 s is at 9.95 s.
  CHECK(sum_j == Approx(p.energy_j(0, 9.95)).epsilon(1e-9));
}

TEST_CASE("series of a node add up bin by bin", "[telemetry]") {
  const PowerSeries a = step_series(2, 1, 100, 200), b = step_series(1, 9, 50, 50);
  const PowerSeries s = sum_series({&a, &b});
  REQUIRE(s.power_w.size() == a.power_w.size());
  CHECK(s.power_w.front() == Approx(150));
  CHECK(s.power_w.back() == Approx(200));  // b ended
  PowerSeries c = a;
  c.bin_s = 0.01;
  CHECK_THROWS_AS(sum_series({&a, &c}), std::invalid_argument);
}

TEST_CASE("violations of a budget fall as windows grow when the budget is above the mean", "[telemetry]") {
  // 30 % of the time at 700 W, the rest at 400 W, in 10 s periods: mean 490 W; budget 550 W.
  std::vector<double> s;
  for (int i = 0; i < 1200; ++i) s.push_back((i % 20) < 6 ? 700.0 : 400.0);
  const double r05 = violation_rate(window_means(s, 0.5, 0.5), 550);
  const double r30 = violation_rate(window_means(s, 0.5, 30), 550);
  const double r300 = violation_rate(window_means(s, 0.5, 300), 550);
  CHECK(r05 == Approx(0.3));
  CHECK(r30 == 0);
  CHECK(r300 == 0);
  const WindowSummary w = summarize_windows(s, 0.5, 0.5, 550, 1000);
  CHECK(w.peak_share == Approx(0.7));
  CHECK(w.mean_w == Approx(490));
  CHECK_THROWS_AS(window_means(s, 0.5, 0.25), std::invalid_argument);
}

TEST_CASE("the budget a violation rate allows, and the oversubscription it sustains", "[telemetry]") {
  const std::vector<double> means{100, 400, 300, 200, 500, 250, 350, 450, 150, 50};  // 10 windows, peak 500
  CHECK(budget_at_violation_rate(means, 0) == 500);
  CHECK(budget_at_violation_rate(means, 0.1) == 450);  // one window (500) may exceed it
  CHECK(budget_at_violation_rate(means, 0.25) == 400);
  CHECK(violation_rate(means, budget_at_violation_rate(means, 0.25)) <= 0.25);
  // Nameplate 1,000 W: with no violation allowed the budget can be 1/peak-share times smaller.
  CHECK(sustainable_oversubscription(means, 1000, 0) == Approx(2.0));
  CHECK(sustainable_oversubscription(means, 1000, 0.1) == Approx(1000.0 / 450));
  CHECK_THROWS_AS(budget_at_violation_rate(means, 1.0), std::invalid_argument);
}
