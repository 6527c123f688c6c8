#include "sim/synthetic_run.hpp"

#include "sim/results/pipeline_trace.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/prior_regime.hpp"
#include "models/src/retarget.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/progress.hpp"
#include "sim/core/text_format.hpp"
#include "sim/telemetry/nvml_readout.hpp"
#include "sim/telemetry/window_stats.hpp"
#include "models/src/collective_cost.hpp"
#include "sim/critical_path/pipeline_plans.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/planning/clock_plan.hpp"
#include "sim/policies/native_governor.hpp"
#include "sim/policies/plan_policy.hpp"
#include "sim/policies/policy_factory.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/recording.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <sys/resource.h>

namespace dvfs {

SyntheticRun synthetic_request(const Scenario& sc) {
  JsonReader r(sc.synthetic, sc.file, "synthetic");
  r.only_keys({"model", "gpus", "tp", "pp", "dp", "cp", "vpp", "microbatches", "schedule", "allreduce", "gradient_sync",
               "unfold_tp", "sequence_parallel", "check_memory", "per_gpu", "power", "straggler", "cluster"});
  SyntheticRun req;
  req.model = r.string("model");
  transformer_preset(req.model, sc.file, r.field("model"));  // unknown names fail here
  auto positive_int = [&](const char* key, int fallback) {
    if (!r.has(key)) return fallback;
    const long v = r.integer(key);
    if (v < 1 || v > 1000000) r.fail(key, "expected an integer in [1, 1000000], got " + std::to_string(v));
    return static_cast<int>(v);
  };
  req.layout = {positive_int("tp", 1), positive_int("pp", 1), positive_int("dp", 1), positive_int("cp", 1), positive_int("vpp", 1)};
  req.gpus = positive_int("gpus", 0);
  if (req.gpus > 0 && req.gpus != req.layout.gpus())
    r.fail("gpus", "expected TP x CP x PP x DP = " + std::to_string(req.layout.gpus()) + " GPUs, got " + std::to_string(req.gpus));
  req.microbatches = positive_int("microbatches", 0);
  const std::string schedule = r.string_or("schedule", req.layout.vpp > 1 ? "interleaved-1f1b" : "1f1b");
  if (!pipeline_schedule_from_string(schedule, req.schedule))
    r.fail("schedule", "expected 1f1b, gpipe or interleaved-1f1b, got \"" + schedule + "\"");
  try {  // the scenario file and key in the message, not only the schedule's own field names
    const TransformerSpec spec = transformer_preset(req.model);
    const int m = req.microbatches > 0 ? req.microbatches : spec.global_batch / std::max(1, req.layout.dp * spec.micro_batch);
    check_schedule(req.schedule, req.layout.pp, std::max(1, m), req.layout.vpp, "");
  } catch (const InputError& e) {
    r.fail(e.field() == "microbatches" ? "microbatches" : "schedule", e.problem());
  }
  req.cluster = default_cluster_spec();
  const std::string ar = r.string_or("allreduce", "auto");
  req.auto_allreduce = ar == "auto";
  if (ar == "ring") req.cluster.allreduce = AllReduceAlgorithm::ring;
  else if (ar == "tree") req.cluster.allreduce = AllReduceAlgorithm::tree;
  else if (ar != "auto") r.fail("allreduce", "expected auto, ring or tree, got \"" + ar + "\"");
  if (r.has("gradient_sync")) {
    JsonReader g = r.child("gradient_sync");
    g.only_keys({"mode", "overlap", "bucket_params", "dtype"});
    const std::string mode = g.string_or("mode", "all-reduce");
    if (mode == "reduce-scatter") req.gradient_sync = GradientSync::reduce_scatter;
    else if (mode != "all-reduce") g.fail("mode", "expected all-reduce or reduce-scatter (distributed optimizer), got \"" + mode + "\"");
    req.overlap_gradient_sync = g.boolean_or("overlap", req.overlap_gradient_sync);
    if (g.has("bucket_params")) {  // 1e-9 made ~1e20 buckets
      req.bucket_params = g.number("bucket_params");
      if (!(req.bucket_params >= 1e3 && req.bucket_params <= 1e13))
        g.fail("bucket_params", "expected 1000 to 1e13 parameters per gradient bucket, got " + std::to_string(req.bucket_params));
    }
    const std::string dtype = g.string_or("dtype", "fp32");
    if (dtype == "bf16") req.grad_bytes_per_param = 2;
    else if (dtype != "fp32") g.fail("dtype", "expected fp32 or bf16, got \"" + dtype + "\"");
  }
  req.sequence_parallel = r.boolean_or("sequence_parallel", req.sequence_parallel);
  if (r.has("power")) {
    // {"cap_w": per-GPU limit, "budget_w": the job's budget} (see SyntheticRun)
    JsonReader pw = r.child("power");
    pw.only_keys({"cap_w", "budget_w"});
    if (pw.has("cap_w")) req.power_cap_w = pw.positive("cap_w");
    if (pw.has("budget_w")) req.power_budget_w = pw.positive("budget_w");
  }
  req.per_gpu = r.boolean_or("per_gpu", req.per_gpu);
  req.check_memory = r.boolean_or("check_memory", req.check_memory);
  req.unfold_tp = r.boolean_or("unfold_tp", req.unfold_tp);
  if (r.has("straggler")) {
    JsonReader st = r.child("straggler");
    st.only_keys({"replica", "factor"});
    req.straggler_replica = static_cast<int>(st.integer_in("replica", 0, 1 << 30));
    req.straggler_factor = st.number("factor");
    if (!(req.straggler_factor >= 0.01 && req.straggler_factor <= 100))  // 1e-300 ran a replica in no time
      st.fail("factor", "expected a slowdown factor from 0.01 to 100, got " + std::to_string(req.straggler_factor));
    if (req.straggler_replica < 0 || req.straggler_replica >= req.layout.dp)
      st.fail("replica", "expected a replica index in [0, dp)");
  }
  if (r.has("cluster")) read_cluster_json(r.child("cluster"), req.cluster);
  req.source = sc.file;
  req.replay = sc.replay;
  req.gpu = sc.gpu;
  req.policy = sc.policy.name;
  req.budget_pct = sc.policy.budget_pct;
  req.recording = sc.trace_path;
  req.clock_plan = sc.clock_plan;
  req.policy_object = sc.policy.object;
  req.policy_clocks = sc.policy.clocks;
  req.policy_cap_w = sc.policy.power_cap_w;
  return req;
}

namespace {

constexpr double kPowerBin_s = 0.025;

// The job's power over the iteration (every simulated GPU's timeline x the GPUs it stands for) against a
// budget, as an operator's poller would judge it: NVML's 1 s average read every 0.5 s, and the true mean
// over 0.5 s windows.
Json judge_budget(const KernelPipelineResult& r, int gpus_per_host, double budget_w, double nameplate_w) {
  PowerSeries job;
  job.bin_s = kPowerBin_s;
  for (const auto& o : r.outcomes) {
    const auto& tl = o.meter.timeline();
    if (job.power_w.size() < tl.size()) job.power_w.resize(tl.size(), 0.0);
    for (std::size_t i = 0; i < tl.size(); ++i) job.power_w[i] += tl[i].energy_j / kPowerBin_s * gpus_per_host;
  }
  const std::vector<double> polled = nvml_samples(job, NvmlField::average, 0.5);
  const WindowSummary exact = summarize_windows(nvml_samples(job, NvmlField::exact, 0.5), 0.5, 0.5, budget_w, nameplate_w);
  double mean = 0, peak = 0;
  for (double p : polled) mean += p, peak = std::max(peak, p);
  return {{"budget_w", budget_w},
          {"samples", polled.size()},
          {"nvml_average_violation_rate", violation_rate(polled, budget_w)},
          {"nvml_average_mean_w", polled.empty() ? 0.0 : mean / static_cast<double>(polled.size())},
          {"nvml_average_peak_w", peak},
          {"true_0_5s_violation_rate", exact.violation_rate},
          {"true_0_5s_peak_w", exact.peak_w},
          {"method", "job power = sum of every GPU's simulated power (25 ms bins); NVML's 1 s average polled every 0.5 s "
                     "(sim/telemetry/nvml_readout.hpp) and the true 0.5 s window means, over one iteration"}};
}

// Kernel busy time of a stage program replayed once, alone, under the native governor.
double native_busy_s(const Rank& program, const GpuModel& model, std::size_t annotation_sets) {
  NativeGovernor governor(model);
  ReplayOptions o;
  o.timeline_interval_s = 0;
  EnergyMeter meter(0, annotation_sets, model.sm_clocks_mhz().size(), 0);
  GpuReplayer replayer(program, model, governor, o, meter);
  LocalTime tk;
  replayer.run_kernels(tk, 0, program.kernels.size());
  return meter.busy_s();
}

// Errors name the scenario file and its synthetic.<key>, or the option on the command line.
std::string field_name(const SyntheticRun& req, const std::string& key) {
  if (req.source != "synth") return "synthetic." + key;
  return key == "layout" ? std::string("--tp/--cp/--pp/--dp") : "--" + key;
}

// The layout against the GPUs asked for, and the schedule's chunks (micro-batches are checked later).
void check_layout(const SyntheticRun& req) {
  const ParallelLayout& lay = req.layout;
  if (req.gpus > 0 && req.gpus != lay.gpus())
    throw InputError(req.source, field_name(req, "gpus"), "the layout TP " + std::to_string(lay.tp) + " x CP " + std::to_string(lay.cp) + " x PP " +
                                     std::to_string(lay.pp) + " x DP " + std::to_string(lay.dp) + " = " + std::to_string(lay.gpus()) +
                                     " GPUs does not match the " + std::to_string(req.gpus) + " GPUs asked for");
  check_schedule(req.schedule, lay.pp, lay.pp, lay.vpp, "schedule");  // chunks vs schedule; micro-batches below
}

// The cluster with the target GPU's bandwidths filled in, checked; then the straggler and unfold_tp keys.
ClusterSpec checked_cluster(const SyntheticRun& req, const GpuModel& target) {
  const ParallelLayout& lay = req.layout;
  const ClusterSpec in = resolve_bandwidths(req.cluster, target.specs().interconnect_gbs * 1e9, target.specs().nic_gbs * 1e9);
  if (in.gpus_per_node < 1 || !(in.intra_bw_bps > 0) || !(in.inter_bw_bps > 0) || !(in.oversubscription >= 1) ||
      in.intra_latency_s < 0 || in.inter_latency_s < 0)
    throw InputError(req.source, field_name(req, "cluster"), "expected gpus_per_node >= 1, bandwidths > 0, latencies >= 0 and oversubscription >= 1");
  if (in.inter_bw_bps < 1e6 || in.intra_bw_bps < 1e6 || in.oversubscription > 1e3 || in.inter_latency_s > 1 || in.intra_latency_s > 1)
    throw InputError(req.source, field_name(req, "cluster"), "expected bandwidths >= 1e6 B/s, latencies <= 1 s and oversubscription <= 1000");
  if (req.straggler_replica >= lay.dp || !(req.straggler_factor > 0) || !(req.straggler_factor <= 100))
    throw InputError(req.source, field_name(req, "straggler"), "expected a replica index below DP and a slowdown factor in (0, 100]");
  if (req.unfold_tp && lay.cp > 1) throw InputError(req.source, field_name(req, "unfold_tp"), "simulating every TP rank is not supported with CP > 1");
  return in;
}

// The global batch the micro-batches asked for (none: the preset's).
void apply_microbatches(const SyntheticRun& req, TransformerSpec& spec) {
  if (req.microbatches > 0) {
    const double batch = static_cast<double>(req.microbatches) * req.layout.dp * spec.micro_batch;
    if (batch > 1e8) throw InputError(req.source, field_name(req, "microbatches"), "expected micro-batches x DP x micro-batch size <= 1e8 sequences");
    spec.global_batch = static_cast<int>(batch);
  }
}

SynthesisOptions synthesis_options(const SyntheticRun& req, const ClusterSpec& in) {
  SynthesisOptions so;
  so.nvlink_bw_bps = in.intra_bw_bps;
  so.nvlink_latency_s = in.intra_latency_s;
  so.inter_bw_bps = in.inter_bw_bps;
  so.inter_latency_s = in.inter_latency_s;
  so.gpus_per_node = in.gpus_per_node;
  so.grad_bytes_per_param = req.grad_bytes_per_param;
  so.bucket_params = req.bucket_params;
  so.distributed_optimizer = req.gradient_sync == GradientSync::reduce_scatter;
  so.sequence_parallel = req.sequence_parallel;
  return so;
}

// Micro-batches whose activations the first stage holds at its peak: 1F1B's warm-up plus one, GPipe all.
// The kernels every simulated GPU replays, before replaying them: a million micro-batches ran for an hour.
void check_kernel_events(const SyntheticRun& req, const SynthesizedPipeline& sp) {
  double per_microbatch = 0;
  for (const Rank& stage : sp.stages) per_microbatch += static_cast<double>(stage.kernels.size());
  const double events = per_microbatch * sp.microbatches * req.layout.dp * (req.unfold_tp ? req.layout.tp : 1);
  if (events <= kMaxSyntheticKernelEvents) return;
  std::ostringstream os;
  os << "expected at most " << kMaxSyntheticKernelEvents << " simulated kernel events (README \"Limits and bad input\"); "
     << sp.microbatches << " micro-batches of " << per_microbatch << " kernels over " << sp.stages.size() << " stages x DP "
     << req.layout.dp << (req.unfold_tp ? " x TP" : "") << " come to " << events;
  throw InputError(req.source, field_name(req, "microbatches"), os.str());
}

// GPUs simulated side by side, each an actor (two with its gradient-sync stream), before anything is synthesised:
// 16,384 of them exhausted the process's memory mappings and aborted.
void check_simulated_gpus(const SyntheticRun& req) {
  const ParallelLayout& lay = req.layout;
  const double gpus = static_cast<double>(req.unfold_tp ? lay.tp : 1) * lay.pp * lay.dp;
  if (gpus <= kMaxSimulatedGpus) return;
  std::ostringstream os;
  os << "expected at most " << kMaxSimulatedGpus << " GPUs simulated side by side (README \"Limits and bad input\"): PP " << lay.pp
     << " x DP " << lay.dp << (req.unfold_tp ? " x TP " + std::to_string(lay.tp) : std::string()) << " come to " << gpus
     << " (a TP group folded into one simulated GPU counts once)";
  throw InputError(req.source, field_name(req, "dp"), os.str());
}

int microbatches_in_flight(const SyntheticRun& req, const SynthesizedPipeline& sp) {
  const ParallelLayout& lay = req.layout;
  return req.schedule == PipelineSchedule::gpipe ? sp.microbatches
         : std::min(sp.microbatches * lay.vpp,
                    req.schedule == PipelineSchedule::interleaved_1f1b ? (lay.pp - 1) * 2 + (lay.vpp - 1) * lay.pp + 1 : lay.pp) /
               lay.vpp;
}

void check_memory_fits(const SyntheticRun& req, const MemoryEstimate& mem, const GpuModel& target) {
  const ParallelLayout& lay = req.layout;
  const double memory_gb = target.specs().memory_gb;
  if (req.check_memory && memory_gb > 0 && mem.total_bytes() > memory_gb * 1e9) {
    throw InputError(req.source, field_name(req, "layout"),
                     printf_text("%s with TP %d x CP %d x PP %d x DP %d needs about %.0f GB per GPU (weights %.0f, gradients "
                                 "%.0f, optimizer %.0f, activations %.0f) and the %s holds %.0f GB: use more TP/PP, the "
                                 "distributed optimizer or fewer micro-batches in flight (or turn the check off)",
                                 req.model.c_str(), lay.tp, lay.cp, lay.pp, lay.dp, mem.total_bytes() / 1e9,
                                 mem.weights_bytes / 1e9, mem.gradients_bytes / 1e9, mem.optimizer_bytes / 1e9,
                                 mem.activations_bytes / 1e9, target.name().c_str(), memory_gb));
  }
}

// The cluster of simulated hosts (a node holds gpus_per_node GPUs, a host stands for gpus_per_host) and,
// with allreduce auto, NCCL's choice: the algorithm with the smaller estimated time for the largest bucket.
ClusterSpec simulated_cluster(const SyntheticRun& req, const ClusterSpec& in, const SynthesizedPipeline& sp, int gpus_per_host) {
  const ParallelLayout& lay = req.layout;
  ClusterSpec cs = in;
  cs.gpus_per_node = std::max(1, in.gpus_per_node / gpus_per_host);
  double largest_bucket = 0;
  for (const auto& bs : sp.buckets)
    for (const auto& b : bs) largest_bucket = std::max(largest_bucket, b.bytes);
  if (req.auto_allreduce && lay.dp > 1) {
    const double ring = collective_time_s(CollectiveKind::all_reduce, false, lay.dp, largest_bucket, cs.inter_bw_bps, cs.inter_latency_s);
    const double tree = collective_time_s(CollectiveKind::all_reduce, true, lay.dp, largest_bucket, cs.inter_bw_bps, cs.inter_latency_s);
    cs.allreduce = tree < ring ? AllReduceAlgorithm::tree : AllReduceAlgorithm::ring;
  }
  return cs;
}

KernelPipeline kernel_pipeline(const SyntheticRun& req, const SynthesizedPipeline& sp, const Workload& wl, const ClusterSpec& cs, int T) {
  KernelPipeline kp;
  kp.stages = wl.ranks;
  kp.chunks = sp.chunks;
  kp.forward = sp.forward;
  kp.backward = sp.backward;
  kp.optimizer = sp.optimizer;
  kp.schedule = req.schedule;
  kp.microbatches = sp.microbatches;
  kp.data_parallel = req.layout.dp;
  kp.use_cluster = true;
  kp.cluster = cs;
  kp.activation_bytes = sp.activation_bytes;
  kp.buckets = sp.buckets;
  kp.gradient_sync = req.gradient_sync;
  kp.overlap_gradient_sync = req.overlap_gradient_sync;
  kp.tp_ranks = T;
  kp.collectives = sp.collectives;
  if (req.straggler_replica >= 0 && req.straggler_factor != 1.0) {
    kp.straggler_replica = req.straggler_replica;
    kp.straggler_factor = req.straggler_factor;
  }
  return kp;
}

// Every GPU's replay options: the job's power timeline when there is a budget, the power limit.
ReplayOptions replay_options(const SyntheticRun& req, const GpuModel& target) {
  ReplayOptions opts = req.replay;
  opts.timeline_interval_s = req.power_budget_w > 0 ? kPowerBin_s : 0;  // the job's power, for the budget
  opts.repeat = 1;
  if (req.power_cap_w > 0) {
    if (req.power_cap_w > target.power_cap_w() || req.power_cap_w < target.idle_w())
      throw InputError(req.source, field_name(req, req.source == "synth" ? "power-cap" : "power.cap_w"), "expected a power limit between the " + target.name() + "'s idle power (" +
                                                                   std::to_string(static_cast<int>(target.idle_w())) + " W) and its cap (" +
                                                                   std::to_string(static_cast<int>(target.power_cap_w())) + " W)");
    opts.firmware_cap_w = req.power_cap_w;
  }
  if (!(req.power_budget_w >= 0)) throw InputError(req.source, field_name(req, "power_budget_w"), "expected a budget >= 0 W");
  return opts;
}

// The policy of every GPU, and how long planning took.
struct PolicyChoice {
  PolicyFactory factory;
  double plan_s = 0;
  std::shared_ptr<const KernelPipeline> program;  // a pipeline policy's own program to replay (null: the synthesised one)
};

// Planned policies: a clock plan per stage program, against its kernel time under the native governor
// plus the allowed slowdown (as `compare` plans a trace against its native replay).
PolicyChoice planned_policies(const SyntheticRun& req, const KernelPipeline& kp, const Workload& wl, const GpuModel& bound, int T) {
  if (!(req.budget_pct >= 0)) throw InputError(req.source, field_name(req, "budget_pct"), "expected a slowdown budget >= 0 %");
  const PlanGrouping grouping = req.policy == "per-kernel"   ? PlanGrouping::per_kernel
                                : req.policy == "pass-level" ? PlanGrouping::pass_level
                                                             : PlanGrouping::single;
  PolicyChoice pc;
  auto plans = std::make_shared<std::vector<ClockPlan>>();
  const auto tp0 = std::chrono::steady_clock::now();
  for (const Rank& stage : kp.stages)
    plans->push_back(plan_clocks(wl, stage, bound, grouping, (1.0 + req.budget_pct / 100.0) * native_busy_s(stage, bound, kp.annotation_sets)));
  pc.plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tp0).count();
  const int S = req.layout.pp;
  const std::string policy = req.policy;
  pc.factory = [plans, &kp, policy, T, S](int g) {
    const std::size_t s = static_cast<std::size_t>((g / T) % S);
    return std::make_unique<PlanPolicy>(policy, kp.stages[s], (*plans)[s].pairs, (*plans)[s].pair_index_per_kernel());
  };
  return pc;
}

// Critical-path policies (their plans made from this pipeline by sim/critical_path, described in
// `critical_path`), planned policies, or an online one; `opts` gets the firmware power limit where it runs.
PolicyChoice choose_policy(const SyntheticRun& req, const KernelPipeline& kp, const Workload& wl, const GpuModel& bound, int T,
                           ReplayOptions& opts, Json& critical_path) {
  const bool planned = req.policy == "per-kernel" || req.policy == "pass-level" || req.policy == "static-best";
  PolicyChoice pc;
  const PolicyEntry* entry = policy_registry().find(req.policy);
  if (entry && entry->kind == PolicyKind::pipeline && entry->plan_pipeline) {  // the registry's pipeline policies
    PipelinePlanRequest q;
    q.pipeline = &kp;
    q.names = &wl.names;
    q.model = &bound;
    q.opts = &opts;
    q.spec.name = req.policy;
    q.spec.budget_pct = req.budget_pct;
    q.spec.object = req.policy_object;
    q.clock_plan = req.clock_plan;
    opts.firmware_power_cap = true;
    const auto tp0 = std::chrono::steady_clock::now();
    PipelinePlan plan = entry->plan_pipeline(q);
    pc.factory = std::move(plan.factory);
    pc.program = std::move(plan.program);
    critical_path = std::move(plan.report);
    pc.plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tp0).count();
  } else if (planned) {
    pc = planned_policies(req, kp, wl, bound, T);
    opts.firmware_power_cap = true;
  } else {
    PolicySpec ps;
    ps.name = req.policy;
    ps.clocks = req.policy_clocks;
    // native is that firmware loop itself: the scenario's policy cap, else synthetic.power.cap_w
    if (req.policy == "native") ps.power_cap_w = req.policy_cap_w > 0 ? req.policy_cap_w : req.power_cap_w;
    else if (req.power_cap_w > 0) opts.firmware_power_cap = true;
    pc.factory = make_policy_factory(ps, bound, req.source);
  }
  return pc;
}

