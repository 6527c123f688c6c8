#pragma once
// The measured pipeline runs of the Perseus artifact (Chung et al., SOSP 2024; Apache-2.0; see
// traces/perseus-runs/PROVENANCE.md): per plan N, N.prof.json holds for every rank (pipeline stage)
// the measured iteration times and energies and the time of each micro-batch's data load, forward and
// backward (`time_breakdown`, per iteration). `validate --perseus-runs DIR` rebuilds each iteration as a
// 1F1B pipeline from those measured per-instruction times, replays it on SimGrid and compares the
// predicted iteration time with the measured one.
#include "sim/core/json_util.hpp"
#include "sim/pipeline/pipeline.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct PerseusRun {
  std::string file;
  int stages = 0, microbatches = 0;
  std::vector<double> iteration_s, iteration_energy_j;  // measured; index 0 is the warm-up iteration
  // [iteration][stage][micro-batch]
  std::vector<std::vector<std::vector<double>>> load_s, forward_s, backward_s;
};

PerseusRun load_perseus_run(const std::string& prof_json);

// The pipeline of iteration `it`: the stage's data load is part of its forward pass.
PipelineWorkload perseus_pipeline(const PerseusRun& run, std::size_t it, double p2p_latency_s);

// Plans `plans` (e.g. {0, 1}: every instruction at the highest clock) of a run directory.
Json validate_perseus_runs(const std::string& dir, const std::vector<int>& plans, double p2p_latency_s);
std::string format_perseus_validation(const Json& report);

}  // namespace dvfs
