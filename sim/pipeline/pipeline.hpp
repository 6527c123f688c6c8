#pragma once
// Pipeline-parallel training iterations on SimGrid: one host and one actor per GPU, the forward and
// backward computations of every micro-batch in the schedule's order, activations and gradients sent
// between neighbouring (virtual) stages as SimGrid communications (so a stage waits for its input
// exactly as long as the upstream stage and the link make it), and the data-parallel gradient
// synchronisation as flow-level collectives on a cluster (sim/network/).
//
// Two engines share that skeleton: `simulate_pipeline` runs computations of given durations (e.g.
// measured ones); `simulate_kernel_pipeline` replays each computation's kernels on a GPU model under a
// policy, in the GPU's local time, meeting SimGrid only at communications.
#include "sim/engine/engine.hpp"
#include "sim/network/cluster.hpp"
#include "sim/pipeline/schedule.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dvfs {

struct PipelineWorkload {
  int stages = 0;
  int microbatches = 0;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int chunks = 1;  // model chunks per stage (interleaved schedules)
  // [virtual stage = chunk x stages + stage][micro-batch]
  std::vector<std::vector<double>> forward_s, backward_s;
  double p2p_latency_s = 0;       // one activation or gradient transfer between neighbours
  double p2p_bandwidth_bps = 0;   // bytes/s of a stage's link (0: latency only)
  double activation_bytes = 0;    // per micro-batch, each direction
  // Data parallelism: `data_parallel` replicas of the pipeline; after its last backward, each stage
  // all-reduces `gradient_bytes[stage]` with the same stage of the other replicas.
  int data_parallel = 1;
  std::vector<double> gradient_bytes;  // per stage; empty = no all-reduce
  ClusterSpec cluster;                 // used when use_cluster
  bool use_cluster = false;            // false: the star of p2p_latency_s / p2p_bandwidth_bps links
  // Variation: per GPU (replica * stages + stage) slowdown factor of every computation (empty = 1), and
  // multiplicative per-computation jitter: lognormal with this coefficient of variation, seeded.
  std::vector<double> slowdown;
  double jitter_cv = 0;
  unsigned long long seed = 0;
};

struct PipelineResult {
  double iteration_s = 0;
  // Per GPU (replica * stages + stage); with one replica, per stage.
  std::vector<double> stage_end_s, stage_busy_s, stage_blocked_s;
  std::vector<double> allreduce_s;  // time in the gradient all-reduce (waiting included)
};

// Throws InputError on an inconsistent workload (sizes, negative durations).
PipelineResult simulate_pipeline(const PipelineWorkload& wl, const std::string& source = "pipeline");

// How data-parallel replicas synchronise gradients:
//  - all_reduce (PyTorch DDP, Megatron without the distributed optimizer): gradient buckets are
//    all-reduced; the optimizer updates the whole stage;
//  - reduce_scatter (Megatron's distributed optimizer, ZeRO-1): buckets are reduce-scattered, the
//    optimizer updates this replica's 1/DP shard (its kernels are given scaled), then the updated
//    bf16 parameters are all-gathered (after the optimizer, not overlapped: one iteration is simulated).
enum class GradientSync { all_reduce, reduce_scatter };

// A gradient bucket: complete once the kernels before `end` of its chunk's last backward have run
// (the last micro-batch's backward computes the final gradients, layer by layer).
// The pipeline at kernel level: each stage's forward and backward of a micro-batch are kernel ranges
// of that stage's rank program (the same kernels for every micro-batch), replayed on the GPU model
// under a policy (per-kernel clock decisions, switch latency, energy) in the GPU's local time; the
// actor meets SimGrid only to receive its input, send its output and take part in collectives, and
// idles (at idle power) while it waits.
struct KernelPipeline {
  std::vector<Rank> stages;  // one rank program per stage
  int chunks = 1;            // model chunks per stage (interleaved schedules)
  // Kernel ranges [first, last) per virtual stage (chunk x stages + stage), in that stage's program.
  std::vector<std::pair<std::size_t, std::size_t>> forward, backward;
  std::vector<std::pair<std::size_t, std::size_t>> optimizer;  // optional, per stage: after the gradient sync
  int microbatches = 0;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  double p2p_latency_s = 0, p2p_bandwidth_bps = 0, activation_bytes = 0;
  std::size_t annotation_sets = 1;  // size of the workload's annotation-set table the kernels refer to
  // Data parallelism: replicas run the same stage programs and synchronise gradients with the same
  // stage (and TP rank) of the other replicas: per virtual stage, the buckets of its last backward
  // (`buckets`), or, without buckets, gradient_bytes[stage] after the stage's last backward.
  int data_parallel = 1;
  std::vector<double> gradient_bytes;
  std::vector<std::vector<GradientBucket>> buckets;  // per virtual stage; empty = one bucket per stage at the end
  GradientSync gradient_sync = GradientSync::all_reduce;
  bool overlap_gradient_sync = true;  // buckets start while the backward goes on (false: after the last backward)
  ClusterSpec cluster;
  bool use_cluster = false;
  // Tensor parallelism: 1 = one actor stands for its TP group (kernels that refer to a collective run
  // for the call's closed-form time, which the synthesis put in their duration); > 1 = every TP rank is
  // its own actor and those kernels are collectives among the TP group on the cluster (hosts of one TP
  // group are consecutive slots: one node when it fits). `collectives` is the table they refer to.
  int tp_ranks = 1;
  std::vector<CollectiveCall> collectives;
  // Variation: one replica's GPUs run every kernel this much slower (a straggler pipeline; -1 = none);
  // per GPU slowdown factors (empty = 1; multiply with the straggler's); per-kernel lognormal jitter with
  // this coefficient of variation, each GPU drawing from its own stream seeded from `seed`.
  int straggler_replica = -1;
  double straggler_factor = 1.0;
  std::vector<double> slowdown;
  double jitter_cv = 0;
  unsigned long long seed = 0;
  // Called as each GPU finishes its iteration (progress reports).
  std::function<void(int gpu)> on_gpu_done;
};

struct KernelPipelineResult {
  double iteration_s = 0;
  // Per GPU ((replica * stages + stage) * tp_ranks + tp rank): replay statistics, energy.
  std::vector<RankOutcome> outcomes;
  std::vector<double> blocked_s;    // per GPU: time waiting for a pipeline input
  std::vector<double> allreduce_s;  // per GPU: time waiting for the gradient sync after the last backward
  std::vector<double> collective_s; // per GPU: time in in-program (TP) collectives, waiting included
  // Per GPU: energy drawn while idle, waiting for a pipeline input (intrinsic slack) and for the gradient
  // sync after the last backward (including waiting for stragglers).
  std::vector<double> pipeline_wait_j, sync_wait_j;
};

KernelPipelineResult simulate_kernel_pipeline(const KernelPipeline& kp, const GpuModel& model,
                                              const PolicyFactory& make_policy, const ReplayOptions& opts,
                                              const std::string& source = "pipeline");

}  // namespace dvfs