// Per stage, over its replicas and (simulated) TP ranks; each host's energy counts for the GPUs it stands for.
struct StageTotals {
  double energy = 0, events = 0, intrinsic = 0, extrinsic = 0, exposed_sync = 0, pipeline_wait_j = 0, sync_wait_j = 0;
  double end_wait_s = 0, end_wait_j = 0;  // idle after the GPU's own end until the iteration's
  Json stages = Json::array();
};

StageTotals stage_totals(const KernelPipelineResult& r, int S, int DP, int T) {
  StageTotals tot;
  for (int s = 0; s < S; ++s) {
    double e = 0, wait_sum = 0, wait_max = 0, ar_min = 1e300, ar_max = 0, ext = 0;
    auto each = [&](auto&& f) {
      for (int d = 0; d < DP; ++d)
        for (int t = 0; t < T; ++t) f(static_cast<std::size_t>((d * S + s) * T + t));
    };
    each([&](std::size_t g) { ar_min = std::min(ar_min, r.allreduce_s[g]); });
    each([&](std::size_t g) {
      e += r.outcomes[g].meter.total_j();
      tot.events += static_cast<double>(r.outcomes[g].stats.kernel_events);
      wait_sum += r.blocked_s[g];
      wait_max = std::max(wait_max, r.blocked_s[g]);
      ar_max = std::max(ar_max, r.allreduce_s[g]);
      ext += r.allreduce_s[g] - ar_min;
      tot.exposed_sync += r.allreduce_s[g];
      tot.pipeline_wait_j += r.pipeline_wait_j[g];
      tot.sync_wait_j += r.sync_wait_j[g];
      tot.end_wait_s += r.outcomes[g].meter.waiting_s();
      tot.end_wait_j += r.outcomes[g].meter.waiting_j();
    });
    tot.energy += e;
    tot.intrinsic += wait_sum;
    tot.extrinsic += ext;
    const double hosts = DP * T;
    tot.stages.push_back({{"stage", s}, {"energy_per_gpu_j", e / hosts}, {"pipeline_wait_mean_s", wait_sum / hosts},
                          {"pipeline_wait_max_s", wait_max}, {"allreduce_min_s", ar_min}, {"allreduce_max_s", ar_max},
                          {"straggler_wait_s", ext / hosts}});
  }
  return tot;
}

