#pragma once
// A synthesised transformer training iteration end to end (issue 5, in progress): synthesise the
// stage programs (traces/src/synthesis.hpp), retarget them to the GPU model, replay every pipeline
// replica at kernel level with its transfers and gradient all-reduce on a cluster, and summarise
// compactly (aggregates per stage, not thousands of per-GPU records).
#include "sim/core/json_util.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/src/synthesis.hpp"

#include <string>

namespace dvfs {

struct SyntheticRun {
  std::string model = "gpt3-xl";
  ParallelLayout layout;
  int microbatches = 0;            // per pipeline; 0 = the preset's global batch / (DP x micro-batch)
  std::string gpu = "h200";
  std::string policy = "native";   // max, native, static-best, pass-level, per-kernel
  double budget_pct = 0;           // planned policies: kernel-time slowdown allowed vs each stage's fastest pairs
  std::string recording;           // template recording; "" = traces/recordings/h200-gpt3xl
  ClusterSpec cluster;             // defaults: H100/H200-class node (see .cpp)
  bool auto_allreduce = true;      // pick ring or tree by estimated time (cluster.allreduce otherwise)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int straggler_replica = -1;      // a whole pipeline replica runs slower by straggler_factor
  double straggler_factor = 1.0;
  std::string clock_plan;          // critical-path policy: replay this plan (N.sched.json format) instead of solving
};

ClusterSpec default_cluster(const ParallelLayout& layout);

// A scenario's "synthetic" object: {model, tp, pp, dp, microbatches, schedule (1f1b | gpipe),
// allreduce (auto | ring | tree), straggler {replica, factor}, cluster {gpus_per_node, intra_bw_bps,
// intra_latency_s, inter_bw_bps, inter_latency_s, oversubscription}}, with the scenario's gpu, policy
// (name and budget_pct) and trace (the template recording). Errors name the scenario file and field.
SyntheticRun synthetic_request(const Scenario& sc);

// Result: iteration time, energy (all GPUs, TP groups counted x TP), kernel events, wall time, and
// per stage the mean and max pipeline wait (intrinsic bloat: bubbles and imbalance) and all-reduce
// wait beyond the fastest replica's (extrinsic bloat: waiting for stragglers).
Json run_synthetic(const SyntheticRun& req);
std::string format_synthetic(const Json& result);

}  // namespace dvfs
