#pragma once
// Pipeline-parallel training iterations on SimGrid: one host and one actor per pipeline stage, the
// forward and backward computations of every micro-batch in 1F1B order, activations and gradients sent
// between neighbouring stages as SimGrid communications (so a stage waits for its input exactly as
// long as the upstream stage and the link make it). The first piece of issue 5's multi-GPU engine;
// computations here are given durations (e.g. measured ones), not kernel streams.
#include <string>
#include <vector>

namespace dvfs {

struct PipelineWorkload {
  int stages = 0;
  int microbatches = 0;
  std::vector<std::vector<double>> forward_s, backward_s;  // [stage][micro-batch]
  double p2p_latency_s = 0;       // one activation or gradient transfer between neighbours
  double p2p_bandwidth_bps = 0;   // bytes/s of a stage's link (0: latency only)
  double activation_bytes = 0;    // per micro-batch, each direction
};

struct PipelineOp {
  bool backward = false;
  int microbatch = 0;
};

// The 1F1B order of one stage: warm-up forwards, then one forward / one backward, then the
// remaining backwards (PipeDream-flush / Megatron-LM).
std::vector<PipelineOp> one_f_one_b(int stage, int stages, int microbatches);

struct PipelineResult {
  double iteration_s = 0;
  std::vector<double> stage_end_s, stage_busy_s, stage_blocked_s;  // per stage
};

// Throws InputError on an inconsistent workload (sizes, negative durations).
PipelineResult simulate_pipeline(const PipelineWorkload& wl, const std::string& source = "pipeline");

}  // namespace dvfs
