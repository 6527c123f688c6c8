#include "../replay_fixtures.hpp"
#include "sim/compare.hpp"
#include "sim/core/errors.hpp"
#include "sim/planning/clock_plan.hpp"
#include "sim/planning/planned_policies.hpp"
#include "sim/policies/plan_policy.hpp"
#include "sim/simulation/simulation.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace dvfs;
using namespace dvfs::testing;
using Catch::Detail::Approx;

namespace {

// A workload of `steps` identical steps, each a mix of GEMMs and memory-bound kernels.
Workload mixed_workload(std::mt19937_64& rng, int kernels_per_step, int steps, float rec_sm = 1980, float rec_mem = 3201) {
  std::uniform_real_distribution<double> dur(20e-6, 2e-3), gap(0, 50e-6);
  std::uniform_int_distribution<int> cls(0, 6);
  const KernelClass classes[] = {KernelClass::gemm, KernelClass::attention, KernelClass::elementwise, KernelClass::copy,
                                 KernelClass::normalization, KernelClass::reduction, KernelClass::optimizer};
  std::vector<Kernel> one;
  for (int i = 0; i < kernels_per_step; ++i) {
    Kernel k = make_kernel(classes[cls(rng)], dur(rng), gap(rng), rec_sm, rec_mem);
    k.name_id = static_cast<std::uint32_t>(i);  // each position its own identity
    one.push_back(k);
  }
  std::vector<Kernel> all;
  for (int s = 0; s < steps; ++s) all.insert(all.end(), one.begin(), one.end());
  Workload wl = one_step_workload(all);
  for (int i = 0; i < kernels_per_step; ++i) wl.names.push_back("k" + std::to_string(i));
  return wl;
}

Scenario planned(const std::string& policy, double budget_pct, double latency_s) {
  Scenario sc;
  sc.name = "t";
  sc.policy.name = policy;
  sc.policy.budget_pct = budget_pct;
  sc.replay.timeline_interval_s = 0;
  sc.replay.sm_latency.mean_s = latency_s;
  sc.replay.mem_latency.mean_s = latency_s;
  return sc;
}

struct Totals {
  double time = 0, energy = 0;
};
Totals totals_of(const std::vector<RankOutcome>& o) {
  return {o[0].stats.end_s, o[0].meter.total_j()};
}

}  // namespace

TEST_CASE("the planner meets its time budget, and finer groupings never plan more energy", "[planning]") {
  std::mt19937_64 rng(7);
  const Workload wl = mixed_workload(rng, 60, 1, 1410, 1593);
  const GpuModel m = load_gpu_model("a100-sxm4");
  double busy = 0;
  for (const Kernel& k : wl.ranks[0].kernels) busy += k.duration_s;
  for (double budget : {0.0, 0.01, 0.05}) {
    INFO(budget);
    const double limit = (1 + budget) * busy;
    const ClockPlan s = plan_clocks(wl, wl.ranks[0], m, PlanGrouping::single, limit);
    const ClockPlan k = plan_clocks(wl, wl.ranks[0], m, PlanGrouping::per_kernel, limit);
    REQUIRE(s.feasible);
    REQUIRE(k.feasible);
    CHECK(s.planned_kernel_time_s <= limit * (1 + 1e-12));
    CHECK(k.planned_kernel_time_s <= limit * (1 + 1e-12));
    CHECK(k.planned_kernel_energy_j <= s.planned_kernel_energy_j * (1 + 1e-9));
    CHECK(k.group_names.size() == 60);
  }
}

