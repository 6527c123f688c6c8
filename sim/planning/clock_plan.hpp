#pragma once
// Offline clock planning: which (SM clock, memory clock) pair each kernel of a rank should run at so
// that the energy of its kernels is least while their total time stays within a budget.
//
// Kernels are grouped; every kernel of a group runs at the group's pair:
//   per-kernel  one group per kernel identity (name + launch shape), as in Spaan et al. 2026;
//   pass-level  one group per training pass (forward / backward / optimizer / other);
//   static      one group for everything (the best single pair).
// For a group g and pair c the model gives T_g(c) = sum of its kernels' times and E_g(c) = sum of
// time x power. The problem  min sum E_g(c_g)  s.t.  sum T_g(c_g) <= T_budget  is a multiple-choice
// knapsack; it is solved by Lagrangian relaxation (each group takes argmin E + lambda T; lambda by
// bisection to the smallest that meets the budget) followed by a greedy repair that moves groups back
// toward their lower-energy choice, best energy-per-second first, while the budget holds. So a kernel
// may run slower where others make room, then improving moves over every pair and the best single pair
// as a floor. Pairs at which a group's mean power exceeds the cap are not offered, except the lowest SM
// clock; replays of plans run with the firmware power limit on (ReplayOptions::firmware_power_cap), so
// what the limit throttles shows up as time.
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dvfs {

enum class PlanGrouping { per_kernel, pass_level, single };
const char* to_string(PlanGrouping g);

struct ClockPlan {
  PlanGrouping grouping = PlanGrouping::per_kernel;
  std::vector<ClockPair> pairs;            // the candidate pairs (model table order)
  std::vector<std::uint32_t> group_of;     // per kernel of the rank: its group
  std::vector<std::uint32_t> pair_of_group;  // chosen pair index per group
  std::vector<std::string> group_names;
  double kernel_time_budget_s = 0;
  double planned_kernel_time_s = 0, planned_kernel_energy_j = 0;  // model, at the planned pairs
  double fastest_kernel_time_s = 0;        // all groups at their fastest pair
  bool feasible = true;                    // false: even the fastest pairs exceed the budget
  double lambda = 0;
  double solve_s = 0;                      // wall time of the optimisation
  ClockPair pair_for_kernel(std::size_t k) const { return pairs[pair_of_group[group_of[k]]]; }
  // Per kernel of the rank: the index into `pairs` of its planned pair (what PlanPolicy replays).
  std::vector<std::uint32_t> pair_index_per_kernel() const {
    std::vector<std::uint32_t> out(group_of.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = pair_of_group[group_of[i]];
    return out;
  }
};

// Identity of each kernel of the rank (name + launch shape), numbered densely from 0.
std::vector<std::uint32_t> kernel_identities(const Rank& rank, std::vector<std::string>* names = nullptr,
                                             const std::vector<std::string>* workload_names = nullptr);

// `kernel_time_budget_s`: the total kernel time allowed (e.g. (1 + budget) x the native replay's
// busy time). Kernels of kind other than `kernel` (memcpy, memset) are planned like kernels.
ClockPlan plan_clocks(const Workload& wl, const Rank& rank, const GpuModel& model, PlanGrouping grouping,
                      double kernel_time_budget_s);

}  // namespace dvfs