// One row per simulated GPU: index, replica, stage, TP rank, GPUs it stands for, energy, busy, waits, end.
Json per_gpu_rows(const KernelPipelineResult& r, int S, int DP, int T, int gpus_per_host) {
  Json per_gpu = Json::array();
  for (int g = 0; g < S * DP * T; ++g) {
    const auto gi = static_cast<std::size_t>(g);
    per_gpu.push_back({g, g / (T * S), (g / T) % S, g % T, gpus_per_host, r.outcomes[gi].meter.total_j(),
                       r.outcomes[gi].meter.busy_s(), r.blocked_s[gi], r.allreduce_s[gi], r.collective_s[gi], r.outcomes[gi].stats.end_s});
  }
  return per_gpu;
}

std::string simulated_note(const SyntheticRun& req, int T) {
  return std::string(T > 1 ? "every TP rank a GPU of its own, TP all-reduces as collectives on NVLink; "
                           : "one actor per TP x CP group (its GPUs run the same stream at the same clocks; "
                             "energy x TP x CP); ") +
         "PP transfers and the DP gradient sync (" +
         (req.overlap_gradient_sync ? "buckets overlapped with the last backward" : "after the last backward") +
         ") are SimGrid communications; embedding and head on the first and last virtual stage, optimizer "
         "after the gradient sync";
}

}  // namespace