TEST_CASE("per-kernel planning lets a kernel run slower where others make room", "[planning]") {
  // Two identities: a GEMM (time scales with the clock) and a copy (barely). With a 1 % budget the copy
  // takes a low SM clock and the GEMM stays fast: the energy-optimal split, not a uniform slowdown.
  Workload wl = one_step_workload(
      {make_kernel(KernelClass::gemm, 1e-3, 0, 1410, 1593), make_kernel(KernelClass::copy, 1e-3, 0, 1410, 1593)});
  wl.ranks[0].kernels[1].name_id = 1;
  wl.names = {"gemm", "copy"};
  const GpuModel m = load_gpu_model("a100-sxm4");
  const ClockPlan p = plan_clocks(wl, wl.ranks[0], m, PlanGrouping::per_kernel, 1.01 * 2e-3);
  const ClockPair gemm = p.pair_for_kernel(0), copy = p.pair_for_kernel(1);
  CHECK(copy.sm_mhz < gemm.sm_mhz);
  CHECK(p.planned_kernel_time_s <= 1.01 * 2e-3 * (1 + 1e-12));
}

TEST_CASE("an infeasible budget is reported and the fastest pairs are planned", "[planning]") {
  const Workload wl = one_step_workload({make_kernel(KernelClass::gemm, 1e-3, 0)});
  const GpuModel m = load_gpu_model("h200");
  const ClockPlan p = plan_clocks(wl, wl.ranks[0], m, PlanGrouping::per_kernel, 0.5e-3);  // half the recorded time
  CHECK_FALSE(p.feasible);
  CHECK(p.planned_kernel_time_s == Approx(p.fastest_kernel_time_s));
}

TEST_CASE("the online policy locks onto the iteration period and predicts the stream", "[planning]") {
  std::mt19937_64 rng(3);
  const Workload wl = mixed_workload(rng, 40, 10);
  const auto ids = kernel_identities(wl.ranks[0]);
  std::vector<ClockPair> by_id(40, ClockPair{1980, 3201});
  auto stats = std::make_shared<PredictionStats>();
  OnlinePlanPolicy p(wl.ranks[0], ids, by_id, stats, ClockPair{1980, 3201});
  for (const Kernel& k : wl.ranks[0].kernels) p.before_kernel(k, GpuTelemetry{});
  CHECK(stats->predictions == 400);
  CHECK(stats->period == 40);
  // Misses only while the first iteration and the window that proves the period go by.
  CHECK(stats->hits >= 400 - 40 - 17);
}

TEST_CASE("the online policy asks for the safe pair while its prediction is not to be trusted", "[planning]") {
  std::mt19937_64 rng(5);
  const Workload wl = mixed_workload(rng, 20, 6);
  const auto ids = kernel_identities(wl.ranks[0]);
  std::vector<ClockPair> by_id(20, ClockPair{990, 3201});
  const ClockPair safe{1980, 3201};
  auto stats = std::make_shared<PredictionStats>();
  OnlinePlanPolicy p(wl.ranks[0], ids, by_id, stats, safe);
  std::size_t safe_seen = 0, planned_seen = 0;
  for (const Kernel& k : wl.ranks[0].kernels) {
    const ClockPair c = *p.before_kernel(k, GpuTelemetry{});
    (c == safe ? safe_seen : planned_seen) += 1;
  }
  CHECK(stats->safe_requests == safe_seen);
  CHECK(safe_seen >= 20);              // at least the first iteration, before any period is known
  CHECK(planned_seen >= 120 - 20 - 17 - 2);  // then the plan, once the period holds
}

