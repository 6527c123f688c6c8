#pragma once
// A synthesised transformer training iteration end to end (issue 5, in progress): synthesise the
// stage programs (traces/src/synthesis.hpp), retarget them to the GPU model, replay every pipeline
// replica at kernel level with its transfers and gradient all-reduce on a cluster, and summarise
// compactly (aggregates per stage, not thousands of per-GPU records).
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/src/synthesis.hpp"

#include <string>

namespace dvfs {

struct SyntheticRun {
  std::string source = "synth";    // named in errors: the scenario file, or "synth" (the command line)
  std::string model = "gpt3-xl";
  ParallelLayout layout;
  int gpus = 0;                    // when > 0, must equal TP x CP x PP x DP (a check on the layout)
  int microbatches = 0;            // per pipeline; 0 = the preset's global batch / (DP x micro-batch)
  std::string gpu = "h200";
  std::string policy = "native";   // max, native, static-best, pass-level, per-kernel
  double budget_pct = 0;           // planned policies: kernel-time slowdown allowed vs each stage program under native
  std::string recording;           // template recording; "" = traces/recordings/h200-gpt3xl
  ClusterSpec cluster;             // defaults: H100/H200-class node (see .cpp)
  bool auto_allreduce = true;      // pick ring or tree by estimated time (cluster.allreduce otherwise)
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  // Gradient synchronisation: all-reduce (DDP) or reduce-scatter + parameter all-gather (distributed
  // optimizer), bucketed and overlapped with the last backward unless `overlap_gradient_sync` is off.
  GradientSync gradient_sync = GradientSync::all_reduce;
  bool overlap_gradient_sync = true;
  double bucket_params = 0;        // 0 = Megatron's max(40 M, 1 M x DP)
  double grad_bytes_per_param = 4; // fp32 gradient reduction (Megatron's default for bf16); 2 = bf16
  // Simulate every TP rank as its own GPU, with the TP all-reduces as collectives on the network, instead
  // of one actor per TP group (off by default: the folded result is the same, see tests).
  bool unfold_tp = false;
  bool sequence_parallel = true;   // Megatron's sequence parallelism with TP (see SynthesisOptions)
  bool check_memory = true;        // refuse a layout whose estimated memory per GPU exceeds the GPU's
  bool per_gpu = false;            // add `per_gpu`: one row per simulated GPU (large at scale)
  // Switch latency and seed of every GPU's replay (the scenario's `switch_latency` and `seed`; CLI
  // --latency): overrides of the GPU model's, key by key.
  ReplayOptions replay;
  // Power: every GPU's limit (its firmware loop holds it under any policy; 0 = the model's cap), and a
  // budget on the job's total power (W; 0 = none) judged on NVML's 1 s average polled every 0.5 s, as
  // the power-budget study does (sim/telemetry), over the iteration.
  double power_cap_w = 0;
  double power_budget_w = 0;
  int straggler_replica = -1;      // a whole pipeline replica runs slower by straggler_factor
  double straggler_factor = 1.0;
  std::string clock_plan;          // critical-path policy: replay this plan (N.sched.json format) instead of solving
  Json policy_object = Json::object();  // the scenario's policy object (a pipeline policy's own keys)
  std::optional<ClockPair> policy_clocks;  // static: the scenario's policy.sm_mhz / mem_mhz
  double policy_cap_w = 0;         // native: the scenario's policy.power_cap_w (0 = none)
  std::string chakra_out;          // also write it as per-GPU Chakra execution traces in this directory (docs/chakra.md)
  std::string trace_out;           // also write the simulated iteration as a trace file (sim/results/pipeline_trace.hpp)
  std::vector<int> trace_gpus;     // trace_out: only these simulated GPUs (empty: all)
};


// A scenario's "synthetic" object: {model, gpus, tp, pp, dp, cp, vpp, microbatches, schedule (1f1b |
// gpipe | interleaved-1f1b), allreduce (auto | ring | tree), gradient_sync {mode (all-reduce |
// reduce-scatter), overlap, bucket_params, dtype (fp32 | bf16)}, unfold_tp, straggler {replica, factor},
// cluster {topology (node-backbone | fat-tree | rail), placement (dp-inner | pp-inner), gpus_per_node,
// nodes_per_leaf, intra_bw_bps, intra_latency_s, inter_bw_bps, inter_latency_s, hop_latency_s,
// oversubscription}}, with the scenario's gpu, policy (name and budget_pct) and trace (the template
// recording). Errors name the scenario file and field.
SyntheticRun synthetic_request(const Scenario& sc);

// A synthesised job before any policy: the stage programs as the pipeline engine replays them (one replica), the
// GPU models (the target, and it bound to the workload's kernel names) and the replay options.
struct SynthesizedJob {
  TransformerSpec spec;
  SynthesizedPipeline sp;
  MemoryEstimate mem;
  ClusterSpec cluster;
  Workload wl;
  KernelPipeline kp;
  ReplayOptions opts;
  GpuModel target, bound;
  int T = 1, gpus_per_host = 1;
};
class Progress;
SynthesizedJob synthesize_job(const SyntheticRun& req, Progress* progress = nullptr);

// Result: iteration time, energy (all GPUs, TP groups counted x TP), kernel events, wall time, and
// per stage the mean and max pipeline wait (intrinsic bloat: bubbles and imbalance) and all-reduce
// wait beyond the fastest replica's (extrinsic bloat: waiting for stragglers).
Json run_synthetic(const SyntheticRun& req);
std::string format_synthetic(const Json& result);
// The result's per-GPU rows as CSV (gpu,replica,stage,tp_rank,gpus,energy_per_gpu_j,busy_s,pipeline_wait_s,
// exposed_gradient_sync_s,tp_collective_s,end_s); empty without per_gpu.
std::string per_gpu_csv(const Json& result);

}  // namespace dvfs
