#pragma once
// Pipeline-parallel training iterations on SimGrid: one host and one actor per pipeline stage, the
// forward and backward computations of every micro-batch in 1F1B order, activations and gradients sent
// between neighbouring stages as SimGrid communications (so a stage waits for its input exactly as
// long as the upstream stage and the link make it). The first piece of issue 5's multi-GPU engine;
// computations here are given durations (e.g. measured ones), not kernel streams.
#include "sim/engine/engine.hpp"

#include <string>
#include <vector>

namespace dvfs {

// The order of one stage's forwards and backwards (see one_f_one_b and gpipe below).
enum class PipelineSchedule { one_f_one_b, gpipe };

// Where the GPUs sit: nodes of `gpus_per_node`, GPU g on node g / gpus_per_node. Inside a node a
// transfer crosses both GPUs' intra-node links (NVLink class); between nodes both GPUs' network links
// and one shared backbone whose bandwidth is the GPUs' total over `oversubscription`. 0 = unlimited.
// How data-parallel replicas all-reduce a stage's gradients: a ring (reduce-scatter + all-gather,
// 2 (DP - 1) steps of bytes / DP to the next replica: bandwidth-optimal, latency linear in DP) or a
// binary tree (reduce to replica 0 and broadcast back, in `tree_chunks` pipelined chunks: latency
// logarithmic in DP), as NCCL picks between them.
enum class AllReduceAlgorithm { ring, tree };

struct ClusterSpec {
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::ring;
  int tree_chunks = 4;
  int gpus_per_node = 8;
  double intra_bw_bps = 0, intra_latency_s = 0;  // per GPU, bytes/s and one-way s (split over both ends)
  double inter_bw_bps = 0, inter_latency_s = 0;
  double oversubscription = 1;
};

struct PipelineWorkload {
  int stages = 0;
  int microbatches = 0;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  std::vector<std::vector<double>> forward_s, backward_s;  // [stage][micro-batch]
  double p2p_latency_s = 0;       // one activation or gradient transfer between neighbours
  double p2p_bandwidth_bps = 0;   // bytes/s of a stage's link (0: latency only)
  double activation_bytes = 0;    // per micro-batch, each direction
  // Data parallelism: `data_parallel` replicas of the pipeline; after its last backward, each stage
  // all-reduces `gradient_bytes[stage]` with the same stage of the other replicas (ring: reduce-scatter
  // then all-gather, 2 (DP - 1) steps of bytes / DP to the next replica).
  int data_parallel = 1;
  std::vector<double> gradient_bytes;  // per stage; empty = no all-reduce
  ClusterSpec cluster;                 // used when data_parallel > 1 or gpus span nodes
  bool use_cluster = false;            // false: the star of p2p_latency_s / p2p_bandwidth_bps links
  // Variation: per GPU (replica * stages + stage) slowdown factor of every computation (empty = 1), and
  // multiplicative per-computation jitter: lognormal with this coefficient of variation, seeded.
  std::vector<double> slowdown;
  double jitter_cv = 0;
  unsigned long long seed = 0;
};

struct PipelineOp {
  bool backward = false;
  int microbatch = 0;
};

// The 1F1B order of one stage: warm-up forwards, then one forward / one backward, then the
// remaining backwards (PipeDream-flush / Megatron-LM).
std::vector<PipelineOp> one_f_one_b(int stage, int stages, int microbatches);
// GPipe: every forward, then every backward (in reverse micro-batch order).
std::vector<PipelineOp> gpipe(int stage, int stages, int microbatches);

std::vector<PipelineOp> schedule_ops(PipelineSchedule s, int stage, int stages, int microbatches);

struct PipelineResult {
  double iteration_s = 0;
  // Per GPU (replica * stages + stage); with one replica, per stage.
  std::vector<double> stage_end_s, stage_busy_s, stage_blocked_s;
  std::vector<double> allreduce_s;  // time in the gradient all-reduce (waiting included)
};

// Throws InputError on an inconsistent workload (sizes, negative durations).
PipelineResult simulate_pipeline(const PipelineWorkload& wl, const std::string& source = "pipeline");

// The same 1F1B pipeline at kernel level: each stage's forward and backward of a micro-batch are
// kernel ranges of that stage's rank (the same kernels for every micro-batch), replayed on the GPU
// model under a policy (per-kernel clock decisions, switch latency, energy) in the GPU's local time;
// the actor meets SimGrid only to receive its input and send its output, and idles (at idle power)
// while it waits.
struct KernelPipeline {
  std::vector<Rank> stages;                                  // one rank program per stage
  std::vector<std::pair<std::size_t, std::size_t>> forward, backward;  // kernel ranges [first, last)
  std::vector<std::pair<std::size_t, std::size_t>> optimizer;  // optional, per stage: after the all-reduce
  int microbatches = 0;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  double p2p_latency_s = 0, p2p_bandwidth_bps = 0, activation_bytes = 0;
  std::size_t annotation_sets = 1;  // size of the workload's annotation-set table the kernels refer to
  // Data parallelism as in PipelineWorkload: replicas run the same stage programs; each stage's GPUs
  // ring-all-reduce gradient_bytes[stage] after their last backward.
  int data_parallel = 1;
  std::vector<double> gradient_bytes;
  ClusterSpec cluster;
  bool use_cluster = false;
  // One replica's GPUs run every kernel this much slower (a straggler pipeline); -1 = none.
  int straggler_replica = -1;
  double straggler_factor = 1.0;
};

struct KernelPipelineResult {
  double iteration_s = 0;
  std::vector<RankOutcome> outcomes;  // per GPU (replica * stages + stage): replay statistics, energy
  std::vector<double> blocked_s;      // per GPU: time waiting for a pipeline input
  std::vector<double> allreduce_s;    // per GPU: time in the gradient all-reduce, waiting included
};

KernelPipelineResult simulate_kernel_pipeline(const KernelPipeline& kp, const GpuModel& model,
                                              const PolicyFactory& make_policy, const ReplayOptions& opts,
                                              const std::string& source = "pipeline");

}  // namespace dvfs
