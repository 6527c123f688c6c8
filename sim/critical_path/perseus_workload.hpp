#pragma once
// The models-only anchor of `validate --perseus`: what every computation of a Perseus run set takes at the
// highest requested clock, and what the iteration holds outside the computations, from the workload alone
// (traces/perseus-baselines/workloads.json: model shape, pipeline layout, the workload's one default-settings
// run from the artifact's power-limit baselines) and the GPU model: no number of the run set's plans is read.
//
//  - per stage, computation in block equivalents: its transformer blocks (the partition over Merak's layer
//    list [token embedding, position embedding, blocks, final norm + LM head]) plus, on the last stage, the LM head at
//    `head_ratio` x vocab / (12 d + 2 context) blocks; a backward is `backward_over_forward` forwards;
//  - outside the computations (issue 22, "time outside the DAG"): the data load of the first and last stage
//    per micro-batch (host work, fixed); one activation (gradient) transfer per stage boundary, micro-batch x
//    context x d / tp bf16 bytes at the model's interconnect bandwidth (in the DAG, on its edges); the
//    data-parallel gradient all-reduce after the last backward, 2 (dp-1)/dp x the stage's bf16 gradients at
//    the model's NIC bandwidth; the optimizer step, `optimizer_bytes` per parameter at its memory bandwidth;
//  - scale: the one time per block that makes the 1F1B DAG's longest path the default run's iteration time;
//  - power: one busy power for every GPU that makes the iteration's energy the default run's, P_blocking
//    (the model's idle power) for the rest, the same accounting the measured anchor uses.
#include "models/src/gpu_model.hpp"

#include <optional>
#include <string>
#include <vector>

namespace dvfs {

struct PerseusWorkload {
  std::string run_set, file, board, model, partition;
  int layers = 0, hidden = 0, context = 0, vocab = 0, dp = 1, tp = 1, pp = 1, microbatch_size = 1, microbatches = 1;
  double default_iteration_s = 0, default_energy_j = 0, default_power_limit_w = 0;
  double backward_over_forward = 2, head_ratio = 1, load_s = 0, optimizer_bytes = 0;
  int gpus_per_stage() const { return dp * tp; }
  std::vector<double> stage_blocks() const;  // per stage, block equivalents (LM head included)
  std::vector<double> stage_parameters() const;  // per stage and GPU (after tensor parallelism)
};

// The entry of `file` for the run directory's base name; nullopt when it has none. InputError on a bad entry.
std::optional<PerseusWorkload> find_perseus_workload(const std::string& run_dir, const std::string& file);
std::string default_perseus_workloads_file();
std::string perseus_run_set_name(const std::string& run_dir);  // the directory's base name, e.g. a100_gpt3-xl_pp4

// What a prediction is anchored on: per stage (one GPU of it) and micro-batch, at the highest requested clock.
struct PerseusAnchor {
  int stages = 0, microbatches = 0, gpus_per_stage = 1;
  std::vector<std::vector<double>> fw, bw, ld;
  double p2p_s = 0, tail_s = 0;
  std::vector<double> after_last_backward_s;  // per stage (gradient all-reduce); empty = none
  double iteration_s = 0;
  std::vector<double> stage_energy_j;  // per stage, one GPU, per iteration
  std::vector<int> plans;              // measured anchor plans; empty for a models-only anchor
  std::string file;                    // where its numbers came from
};

PerseusAnchor workload_anchor(const PerseusWorkload& w, const GpuModel& model, double p_blocking_w);

}  // namespace dvfs
