#pragma once
// One simulation from a scenario: load the trace and the GPU model, make the policy, run the engine,
// build the results. The CLI and the Python module both go through here.
#include "models/src/gpu_model.hpp"
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/src/kineto_importer.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct LoadedTrace {
  Workload workload;
  ImportReport report;
};

// A recording directory (trace + telemetry: kernels get their recorded clocks) or a Kineto file.
LoadedTrace load_trace(const std::string& path);

struct SimulationResult {
  Json summary;
  std::vector<RankOutcome> outcomes;
  std::string timeline_csv() const;
};

SimulationResult simulate(const Scenario& sc);
SimulationResult simulate(const Scenario& sc, const LoadedTrace& trace, const GpuModel& model);
// Writes summary.json and timeline.csv into dir (created if missing).
void write_results(const SimulationResult& r, const std::string& dir);

}  // namespace dvfs
