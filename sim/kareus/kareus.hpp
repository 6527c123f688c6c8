#pragma once
// Kareus (OSDI'26, ML.ENERGY) on dvfs-sim's pipelines: communication-computation overlap as an energy knob beside the
// clocks. A micro-batch's pass is split into nano-batches so that one nano-batch's tensor-parallel collectives run
// beside the next one's compute; the knobs are the nano-batch count, the SMs given to communication kernels (1-20)
// and the overlap window, and per partition the SM clock.
//
// Here:
//  - kareus_program rewrites a synthesised pipeline's stage programs for one knob setting: compute kernels pay the
//    nano-batch overhead, each TP collective's time follows its SMs, and the overlapped share of it runs beside the
//    compute that follows it at the rates the contention model (models/src/stream_contention.hpp) gives the pair
//    (the compute stretched by the SMs the collective takes, the collective hidden or left exposed, its HBM traffic
//    added to the compute it hides behind), written back as one queue the pipeline engine replays;
//  - kareus_frontier: for every knob setting of models/kareus/knobs.json the Perseus min-cut frontier of the
//    rewritten pipeline (per-partition clocks; sim/critical_path), and their lower envelope. The knob setting is
//    one per iteration (not per partition, as Kareus tunes it): the envelope over settings, each with per-partition
//    clocks. Setting (1 nano-batch, no overlap, the synthesised SMs) is the pipeline unchanged: Perseus's frontier,
//    so the envelope is never above it;
//  - the `kareus` pipeline policy: the least-energy plan of the envelope at the target time (Perseus's fastest
//    iteration x (1 + budget_pct)), replayed on its setting's program.
#include "models/src/gpu_model.hpp"
#include "models/src/stream_contention.hpp"
#include "sim/core/json_util.hpp"
#include "sim/critical_path/pipeline_plans.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/policies/registry.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct KareusKnobs {
  std::vector<int> nano_batches = {1, 2, 4};
  std::vector<int> comm_sms = {8, 16, 20};
  std::vector<double> overlap_windows = {0.5, 1.0};
  double comm_sms_saturating = 16;
  double nano_batch_overhead = 0.03;
  double comm_hbm_bytes_per_byte = 4;
};
KareusKnobs load_kareus_knobs(const std::string& path);
std::string default_kareus_knobs_path();  // models/kareus/knobs.json

struct KareusSetting {
  int nano_batches = 1;
  int comm_sms = 0;           // 0: as synthesised
  double overlap_window = 0;  // share of each collective that may overlap the next nano-batch's compute
  bool identity() const { return nano_batches == 1 && comm_sms == 0 && overlap_window == 0; }
  std::string label() const;
};

// Every setting the knobs span, the identity (Perseus's pipeline) first.
std::vector<KareusSetting> kareus_settings(const KareusKnobs& k);

// The pipeline's stage programs rewritten for one setting (see above). Collectives only shrink in the program
// where the pipeline folds each TP group into one actor (tp_ranks 1: a collective lasts its program duration).
KernelPipeline kareus_program(const KernelPipeline& kp, const KareusSetting& s, const KareusKnobs& k, const ContentionModel& m,
                              const GpuModel& model, const std::vector<std::string>& names);

struct KareusFrontier {
  std::vector<KareusSetting> settings;
  std::vector<PipelineFrontier> frontiers;                 // per setting
  std::vector<std::pair<double, double>> envelope;         // (s, J), slowest first, Pareto
  std::vector<int> envelope_setting;                       // per envelope point: index into settings
  double seconds = 0;                                      // wall time of the whole sweep
};
KareusFrontier kareus_frontier(const KernelPipeline& kp, const std::vector<std::string>& names, const GpuModel& model,
                               const ReplayOptions& opts, const KareusKnobs& k, const ContentionModel& m);

// Least energy among (time, energy) points within `time_s` (infinity when none is that fast), and least time
// within `energy_j`.
double energy_at_time(const std::vector<std::pair<double, double>>& points, double time_s);
double time_at_energy(const std::vector<std::pair<double, double>>& points, double energy_j);

// The `kareus` entry (pipeline kind; keys: budget_pct).
void register_kareus_policy(PolicyRegistry& r);

}  // namespace dvfs
