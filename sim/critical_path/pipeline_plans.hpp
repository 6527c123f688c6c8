#pragma once
// Critical-path plans for a kernel-level pipeline (a synthesised multi-GPU workload): the per-GPU
// policy factory `run_synthetic` replays.
//  - Curves: each stage's schedule replayed back to back from a cold start at every SM clock of the
//    model (memory at its top clock) under the firmware power limit, without the waits for its
//    neighbours; a (virtual stage, pass)'s option is the mean over its computations (the limit's window
//    then sits where the pipeline has it on its critical stage). With per-kernel variants (the
//    `critical-path+per-kernel` policy) also each computation's per-kernel plans (sim/planning, a pair
//    per kernel identity, energy-least within budgets of 0-30 % over its fastest kernel time), each
//    budget swept the same way with the model's switch latency.
//  - With a switch latency each clock is requested one latency ahead of when the plan needs it, and each
//    stage's plan is merged into runs of at least one latency at one clock (a clock that changes faster
//    never takes effect: each request supersedes the one in flight).
//  - DAG: the schedule's, with transfers of the activation bytes over the inter-node link and, per
//    stage, the gradient all-reduce (ring estimate) and the optimizer (at the top clock) as fixed steps.
//  - Plans: the frontier's least-energy plan within the target: the fastest iteration (no slowdown)
//    times (1 + slowdown_pct); with a straggler replica (all its kernels slower), straggler-aware
//    replicas target the straggler's own fastest iteration instead (Perseus's extrinsic bloat), the
//    straggler runs its own no-slowdown plan. Data-parallel replicas are identical pipelines: one DAG.
//  - A given plan (Perseus's N.sched.json format: a clock per computation, or Merak's 1F1B
//    instruction list) is replayed as it is on every replica.
// `per-kernel` with a straggler replica is also made here (the same per-kernel plans run_synthetic
// makes, replayed per computation so that the straggler's stretched copy of the program works).
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/critical_path/frontier.hpp"
#include "sim/engine/engine.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/policies/registry.hpp"

#include <string>

namespace dvfs {

struct CriticalPathSettings {
  std::string policy = "critical-path";  // critical-path | critical-path+per-kernel | per-kernel (straggler only)
  double slowdown_pct = 0;               // iteration slowdown allowed over the fastest (budget_pct)
  bool straggler_aware = true;
  std::string clock_plan;                // replay this plan file instead of solving
  double quantum_s = 1e-3;
  double target_s = 0;                   // > 0: plan for this iteration time instead of fastest x (1 + slowdown)
};

// The iteration's time-energy frontier of a pipeline (one replica, no straggler): its curves, DAG and the
// Perseus min-cut frontier as (time, total energy) points, slowest first, and the fastest plan's time and energy.
// quantum_s <= 0: a quantum of the fastest iteration / 2,000 (at least 1 ms).
struct PipelineFrontier {
  std::vector<std::pair<double, double>> points;  // (iteration s, energy J of one pipeline GPU set)
  double fastest_s = 0, fastest_j = 0;
  double curves_s = 0, solve_s = 0;
  double quantum_s = 0;  // the frontier's time quantum
};
PipelineFrontier critical_path_frontier(const KernelPipeline& kp, const std::vector<std::string>& names, const GpuModel& model,
                                        const ReplayOptions& opts, double quantum_s = 1e-3);

// The pipeline family's registry entries: critical-path (which also replays a given `clock_plan`) and
// critical-path+per-kernel; both take budget_pct (the iteration slowdown) and need a synthetic workload.
void register_critical_path_policies(PolicyRegistry& r);
bool is_critical_path_policy(const std::string& name);  // a name of that family

// Builds what the settings ask for and returns the per-GPU factory (GPU g = (replica x stages + stage)
// x TP + tp); `report` gets the frontier, the targets and the plans' predicted time and energy.
// `names` is the workload's kernel-name table (labels of per-kernel plans).
PolicyFactory critical_path_factory(const KernelPipeline& kp, const std::vector<std::string>& names, const GpuModel& model,
                                    const ReplayOptions& opts, const CriticalPathSettings& s, Json& report);

// Time and energy of kernels [first, last) of `rank` replayed alone under `policy` (three times back
// to back, the last counted): the optimizer step's time at the top clock.
struct RangeCost {
  double time_s = 0, energy_j = 0;
};
RangeCost replay_range(const Rank& rank, std::size_t first, std::size_t last, const GpuModel& model, Policy& policy,
                       const ReplayOptions& opts, std::size_t annotation_sets);

}  // namespace dvfs