TEST_CASE("latency-aware never loses to native, over random traces, latencies and budgets", "[planning][property]") {
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> log_latency(-7, -1), budget(0, 5);
  const char* gpus[] = {"h200", "a100-sxm4", "rtx-3080-ti", "b200-like"};
  for (int trial = 0; trial < 24; ++trial) {
    const Workload wl = mixed_workload(rng, 30 + trial * 3, 3);
    const GpuModel m = load_gpu_model(gpus[trial % 4]);
    const double lat = trial % 6 == 0 ? 0.0 : std::pow(10.0, log_latency(rng));
    const double b = trial % 5 == 0 ? 0.0 : budget(rng);
    INFO("trial " << trial << " gpu " << m.name() << " latency " << lat << " budget " << b);
    const Scenario sc = planned("latency-aware", b, lat);
    Scenario nat = sc;
    nat.policy = PolicySpec{};
    const auto native = run_engine(wl, m, make_policy_factory(nat.policy, m, ""), nat.replay, nat.mode);
    const PlannedRun la = run_planned(sc, wl, m, native);
    const Totals n = totals_of(native), l = totals_of(la.outcomes);
    CHECK(l.energy <= n.energy * (1 + 1e-12));
    CHECK(l.time <= (1 + b / 100) * n.time * (1 + 1e-9));
    // And it is not only the fallback: whenever the best single pair beats native within the budget
    // under this latency, latency-aware does at least as well.
    Scenario st = sc;
    st.policy.name = "static-best";
    const Totals s1 = totals_of(run_planned(st, wl, m, native).outcomes);
    if (s1.time <= (1 + b / 100) * n.time && s1.energy < n.energy) CHECK(l.energy <= s1.energy * (1 + 1e-9));
  }
}

// On the real H200 trace the one-shot static and pass-level plans replay a few tenths of a percent past the budget
// (the firmware's power limit couples the kernels the plan priced alone); latency-aware re-plans each candidate as
// the planned policies do, instead of falling back to native.
TEST_CASE("on the shipped H200 recording latency-aware does at least as well as the best single pair", "[planning]") {
  const GpuModel m = load_gpu_model("h200");
  const Workload wl = load_trace(data_dir() + "/traces/recordings/h200-gpt3xl").workload;
  Scenario nat = planned("native", 0, 0);
  nat.policy = PolicySpec{};
  const auto native = run_engine(wl, m, make_policy_factory(nat.policy, m, ""), nat.replay, nat.mode);
  const PlannedRun st = run_planned(planned("static-best", 1, 1e-4), wl, m, native);
  const PlannedRun la = run_planned(planned("latency-aware", 1, 1e-4), wl, m, native);
  const Totals n = totals_of(native), s1 = totals_of(st.outcomes), l = totals_of(la.outcomes);
  REQUIRE(s1.time <= 1.01 * n.time * (1 + 1e-9));
  REQUIRE(s1.energy < n.energy);
  CHECK(la.plan[0]["chosen"] != "native");
  CHECK(l.energy <= s1.energy * (1 + 1e-9));
  CHECK(l.time <= 1.01 * n.time * (1 + 1e-9));
}

TEST_CASE("with no switch latency latency-aware follows the per-kernel plan", "[planning]") {
  std::mt19937_64 rng(11);
  const Workload wl = mixed_workload(rng, 50, 2);
  const GpuModel m = load_gpu_model("a100-sxm4");
  Scenario nat = planned("native", 0, 0);
  nat.policy = PolicySpec{};
  const auto native = run_engine(wl, m, make_policy_factory(nat.policy, m, ""), nat.replay, nat.mode);
  const PlannedRun pk = run_planned(planned("per-kernel", 1, 0), wl, m, native);
  const PlannedRun la = run_planned(planned("latency-aware", 1, 0), wl, m, native);
  REQUIRE(la.plan[0]["chosen"] == "regions");
  CHECK(totals_of(la.outcomes).energy == Approx(totals_of(pk.outcomes).energy));
  CHECK(totals_of(la.outcomes).energy < totals_of(native).energy);
}

TEST_CASE("compare rejects a negative budget and an unknown policy", "[planning]") {
  Scenario sc = load_scenario(default_scenario_path());
  CHECK_THROWS_WITH(compare_policies(sc, {"per-kernel"}, -1), Catch::Contains("--budget: expected a slowdown budget from 0 to 1000 %"));
  // 1e300 % is no budget (it printed 300 digits)
  CHECK_THROWS_WITH(compare_policies(sc, {"per-kernel"}, 1e300), Catch::Contains("from 0 to 1000 %"));
  CHECK_THROWS_WITH(compare_policies(sc, {"per-kernal"}, 1), Catch::Contains("unknown policy \"per-kernal\""));
}
