#pragma once
// The one scenario entry point: `dvfs-sim run`, dvfs_sim.run / simulate and the sweeps all come here,
// for every kind of scenario the project has. The kind is read from the document's keys, once:
//   control    {"control": ...}    a power-budget scenario under its controller (sim/control/control_run.hpp)
//   fleet      {"fleet": ...}      a fleet power study (sim/control/fleet.hpp)
//   lifecycle  {"lifecycle": ...}  a whole job phase by phase: CPU, storage and GPU (sim/lifecycle/lifecycle_run.hpp)
//   synthetic  {"synthetic": ...}  a synthesised multi-GPU training iteration (sim/synthetic_run.hpp)
//   multi-rank {"trace": [...]} or a directory of rank<N>/ recordings: one job's ranks, collectives matched
//   replay     {"trace": "..."}    one recorded trace replayed (sim/simulation/simulation.hpp)
#include "sim/core/json_util.hpp"
#include "sim/simulation/simulation.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dvfs {

struct ScenarioKindSpec;  // sim/simulation/scenario_kinds.hpp

// The kinds run_scenario runs itself, and `registered`: a kind marked by its own top-level key (control, fleet,
// lifecycle, ...) that its folder describes in a ScenarioKindSpec; no code outside that folder names it.
enum class ScenarioKind { replay, multi_rank, synthetic, registered };
const char* to_string(ScenarioKind k);

// From the document's top-level keys (a list under "trace" is multi-rank; a directory of rank<N>/
// recordings is found to be multi-rank only once its path is resolved: run_scenario reports it).
ScenarioKind scenario_kind(const Json& doc);
// The registered kind whose key the document has; nullptr for trace replays and synthetic runs.
const ScenarioKindSpec* registered_kind(const Json& doc);

struct ScenarioOptions {
  std::optional<EngineMode> engine;  // overrides the scenario's `engine` (trace replays)
  std::optional<StreamOverlap> stream_overlap;  // overrides the scenario's `stream_overlap` (trace replays)
  bool output_dir_given = false;                 // -o: a study that writes no files refuses it
  // Trace replays only: how the trace is loaded (default: load_scenario_trace) and replayed (default:
  // simulate), e.g. a cache of loaded traces or a policy defined outside sim/ (Python).
  std::function<std::shared_ptr<const LoadedTrace>(const Scenario&, const GpuModel&)> load_trace;
  std::function<SimulationResult(const Scenario&, const LoadedTrace&, const GpuModel&)> replay;
  // Trace replays and synthetic runs: also write the simulated run as a Chrome trace (Kineto layout; gzip
  // when it ends in .gz) to this path (sim/results/trace_export.hpp). "" = none.
  std::string trace_out;
  // Trace replays and synthetic runs: also write the simulated run as Chakra execution traces, one file per
  // GPU, in this directory (docs/chakra.md). "" = none.
  std::string chakra_out;
  std::vector<int> trace_gpus;  // trace_out: only these GPUs (empty: all)
};

struct ScenarioRun {
  ScenarioKind kind = ScenarioKind::replay;
  const ScenarioKindSpec* registered = nullptr;  // kind == registered: which one (the registry's, lives as long)
  std::string name;        // the scenario's name
  std::string output_dir;  // the scenario's output.dir ("" = none given; control and fleet have none)
  Json summary;            // what `dvfs-sim run --json` prints and summary.json holds
  std::vector<RankOutcome> outcomes;  // trace replays: per GPU (the timeline)
  Json trace_export;       // with ScenarioOptions::trace_out: {file, events, activities, bytes, file_bytes, seconds}
  Json chakra_export;      // with ScenarioOptions::chakra_out: {dir, files, ranks, nodes, bytes, seconds, cpu_s}
  Json timing;             // wall-clock figures (timing.json), kept out of the summary
  // The text `dvfs-sim run` prints (without the line naming the result files).
  std::string report() const;
  // A study prints its result and writes no files (a registered kind without outputs).
  bool is_study() const;
};

ScenarioRun run_scenario(const Json& doc, const std::string& file, const std::string& base_dir, const ScenarioOptions& opts = {});
// Reads the file once; relative paths resolve against its directory.
ScenarioRun run_scenario_file(const std::string& path, const ScenarioOptions& opts = {});

// A trace replay's outcomes (recorded with ReplayOptions::record_activities) written as a trace file
// (sim/results/trace_export.hpp); returns {file, events, activities, bytes, file_bytes, seconds}.
Json export_replay_trace(const Scenario& sc, const Workload& wl, const GpuModel& model, const std::vector<RankOutcome>& outcomes,
                         const std::string& path, const std::vector<int>& only_gpus = {});

// Writes the run's result files into dir (created if missing) and returns the main ones: trace replays
// summary.json and timeline.csv; synthetic runs summary.json (and gpus.csv when the run has per-GPU
// rows); lifecycle runs summary.json. Control and fleet studies write none (their result is what they print).
std::vector<std::string> write_scenario_outputs(const ScenarioRun& run, const std::string& dir);

}  // namespace dvfs
