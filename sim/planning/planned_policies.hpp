#pragma once
// The planned DVFS policies, end to end: plan against a reference replay, then replay the plan.
//   per-kernel         oracle: a pair per kernel identity (name + launch shape), energy-minimal within the budget
//   per-kernel-online  the same pairs, but each requested before the kernel is known (period predictor)
//   pass-level         a pair per pass (forward / backward / optimizer / other)
//   static-best        the best single pair
//   latency-aware      per-kernel pairs merged into regions so that a switch is made only where what it
//                      saves after the switch latency exceeds what it costs (re-planned with less budget
//                      while the latency pushes it over); then the regions, the pass-level plan and the
//                      best static pair are each replayed with the latency, and the least energy within
//                      the budget wins; native if none beats native
// The budget is a slowdown of the kernels' busy time relative to the native governor's replay
// (host gaps do not move with the clocks, so the iteration slows down by at most as much).
#include "sim/engine/engine.hpp"
#include "sim/policies/registry.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>

namespace dvfs {

// The planned family's registry entries (each with its summary; `plan` = run_planned).
void register_planned_policies(PolicyRegistry& r);
bool is_planned_policy(const std::string& name);  // a name of that family

struct PlannedRun {
  std::vector<RankOutcome> outcomes;
  Json plan;  // per rank: grouping, groups, budget, predicted time/energy, solve time, choices, accuracy
};

// `reference` are the native governor's outcomes for the same workload and scenario.
PlannedRun run_planned(const Scenario& sc, const Workload& wl, const GpuModel& model,
                       const std::vector<RankOutcome>& reference);

}  // namespace dvfs