std::string per_gpu_csv(const Json& result) {
  if (!result.contains("per_gpu") || result["per_gpu"].empty()) return "";
  std::ostringstream os;
  os << "gpu,replica,stage,tp_rank,gpus,energy_per_gpu_j,busy_s,pipeline_wait_s,exposed_gradient_sync_s,tp_collective_s,end_s\n";
  char buf[256];
  for (const auto& row : result["per_gpu"]) {
    std::snprintf(buf, sizeof buf, "%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", row[0].get<int>(), row[1].get<int>(), row[2].get<int>(),
                  row[3].get<int>(), row[4].get<int>(), row[5].get<double>(), row[6].get<double>(), row[7].get<double>(),
                  row[8].get<double>(), row[9].get<double>(), row[10].get<double>());
    os << buf;
  }
  return os.str();
}

SynthesizedJob synthesize_job(const SyntheticRun& req, Progress* progress) {
  const ParallelLayout& lay = req.layout;
  check_layout(req);
  SynthesizedJob job;
  job.target = load_gpu_model(req.gpu, "", "gpu");
  const GpuModel& target = job.target;
  const ClusterSpec in = checked_cluster(req, target);
  if (progress) progress->note("loading the template recording");
  check_simulated_gpus(req);
  const std::string recording = req.recording.empty() ? data_dir() + "/traces/recordings/h200-gpt3xl" : req.recording;
  job.spec = transformer_preset(req.model);
  const Recording rec = load_recording(recording, Classifier::load_default());
  const LayerTemplate tpl = extract_layer_template(rec.workload, rec.run.value("run", Json::object()), recording);
  apply_microbatches(req, job.spec);
  if (progress) progress->note("synthesising the stage programs");
  const SynthesisOptions so = synthesis_options(req, in);
  job.sp = synthesize_pipeline(tpl, job.spec, lay, so, req.model);
  check_schedule(req.schedule, lay.pp, job.sp.microbatches, lay.vpp, "microbatches");
  job.mem = estimate_memory(job.spec, lay, so, std::max(1, microbatches_in_flight(req, job.sp)));
  check_memory_fits(req, job.mem, target);
  check_kernel_events(req, job.sp);
  // Simulated hosts: one per TP x CP group (folded) or per TP rank; a node holds gpus_per_node GPUs.
  job.T = req.unfold_tp ? lay.tp : 1;
  job.gpus_per_host = lay.tp * lay.cp / job.T;
  job.cluster = simulated_cluster(req, in, job.sp, job.gpus_per_host);
  job.wl.names = job.sp.names;
  job.wl.ranks = job.sp.stages;
  if (target.name() != "h200") retarget_workload(job.wl, load_gpu_model("h200"), target);
  job.kp = kernel_pipeline(req, job.sp, job.wl, job.cluster, job.T);
  job.opts = replay_options(req, target);
  if (!req.trace_out.empty()) {  // the trace export needs each activity and a power and clock timeline
    job.opts.record_activities = true;
    if (job.opts.timeline_interval_s <= 0) job.opts.timeline_interval_s = 0.01;
  }
  if (!req.chakra_out.empty()) job.opts.record_activities = true;
  job.bound = bound_to_workload(target, job.wl);
  return job;
}

