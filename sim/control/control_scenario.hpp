#pragma once
// Power-budget scenarios (scenarios/power-budget/*.json): jobs, budgets, telemetry, a controller, the reward
// a learned controller is trained on. Every key is checked; errors name the file and the field.
//
//   {"name", "description", "gpu": "h200",
//    "control": {"interval_s": 0.5, "duration_s": 120, "seed": 0,
//                "telemetry": {"field": "average" | "instant" | "energy-counter" | "exact", "bin_s": 0.025,
//                              "cap_latency_s": 0.1},
//                "caps": {"min_w", "max_w"},
//                "jobs": [{"name", "kind": "grpo" | "training", "model", "tp", "dp", "prompts_per_step",
//                          "group_size", "group_size_range": [lo, hi], "concurrency", "concurrency_range": [lo, hi],
//                          "prompt_tokens", "max_response_tokens", "response_median_tokens", "response_sigma",
//                          "train_micro_batch", "reference_forward", "decode_host_overhead_s", "decode_allreduce_s",
//                          "step_host_s", "start_offset_s", "start_offset_spread_s", "seed"}, ...],
//                "budgets": [{"name", "scope": "gpu" | "node" | "rack" | "fleet", "gpus_per_rack": 32,
//                             "budget_w" | "budget_w_per_gpu" | "budget_frac_of_tdp", "controlled": true}, ...],
//                "controller": {"name", "margin_frac", "down_gain", "up_step_frac", "kp", "ki", "kd", "headroom_w",
//                               "policy_file", "actions": ["power_target", "concurrency"], "budget_pct"},
//                "reward": {"tokens_scale", "violation_penalty", "excess_penalty"},
//                "cluster": {... as multi-GPU scenarios ...}}}
// A budget's scope splits the GPUs into groups (one budget each): every GPU, every node (cluster
// gpus_per_node), every rack (gpus_per_rack) or all of them. The first budget is the controlled one unless
// `controlled` says otherwise.
#include "sim/control/controllers.hpp"
#include "sim/control/session.hpp"

#include <memory>
#include <string>

namespace dvfs {

struct BudgetSpec {
  std::string name, scope = "fleet";
  int gpus_per_rack = 32;
  double budget_w = 0, budget_w_per_gpu = 0, budget_frac_of_tdp = 0;
  bool controlled = false;
};

struct ControlScenario {
  std::string file, name, description, gpu = "h200";
  double interval_s = 0.5, duration_s = 120;
  std::uint64_t seed = 0;
  NvmlField field = NvmlField::average;
  double bin_s = 0.025, cap_latency_s = 0.1, min_cap_w = 0, max_cap_w = 0;
  std::vector<GrpoJobSpec> jobs;
  std::vector<BudgetSpec> budgets;
  ControllerSpec controller;
  RewardSpec reward;
  ClusterSpec cluster = default_cluster_spec();
};

// One entry of control.jobs (also a fleet mix's job).
GrpoJobSpec read_control_job(const JsonReader& r, std::size_t index);

bool is_control_scenario(const std::string& path);  // a JSON object with a "control" key
ControlScenario load_control_scenario(const std::string& path);
ControlScenario parse_control_scenario(const Json& doc, const std::string& file, const std::string& base_dir);
// The timing of a control session, checked where a scenario is read so that the error names its file and fields: the
// interval a multiple of `gpu`'s governor period, the telemetry bin dividing it, at most kMaxControlDurationS simulated
// and at most kMaxTimelineRows bins per GPU (sim/core/limits.hpp).
void check_control_timing(const std::string& gpu, double interval_s, double bin_s, double duration_s, const std::string& file,
                          const std::string& interval_field, const std::string& bin_field, const std::string& duration_field);
// A duration given beside the file (a command-line option, a Python argument named `field`), checked as the file's.
void set_control_duration(ControlScenario& sc, double duration_s, const std::string& field);

// A controller that keeps power under budgets (static-cap, reactive, pid, rl) needs at least one budget it controls:
// with `budgets: []` it ran unconstrained and reported as if it had controlled. Error names control.budgets.
void check_controller_budgets(const ControlScenario& sc, const ControllerSpec& controller);

// The session's inputs: the GPU model, the jobs' programs (prepared once per process and scenario: the
// recordings are loaded once), the budgets expanded into groups; for the per-kernel controller, the jobs'
// clock plans.
SessionSetup make_session_setup(const ControlScenario& sc, const ControllerSpec& controller);

}  // namespace dvfs
