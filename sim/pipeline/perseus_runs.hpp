#pragma once
// The measured pipeline runs of the Perseus artifact (Chung et al., SOSP 2024; Apache-2.0; see
// traces/perseus-runs/PROVENANCE.md): per plan N, N.prof.json (read here for both `validate --perseus-runs`
// and `validate --perseus`) holds for every rank (pipeline stage)
// the measured iteration times and energies and the time of each micro-batch's data load, forward and
// backward (`time_breakdown`, per iteration). `validate --perseus-runs DIR` rebuilds each iteration as a
// 1F1B pipeline from those measured per-instruction times, replays it on SimGrid and compares the
// predicted iteration time with the measured one.
#include "sim/core/json_util.hpp"
#include "sim/pipeline/pipeline.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct PerseusMeasurement {
  std::string file;
  int stages = 0, microbatches = 0;
  int gpus_per_stage = 1;  // > 1 after fold_to_stages (data- and tensor-parallel ranks of one stage)
  // [rank][iteration]; iteration 0 is the warm-up.
  std::vector<std::vector<double>> iteration_s, energy_j;
  // [rank][iteration][micro-batch]; loads summed per micro-batch (the last stage logs two per micro-batch).
  std::vector<std::vector<std::vector<double>>> forward_s, backward_s, load_s;
  double iteration_time_s(std::size_t it) const;  // the slowest rank's (every rank reports the pipeline's)
  double mean_iteration_s() const;  // iterations after the warm-up: iteration_time_s averaged
  double mean_energy_j() const;     // summed over ranks, averaged
};
PerseusMeasurement load_perseus_measurement(const std::string& prof_json);
// A 3D run (ranks = dp x pp x tp, rank r in pipeline stage r % stages, as Merak numbers them): one entry per
// stage, its times those of its first rank, its iteration time the slowest of its ranks', its energy the sum
// of its ranks' (the stage's GPUs). `stages` <= 0 or equal to the ranks: unchanged.
PerseusMeasurement fold_to_stages(const PerseusMeasurement& m, int stages);

// The pipeline of iteration `it`: the stage's data load is part of its forward pass.
PipelineWorkload perseus_pipeline(const PerseusMeasurement& run, std::size_t it, double p2p_latency_s);

// Plans `plans` (e.g. {0, 1}: every instruction at the highest clock) of a run directory.
Json validate_perseus_runs(const std::string& dir, const std::vector<int>& plans, double p2p_latency_s);
std::string format_perseus_validation(const Json& report);

}  // namespace dvfs