Json run_synthetic(const SyntheticRun& req) {
  const auto t0 = std::chrono::steady_clock::now();
  const ParallelLayout& lay = req.layout;
  check_layout(req);
  // On a terminal: what is being done, then the GPUs that finished their iteration.
  Progress progress("synth " + req.model, static_cast<std::size_t>(lay.pp * lay.dp * (req.unfold_tp ? lay.tp : 1)));
  SynthesizedJob job = synthesize_job(req, &progress);
  const TransformerSpec& spec = job.spec;
  const SynthesizedPipeline& sp = job.sp;
  const MemoryEstimate& mem = job.mem;
  const ClusterSpec& cs = job.cluster;
  const Workload& wl = job.wl;
  KernelPipeline& kp = job.kp;
  ReplayOptions& opts = job.opts;
  const GpuModel& target = job.target;
  const GpuModel& bound = job.bound;
  const int T = job.T, gpus_per_host = job.gpus_per_host;
  const auto t1 = std::chrono::steady_clock::now();
  const int S = lay.pp, DP = lay.dp;
  Json critical_path;  // sim/critical_path makes the critical-path policies' plans from this pipeline
  const PolicyChoice policy = choose_policy(req, kp, wl, bound, T, opts, critical_path);
  progress.note("replaying every GPU");
  kp.on_gpu_done = [&](int) { progress.advance(1, "GPUs done"); };
  KernelPipeline replayed;
  if (policy.program) {
    replayed = *policy.program;
    replayed.on_gpu_done = kp.on_gpu_done;
  }
  const KernelPipelineResult r = simulate_kernel_pipeline(policy.program ? replayed : kp, bound, policy.factory, opts, req.model);
  progress.finish();
  const double replay_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();

  const StageTotals tot = stage_totals(r, S, DP, T);
  std::size_t buckets = 0;
  for (const auto& bs : sp.buckets) buckets += bs.size();
  Json budget;
  if (req.power_budget_w > 0) budget = judge_budget(r, gpus_per_host, req.power_budget_w, target.power_cap_w() * lay.gpus());
  const Json per_gpu = req.per_gpu ? per_gpu_rows(r, S, DP, T, gpus_per_host) : Json::array();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const int hosts = S * DP * T;
  Json out = {{"model", spec.name},
          {"layout", {{"tp", lay.tp}, {"pp", S}, {"dp", DP}, {"cp", lay.cp}, {"vpp", lay.vpp}}},
          {"schedule", to_string(req.schedule)},
          {"allreduce", to_string(cs.allreduce)},
          {"topology", to_string(cs.topology)},
          {"gradient_sync", {{"mode", req.gradient_sync == GradientSync::reduce_scatter ? "reduce-scatter" : "all-reduce"},
                             {"overlap", req.overlap_gradient_sync},
                             {"buckets_per_pipeline", buckets},
                             {"bytes_per_param", req.grad_bytes_per_param}}},
          {"gpus", lay.gpus()},
          {"memory_per_gpu_gb", {{"estimate", mem.total_bytes() / 1e9}, {"weights", mem.weights_bytes / 1e9},
                                 {"gradients", mem.gradients_bytes / 1e9}, {"optimizer", mem.optimizer_bytes / 1e9},
                                 {"activations", mem.activations_bytes / 1e9}, {"gpu_memory", target.specs().memory_gb},
                                 {"method", "Korthikanti et al. (MLSys 2023) with sequence parallelism and flash attention"}}},
          {"actors", hosts},
          {"microbatches_per_pipeline", sp.microbatches},
          {"tokens_per_microbatch", spec.micro_batch * spec.seq},
          {"gpu_model", target.name()},
          {"policy", req.policy},
          {"iteration_s", r.iteration_s},
          {"tokens_per_s", static_cast<double>(sp.microbatches) * DP * spec.micro_batch * spec.seq / r.iteration_s},
          {"energy_j", tot.energy * gpus_per_host},
          {"energy_per_gpu_j", tot.energy / hosts},
          {"intrinsic_wait_gpu_s", tot.intrinsic * gpus_per_host},
          {"extrinsic_wait_gpu_s", tot.extrinsic * gpus_per_host},
          {"exposed_gradient_sync_gpu_s", tot.exposed_sync * gpus_per_host},
          // Energy drawn while waiting: in the pipeline (intrinsic slack: bubbles and imbalance) and on the
          // gradient sync (communication not hidden, and waiting for stragglers).
          {"pipeline_wait_energy_j", tot.pipeline_wait_j * gpus_per_host},
          {"gradient_sync_wait_energy_j", tot.sync_wait_j * gpus_per_host},
          // and after a GPU's last operation until the iteration's last GPU ends (its gradient sync done first)
          {"iteration_end_wait_gpu_s", tot.end_wait_s * gpus_per_host},
          {"iteration_end_wait_energy_j", tot.end_wait_j * gpus_per_host},
          {"kernel_events", tot.events},
          {"kernels_per_stage_microbatch", sp.kernels_per_microbatch},
          {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
          {"replay_s", replay_s},
          {"plan_s", policy.plan_s},
          {"budget_pct", req.budget_pct},
          {"peak_rss_mib", static_cast<double>(ru.ru_maxrss) / 1024.0},
          {"stages", tot.stages},
          {"per_gpu", per_gpu},
          {"power_budget", budget},
          {"simulated", simulated_note(req, T)}};
  if (!critical_path.is_null()) out["critical_path"] = critical_path;
  if (!req.trace_out.empty()) {
    PipelineTraceRequest ptr{&kp, &r, &wl.names, S, gpus_per_host, target.name(), target.sm_count(),
                             {{"model", spec.name}, {"gpu_model", target.name()}, {"policy", req.policy}, {"gpus", lay.gpus()}},
                             req.trace_gpus};
    out["trace_export"] = write_pipeline_trace(ptr, req.trace_out);
  }
  if (!req.chakra_out.empty()) {
    PipelineTraceRequest ptr{&kp, &r, &wl.names, S, gpus_per_host, target.name(), target.sm_count(), Json::object(), {}};
    out["chakra_export"] = write_pipeline_chakra(ptr, req.chakra_out);
  }
  return out;
}

std::string format_synthetic(const Json& j) {
  std::ostringstream os;
  char buf[512];
  const Json& l = j["layout"];
  std::string layout = "TP " + std::to_string(l["tp"].get<int>());
  if (l["cp"].get<int>() > 1) layout += " x CP " + std::to_string(l["cp"].get<int>());
  layout += " x PP " + std::to_string(l["pp"].get<int>());
  if (l["vpp"].get<int>() > 1) layout += " (x " + std::to_string(l["vpp"].get<int>()) + " chunks)";
  layout += " x DP " + std::to_string(l["dp"].get<int>());
  os << printf_text("synth %s: %s = %d GPUs (%d actors), %d micro-batches of %d tokens per pipeline, %s, %s, policy %s\n",
                    j["model"].get<std::string>().c_str(), layout.c_str(), j["gpus"].get<int>(), j["actors"].get<int>(),
                    j["microbatches_per_pipeline"].get<int>(), j["tokens_per_microbatch"].get<int>(),
                    j["schedule"].get<std::string>().c_str(), j["gpu_model"].get<std::string>().c_str(),
                    j["policy"].get<std::string>().c_str());
  const Json& g = j["gradient_sync"];
  std::snprintf(buf, sizeof buf, "  network %s, DP gradient %s (%s, %zu buckets per pipeline, %s %s)\n", j["topology"].get<std::string>().c_str(),
                g["mode"].get<std::string>().c_str(), j["allreduce"].get<std::string>().c_str(), g["buckets_per_pipeline"].get<std::size_t>(),
                g["bytes_per_param"].get<double>() == 4 ? "fp32" : "bf16",
                g["overlap"].get<bool>() ? "overlapped with the last backward" : "after the last backward");
  os << buf;
  std::snprintf(buf, sizeof buf,
                "  iteration %.3f s, energy %.2f MJ (%.2f kJ per GPU); GPU-seconds waiting: %.1f in the pipeline (%.1f kJ), %.1f "
                "on the exposed gradient sync (%.1f kJ; %.1f GPU-s of it for stragglers), %.1f after the GPU's end until the "
                "iteration's (%.1f kJ)\n",
                j["iteration_s"].get<double>(), j["energy_j"].get<double>() / 1e6, j["energy_per_gpu_j"].get<double>() / 1e3,
                j["intrinsic_wait_gpu_s"].get<double>(), j["pipeline_wait_energy_j"].get<double>() / 1e3,
                j["exposed_gradient_sync_gpu_s"].get<double>(), j["gradient_sync_wait_energy_j"].get<double>() / 1e3,
                j["extrinsic_wait_gpu_s"].get<double>(), j.value("iteration_end_wait_gpu_s", 0.0),
                j.value("iteration_end_wait_energy_j", 0.0) / 1e3);
  os << buf;
  os << "  stage  kJ/GPU  pipeline wait mean/max s  exposed grad sync min/max s  straggler wait s\n";
  for (const auto& s : j["stages"]) {
    std::snprintf(buf, sizeof buf, "  %5d %7.2f %12.3f / %-8.3f %15.3f / %-11.3f %10.3f\n", s["stage"].get<int>(),
                  s["energy_per_gpu_j"].get<double>() / 1e3, s["pipeline_wait_mean_s"].get<double>(),
                  s["pipeline_wait_max_s"].get<double>(), s["allreduce_min_s"].get<double>(), s["allreduce_max_s"].get<double>(),
                  s["straggler_wait_s"].get<double>());
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "  %.2e kernel events (%.0f per stage and micro-batch); wall %.2f s (replay %.2f s), peak memory %.0f MiB\n",
                j["kernel_events"].get<double>(), j["kernels_per_stage_microbatch"].get<double>(), j["wall_s"].get<double>(),
                j["replay_s"].get<double>(), j["peak_rss_mib"].get<double>());
  os << buf << "  simulated: " << j["simulated"].get<std::string>() << "\n";
  if (j.contains("power_budget") && j["power_budget"].is_object()) {
    const Json& b = j["power_budget"];
    std::snprintf(buf, sizeof buf,
                  "  power budget %.1f kW: %.1f %% of %zu NVML 1 s-average samples over it (true 0.5 s means: %.1f %%); mean %.1f kW, "
                  "peak %.1f kW; %.0f tokens/s\n",
                  b["budget_w"].get<double>() / 1e3, 100 * b["nvml_average_violation_rate"].get<double>(), b["samples"].get<std::size_t>(),
                  100 * b["true_0_5s_violation_rate"].get<double>(), b["nvml_average_mean_w"].get<double>() / 1e3,
                  b["nvml_average_peak_w"].get<double>() / 1e3, j["tokens_per_s"].get<double>());
    os << buf;
  }
  if (j.contains("critical_path") && j["critical_path"].contains("replicas"))
    for (const auto& rep : j["critical_path"]["replicas"]) {
      // The plan's own DAG figures: one pipeline, one GPU per stage.
      std::snprintf(buf, sizeof buf,
                    "  critical-path plan (%s): target %.3f s; planned %.3f s and %.1f kJ per pipeline GPU set vs all-max %.3f s and %.1f kJ\n",
                    rep.value("which", std::string("?")).c_str(), rep.value("target_s", 0.0), rep.value("iteration_s", 0.0),
                    rep.value("energy_j", 0.0) / 1e3, rep["all_max"].value("iteration_s", 0.0), rep["all_max"].value("energy_j", 0.0) / 1e3);
      os << buf;
    }
  if (j.contains("chakra_export")) {
    const Json& t = j["chakra_export"];
    os << printf_text("chakra: %s (%.0f ranks, %.0f nodes, %.1f MB, written in %.2f s, %.2f s CPU)\n",
                      t["files"].get<std::string>().c_str(), t["ranks"].get<double>(), t["nodes"].get<double>(),
                      t["bytes"].get<double>() / 1e6, t["seconds"].get<double>(), t["cpu_s"].get<double>());
  }
  if (j.contains("trace_export")) {
    const Json& t = j["trace_export"];
    os << printf_text("trace: %s (%.0f events, %.1f MB of JSON, %.1f MB on disk, written in %.2f s, %.2f s CPU)\n",
                      t["file"].get<std::string>().c_str(), t["events"].get<double>(), t["bytes"].get<double>() / 1e6,
                      t["file_bytes"].get<double>() / 1e6, t["seconds"].get<double>(), t["cpu_s"].get<double>());
  }
  return os.str();
}

}  // namespace dvfs
