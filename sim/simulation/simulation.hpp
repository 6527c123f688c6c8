#pragma once
// One trace replay from a scenario: load the trace and the GPU model, make the policy, run the engine,
// build the results. Every scenario kind (replay, synthetic, control, fleet) is run through
// sim/simulation/run_scenario.hpp, which comes here for trace replays.
#include "models/src/gpu_model.hpp"
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "traces/src/kineto_importer.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct LoadedTrace {
  Workload workload;
  ImportReport report;
  Json retargeted;  // null, or how the kernel times were moved from the recording GPU (see retarget.hpp)
};

// A recording directory (trace + telemetry: kernels get their recorded clocks) or a Kineto file.
LoadedTrace load_trace(const std::string& path);
// Several ranks' traces of one job (each a recording directory or Kineto file; one directory holding
// rank<N>/ recordings, or only rank trace files, counts as its ranks), merged with their collectives matched (traces/src/multi_rank.hpp).
LoadedTrace load_traces(const std::vector<std::string>& paths);
// load_trace, then retarget to `model` when the scenario names another recording GPU (trace_gpu).
LoadedTrace load_scenario_trace(const Scenario& sc, const GpuModel& model);
// load_trace of each path, several at once (at most kMaxTraceLoadThreads threads, and the machine's cores); a
// file that fails throws the error of the first such path, as loading them one by one would.
inline constexpr std::size_t kMaxTraceLoadThreads = 8;
std::vector<LoadedTrace> load_each_trace(const std::vector<std::string>& paths);
// rank<N>/ subdirectories of a directory (a multi-rank recording), in rank order; empty if none. InputError naming
// the folder when one is missing (rank0 and rank2 without rank1), spelt otherwise (rank01, rank-1) or beyond the
// limit of GPUs simulated side by side.
std::vector<std::string> rank_directories(const std::string& dir);
// The Kineto files (*.json, *.json.gz) of a directory that is no recording (no trace.json[.gz], no run.json), in name
// order, when it holds two or more: one job's rank traces side by side (Holistic Trace Analysis' trace_dir layout,
// `worker0_*.pt.trace.json`, `rank-1.json.gz`); empty otherwise.
std::vector<std::string> rank_trace_files(const std::string& dir);

struct SimulationResult {
  Json summary;  // model outputs only: identical inputs give identical bytes
  Json timing;   // wall-clock figures (seconds of this machine, e.g. plan_solve_s): never in the summary
  std::vector<RankOutcome> outcomes;
  std::string timeline_csv() const;
};

SimulationResult simulate(const Scenario& sc);
SimulationResult simulate(const Scenario& sc, const LoadedTrace& trace, const GpuModel& model);
// The replay under policies made by `factory` (a non-planned policy, or one defined outside sim/, e.g. in
// Python) on `model` already bound to the trace's kernel names: the scenario's cluster, its summary.
SimulationResult simulate_with_factory(const Scenario& sc, const LoadedTrace& trace, const GpuModel& bound_model,
                                       const PolicyFactory& factory);
// Creates dir and its parents (InputError naming it when that fails).
void make_directories(const std::string& dir);
// Writes summary.json and timeline.csv into dir (created if missing), and timing.json when the run has
// wall-clock figures.
void write_results(const SimulationResult& r, const std::string& dir);
void write_results(const Json& summary, const std::vector<RankOutcome>& outcomes, const std::string& dir);

}  // namespace dvfs
