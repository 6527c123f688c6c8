#pragma once
// What a budget controller observes, the actions a learned controller takes and the reward it is trained
// on, defined once for the C++ controllers and the Python environment (dvfs_sim.rl).
//
// Observation of one budget after an interval (all from what an operator has: NVML readings, the caps it
// set, the jobs' own state), kObservationSize values:
//   0 measured power / budget, this interval        5 share of its GPUs training (forward, backward, optimizer)
//   1 ... the interval before                       6 share waiting (barriers, collectives, host work)
//   2 ... mean over the last 10 intervals           7 generation progress of its generating jobs (sequences done)
//   3 sum of its GPUs' power limits / budget        8 concurrency of its jobs within their range, in [0, 1]
//   4 share of its GPUs generating                  9 share of its GPUs the power limit throttles
// Action, each in [-1, 1]: a0 sets the budget's power target to budget x (1 + target_span x a0), split into
// power limits by allocate_caps; a1 (when the action has it) sets its jobs' concurrency within their range.
// Reward of an interval: (generated + trained tokens of its jobs) / tokens_scale - violation_penalty x
// [measured > budget] - excess_penalty x max(0, measured / budget - 1).
#include "sim/control/session.hpp"

#include <string>
#include <vector>

namespace dvfs {

constexpr int kObservationSize = 10;
std::vector<std::string> observation_names();

struct ActionSpec {
  double target_span = 0.25;
  double headroom_w = 30;       // allocate_caps' headroom for GPUs below their limit
  bool concurrency = true;      // a1 is the concurrency
  int size() const { return concurrency ? 2 : 1; }
};
std::vector<std::string> action_names(const ActionSpec& a);

struct RewardSpec {
  double tokens_scale = 1e5;
  double violation_penalty = 1.0;
  double excess_penalty = 4.0;
};

// Jobs with at least one GPU in the budget.
std::vector<int> budget_jobs(const ControlSession& s, int budget);
std::vector<double> budget_observation(const ControlSession& s, int budget);
// Budget b's power target split over its GPUs' power limits by allocate_caps, from their last measured
// power (their top limit before the first interval).
void allocate_budget_caps(ControlSession& s, int b, double target_w, double headroom_w);
void apply_budget_action(ControlSession& s, int budget, const std::vector<double>& action, const ActionSpec& spec);
double budget_reward(const ControlSession& s, int budget, const RewardSpec& spec);

}  // namespace dvfs
