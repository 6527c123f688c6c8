#pragma once
// A parsed scenario (scenarios/*.json): which trace, which GPU model, which policy, engine options and
// outputs. The data only: reading and validating a file is sim/simulation/scenario_file.hpp (it needs
// the whole policy registry); running one is sim/simulation/run_scenario.hpp.
#include "sim/core/json_util.hpp"
#include "sim/engine/engine.hpp"
#include "sim/policies/registry.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dvfs {

struct Scenario {
  std::string file;          // where it was read from ("" for an in-memory scenario)
  std::string name;
  std::string description;
  std::string trace_path;    // a recording directory or a Kineto .json/.json.gz file (the first of trace_paths)
  // Several ranks of one job: each a recording directory or a Kineto file ("trace": [...], or a directory
  // of rank<N>/ recordings); merged into one multi-rank workload with matched collectives.
  std::vector<std::string> trace_paths;
  std::string gpu;           // model name or model file path
  std::string trace_gpu;     // the GPU the trace was recorded on, when it is not `gpu` (retargeting)
  // A synthesised multi-GPU workload instead of a replayed trace (sim/synthetic_run.hpp reads
  // it); `trace_path` is then the recording its layers are taken from.
  Json synthetic;
  // A per-rank clock plan in Perseus's N.sched.json format that the critical-path policy replays on a
  // synthetic workload (sim/critical_path/); "" = none.
  std::string clock_plan;
  PolicySpec policy;         // sim/policies/registry.hpp
  ReplayOptions replay;
  ClusterSpec cluster = default_cluster_spec();  // where multi-rank collectives run (`cluster` key)
  bool cluster_given = false;  // `cluster` was in the file: a single-rank replay refuses it (it would change nothing)
  EngineMode mode = EngineMode::local_loop;
  std::string output_dir;    // "" = no files written unless the CLI says so
};

std::string default_scenario_path();
// The scenario's cluster with its bandwidths resolved for the GPU model (sim/network/cluster.hpp).
ClusterSpec cluster_for(const Scenario& sc, const GpuModel& model);

const char* to_string(EngineMode m);

}  // namespace dvfs
