#pragma once
// The policy registry: every DVFS policy a scenario can name, with a one-line summary, its kind, the
// keys it accepts, a parser of those keys and a factory. Scenario parsing, `compare`, the CLI's help,
// Python's policy_names() and the benchmarks read it; nothing else keeps a list of policy names.
//
// Families register explicitly (no static initialisers, which a static library may drop):
//   register_replay_policies        sim/policies/replay_policies.cpp      online: max, static, native, recorded
//   register_planned_policies       sim/planning/planned_policies.cpp     planned against a reference replay
//   register_critical_path_policies sim/critical_path/pipeline_plans.cpp  plans for a pipeline-parallel iteration
// and the whole registry is assembled in one place, policy_registry() (sim/simulation/policy_catalog.hpp).
// How to add a policy: docs/adding-a-policy.md.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"
#include "sim/policies/policy.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dvfs {

struct Scenario;        // sim/scenario/scenario.hpp
struct RankOutcome;     // sim/engine/engine.hpp
struct PlannedRun;      // sim/planning/planned_policies.hpp
struct KernelPipeline;  // sim/pipeline/pipeline.hpp
struct ReplayOptions;   // sim/engine/gpu_replayer.hpp

// One policy instance per GPU, by rank id (the same type as sim/engine's PolicyFactory).
using PolicyFactory = std::function<std::unique_ptr<Policy>(int rank)>;

enum class PolicyKind {
  online,    // decides while the replay runs (kernels, telemetry ticks): one instance per GPU
  planned,   // plans clocks against a reference replay of the same trace, then replays the plan
  pipeline,  // plans a pipeline-parallel iteration (needs a `synthetic` workload)
};
const char* to_string(PolicyKind k);

// A scenario's `policy`: its name and the values of the keys its entry accepts.
struct PolicySpec {
  std::string name = "native";
  std::optional<ClockPair> clocks;  // static: sm_mhz, mem_mhz (0 = the model's top memory clock)
  double power_cap_w = 0;           // native: override of the model's cap (0 = model's)
  double budget_pct = 0;            // planned and pipeline policies: allowed slowdown, %
  // The scenario's policy object as written ({} when the policy is given by name): a policy whose keys
  // have no field above reads them from here (its `parse` has checked them).
  Json object = Json::object();
};

// What a pipeline policy plans from: the synthesised pipeline (one replica's stage programs), the workload's kernel
// names, the GPU model, the replay options and the scenario's policy settings (budget_pct, its own keys in `object`).
struct PipelinePlanRequest {
  const KernelPipeline* pipeline = nullptr;
  const std::vector<std::string>* names = nullptr;
  const GpuModel* model = nullptr;
  const ReplayOptions* opts = nullptr;
  PolicySpec spec;
  std::string clock_plan;  // the scenario's clock_plan ("" = none)
};

// A pipeline policy's answer: the per-GPU factory, optionally the program to replay instead of the request's (a
// policy that reshapes the computations, e.g. Kareus's nano-batches), and what it reports under `critical_path`.
struct PipelinePlan {
  PolicyFactory factory;
  std::shared_ptr<const KernelPipeline> program;  // null: replay the request's pipeline
  Json report = Json::object();
};

struct PolicyEntry {
  std::string name;
  std::string summary;  // one line, for `dvfs-sim help` and the docs
  PolicyKind kind = PolicyKind::online;
  // Keys of the scenario's policy object it accepts besides "name" (sm_mhz, mem_mhz, power_cap_w, budget_pct).
  std::vector<std::string> keys;
  // Top-level scenario keys that only this policy reads (clock_plan).
  std::vector<std::string> scenario_keys;
  // Reads the accepted keys into `spec` (null: the entry takes none). `object` is the scenario's policy
  // object, or null when the policy was given by name alone (an entry that needs keys fails then, through
  // `scenario`, the scenario's top level). Only accepted keys are present. Errors name file and field.
  std::function<void(const JsonReader& scenario, const JsonReader* object, PolicySpec& spec)> parse;
  // online: the per-GPU factory (checks the spec against the model; errors name `scenario_file`).
  std::function<PolicyFactory(const PolicySpec&, const GpuModel&, const std::string& scenario_file)> make;
  // planned: plans against `reference` (the native governor's outcomes of the same workload) and replays.
  std::function<PlannedRun(const Scenario&, const Workload&, const GpuModel&, const std::vector<RankOutcome>& reference)> plan;
  // pipeline: plans a synthesised pipeline-parallel iteration.
  std::function<PipelinePlan(const PipelinePlanRequest&)> plan_pipeline;

  // > 0: `dvfs-sim compare` (and dvfs_sim.compare) replay it by default, in increasing order of this rank.
  int compare_rank = 0;

  bool accepts(const std::string& key) const;  // in keys or scenario_keys
};

class PolicyRegistry {
 public:
  // Adds an entry (a duplicate name is a programming error: std::logic_error).
  void add(PolicyEntry e);
  const PolicyEntry* find(const std::string& name) const;
  // The entry, or an InputError at file/field: unknown policy "X" (expected one of: every name).
  const PolicyEntry& at(const std::string& name, const std::string& file, const std::string& field) const;
  const std::vector<PolicyEntry>& entries() const { return entries_; }
  std::vector<std::string> names() const;
  std::vector<std::string> names(PolicyKind kind) const;
  // Names of the entries (of `kind`, when given) accepting `key`, in registration order.
  std::vector<std::string> names_accepting(const std::string& key, std::optional<PolicyKind> kind = std::nullopt) const;
  // Every policy-object key some entry accepts, in registration order, without duplicates.
  std::vector<std::string> keys() const;

 private:
  std::vector<PolicyEntry> entries_;
};

// "a, b, c"
std::string join_names(const std::vector<std::string>& names);

// The online family: max, static, native, recorded (sim/policies/replay_policies.cpp).
void register_replay_policies(PolicyRegistry& r);

}  // namespace dvfs
