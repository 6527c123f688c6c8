#include "sim/pipeline/synthetic_run.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/retarget.hpp"
#include "sim/core/errors.hpp"
#include "sim/critical_path/pipeline_plans.hpp"
#include "sim/planning/clock_plan.hpp"
#include "sim/policies/plan_policy.hpp"
#include "sim/policies/policy_factory.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/recording.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <sys/resource.h>

namespace dvfs {

ClusterSpec default_cluster(const ParallelLayout& layout) {
  ClusterSpec c;
  // One actor per TP group; a node holds 8 GPUs, so 8 / TP groups per node.
  c.gpus_per_node = std::max(1, 8 / layout.tp);
  c.intra_bw_bps = 450e9;   // NVLink 4 per GPU and direction (H100/H200 SXM datasheet: 900 GB/s total)
  c.intra_latency_s = 5e-6;
  c.inter_bw_bps = 50e9;    // InfiniBand NDR, 400 Gb/s, one NIC per GPU (rail-optimised)
  c.inter_latency_s = 5e-6;
  c.oversubscription = 1;
  return c;
}

SyntheticRun synthetic_request(const Scenario& sc) {
  JsonReader r(sc.synthetic, sc.file, "synthetic");
  r.only_keys({"model", "tp", "pp", "dp", "microbatches", "schedule", "allreduce", "straggler", "cluster"});
  SyntheticRun req;
  req.model = r.string("model");
  transformer_preset(req.model);  // unknown names fail here
  auto positive_int = [&](const char* key, int fallback) {
    if (!r.has(key)) return fallback;
    const long v = r.integer(key);
    if (v < 1 || v > 1000000) r.fail(key, "expected a positive integer");
    return static_cast<int>(v);
  };
  req.layout = {positive_int("tp", 1), positive_int("pp", 1), positive_int("dp", 1)};
  req.microbatches = positive_int("microbatches", 0);
  const std::string schedule = r.string_or("schedule", "1f1b");
  if (schedule == "gpipe") req.schedule = PipelineSchedule::gpipe;
  else if (schedule != "1f1b") r.fail("schedule", "expected 1f1b or gpipe, got \"" + schedule + "\"");
  req.cluster = default_cluster(req.layout);
  const std::string ar = r.string_or("allreduce", "auto");
  req.auto_allreduce = ar == "auto";
  if (ar == "ring") req.cluster.allreduce = AllReduceAlgorithm::ring;
  else if (ar == "tree") req.cluster.allreduce = AllReduceAlgorithm::tree;
  else if (ar != "auto") r.fail("allreduce", "expected auto, ring or tree, got \"" + ar + "\"");
  if (r.has("straggler")) {
    JsonReader st = r.child("straggler");
    st.only_keys({"replica", "factor"});
    req.straggler_replica = static_cast<int>(st.integer("replica"));
    req.straggler_factor = st.positive("factor");
    if (req.straggler_replica < 0 || req.straggler_replica >= req.layout.dp)
      st.fail("replica", "expected a replica index in [0, dp)");
  }
  if (r.has("cluster")) {
    JsonReader c = r.child("cluster");
    c.only_keys({"gpus_per_node", "intra_bw_bps", "intra_latency_s", "inter_bw_bps", "inter_latency_s", "oversubscription"});
    if (c.has("gpus_per_node")) {
      const long g = c.integer("gpus_per_node");
      if (g < 1) c.fail("gpus_per_node", "expected a positive integer");
      req.cluster.gpus_per_node = static_cast<int>(g);
    }
    if (c.has("intra_bw_bps")) req.cluster.intra_bw_bps = c.positive("intra_bw_bps");
    if (c.has("inter_bw_bps")) req.cluster.inter_bw_bps = c.positive("inter_bw_bps");
    if (c.has("intra_latency_s")) req.cluster.intra_latency_s = c.non_negative("intra_latency_s");
    if (c.has("inter_latency_s")) req.cluster.inter_latency_s = c.non_negative("inter_latency_s");
    if (c.has("oversubscription")) {
      req.cluster.oversubscription = c.positive("oversubscription");
      if (req.cluster.oversubscription < 1) c.fail("oversubscription", "expected >= 1");
    }
  }
  req.gpu = sc.gpu;
  req.policy = sc.policy.name;
  req.budget_pct = sc.policy.budget_pct;
  req.recording = sc.trace_path;
  req.clock_plan = sc.clock_plan;
  return req;
}

Json run_synthetic(const SyntheticRun& req) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string recording = req.recording.empty() ? data_dir() + "/traces/recordings/h200-gpt3xl" : req.recording;
  TransformerSpec spec = transformer_preset(req.model);
  const Recording rec = load_recording(recording, Classifier::load_default());
  const LayerTemplate tpl = extract_layer_template(rec.workload, rec.run.value("run", Json::object()), recording);
  if (req.microbatches > 0) {
    const double batch = static_cast<double>(req.microbatches) * req.layout.dp * spec.micro_batch;
    if (batch > 1e8) throw InputError("microbatches", "", "expected micro-batches x DP x micro-batch size <= 1e8 sequences");
    spec.global_batch = static_cast<int>(batch);
  }
  const SynthesizedPipeline sp = synthesize_pipeline(tpl, spec, req.layout, {}, req.model);
  const GpuModel target = load_gpu_model(req.gpu, "", "gpu");
  ClusterSpec cs = req.cluster;
  if (req.auto_allreduce && req.layout.dp > 1) {
    // As NCCL does: the algorithm with the smaller estimated time for this gradient size. Ring:
    // 2 (DP - 1) latencies + 2 (DP - 1) / DP x bytes / bandwidth; tree: 2 x depth latencies + about
    // 4 x bytes / bandwidth (inner replicas receive two children's chunks on one link).
    const double bytes = *std::max_element(sp.gradient_bytes.begin(), sp.gradient_bytes.end());
    const double dp = req.layout.dp, depth = std::ceil(std::log2(dp + 1));
    const double ring = 2 * (dp - 1) * cs.inter_latency_s + 2 * (dp - 1) / dp * bytes / cs.inter_bw_bps;
    const double tree = 2 * depth * cs.inter_latency_s + 4 * bytes / cs.inter_bw_bps;
    cs.allreduce = tree < ring ? AllReduceAlgorithm::tree : AllReduceAlgorithm::ring;
  }
  if (cs.gpus_per_node < 1 || !(cs.intra_bw_bps > 0) || !(cs.inter_bw_bps > 0) || !(cs.oversubscription >= 1) ||
      cs.intra_latency_s < 0 || cs.inter_latency_s < 0)
    throw InputError("cluster", "", "expected gpus_per_node >= 1, bandwidths > 0, latencies >= 0 and oversubscription >= 1");
  if (req.straggler_replica >= req.layout.dp || !(req.straggler_factor > 0) || !(req.straggler_factor <= 100))
    throw InputError("straggler", "", "expected a replica index below DP and a slowdown factor in (0, 100]");
  if (req.cluster.inter_bw_bps < 1e6 || req.cluster.intra_bw_bps < 1e6 || req.cluster.oversubscription > 1e3 ||
      req.cluster.inter_latency_s > 1 || req.cluster.intra_latency_s > 1)
    throw InputError("cluster", "", "expected bandwidths >= 1e6 B/s, latencies <= 1 s and oversubscription <= 1000");
  Workload wl;
  wl.names = sp.names;
  wl.ranks = sp.stages;
  if (target.name() != "h200") retarget_workload(wl, load_gpu_model("h200"), target);
  KernelPipeline kp;
  kp.stages = wl.ranks;
  kp.forward = sp.forward;
  kp.backward = sp.backward;
  kp.optimizer = sp.optimizer;
  kp.schedule = req.schedule;
  kp.microbatches = sp.microbatches;
  kp.data_parallel = req.layout.dp;
  kp.use_cluster = true;
  kp.cluster = cs;
  kp.activation_bytes = sp.activation_bytes;
  kp.gradient_bytes = sp.gradient_bytes;
  if (req.straggler_replica >= 0 && req.straggler_factor != 1.0) {
    kp.straggler_replica = req.straggler_replica;
    kp.straggler_factor = req.straggler_factor;
  }
  ReplayOptions opts;
  opts.timeline_interval_s = 0;
  const GpuModel bound = target.bound_to(wl.names);
  const auto t1 = std::chrono::steady_clock::now();
  PolicyFactory factory;
  double plan_s = 0;
  const bool planned = req.policy == "per-kernel" || req.policy == "pass-level" || req.policy == "static-best";
  std::vector<ClockPlan> plans;
  Json critical_path;  // sim/critical_path makes the critical-path policies' plans from this pipeline
  if (critical_path_handles(req.policy, kp.straggler_replica)) {
    CriticalPathSettings cps;
    cps.policy = req.policy;
    cps.slowdown_pct = req.budget_pct;
    cps.clock_plan = req.clock_plan;
    opts.firmware_power_cap = true;
    const auto tp0 = std::chrono::steady_clock::now();
    factory = critical_path_factory(kp, wl.names, bound, opts, cps, critical_path);
    plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tp0).count();
  } else if (planned) {
    if (kp.straggler_replica >= 0)
      throw InputError("policy", "", "planned policies with a straggler replica are not supported yet");
    if (!(req.budget_pct >= 0)) throw InputError("budget_pct", "", "expected a slowdown budget >= 0 %");
    const PlanGrouping grouping = req.policy == "per-kernel"   ? PlanGrouping::per_kernel
                                  : req.policy == "pass-level" ? PlanGrouping::pass_level
                                                               : PlanGrouping::single;
    const auto tp0 = std::chrono::steady_clock::now();
    for (const Rank& stage : kp.stages) {
      // Budget: the stage's kernel time at its fastest offered pairs, plus the allowed slowdown.
      const double fastest = plan_clocks(wl, stage, bound, grouping, 1e30).fastest_kernel_time_s;
      plans.push_back(plan_clocks(wl, stage, bound, grouping, (1.0 + req.budget_pct / 100.0) * fastest));
    }
    plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tp0).count();
    opts.firmware_power_cap = true;
    factory = [&](int g) {
      const std::size_t s = static_cast<std::size_t>(g % req.layout.pp);
      return std::make_unique<PlanPolicy>(req.policy, kp.stages[s], plans[s].pairs, plans[s].pair_index_per_kernel());
    };
  } else {
    PolicySpec ps;
    ps.name = req.policy;
    factory = make_policy_factory(ps, bound, "policy");
  }
  const KernelPipelineResult r = simulate_kernel_pipeline(kp, bound, factory, opts, req.model);
  const double replay_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();

  const int S = req.layout.pp, DP = req.layout.dp, TP = req.layout.tp;
  double energy = 0, events = 0, intrinsic = 0, extrinsic = 0;
  Json stages = Json::array();
  for (int s = 0; s < S; ++s) {
    double e = 0, wait_sum = 0, wait_max = 0, ar_min = 1e300, ar_max = 0, ext = 0;
    for (int d = 0; d < DP; ++d) ar_min = std::min(ar_min, r.allreduce_s[static_cast<std::size_t>(d * S + s)]);
    for (int d = 0; d < DP; ++d) {
      const std::size_t g = static_cast<std::size_t>(d * S + s);
      e += r.outcomes[g].meter.total_j();
      events += static_cast<double>(r.outcomes[g].stats.kernel_events);
      wait_sum += r.blocked_s[g];
      wait_max = std::max(wait_max, r.blocked_s[g]);
      ar_max = std::max(ar_max, r.allreduce_s[g]);
      ext += r.allreduce_s[g] - ar_min;
    }
    energy += e;
    intrinsic += wait_sum;
    extrinsic += ext;
    stages.push_back({{"stage", s}, {"energy_per_gpu_j", e / DP}, {"pipeline_wait_mean_s", wait_sum / DP},
                      {"pipeline_wait_max_s", wait_max}, {"allreduce_min_s", ar_min}, {"allreduce_max_s", ar_max},
                      {"straggler_wait_s", ext / DP}});
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  Json out = {{"model", spec.name},
          {"layout", {{"tp", TP}, {"pp", S}, {"dp", DP}}},
          {"schedule", req.schedule == PipelineSchedule::gpipe ? "gpipe" : "1f1b"},
          {"allreduce", cs.allreduce == AllReduceAlgorithm::tree ? "tree" : "ring"},
          {"gpus", TP * S * DP},
          {"actors", S * DP},
          {"microbatches_per_pipeline", sp.microbatches},
          {"tokens_per_microbatch", spec.micro_batch * spec.seq},
          {"gpu_model", target.name()},
          {"policy", req.policy},
          {"iteration_s", r.iteration_s},
          {"energy_j", energy * TP},
          {"energy_per_gpu_j", energy / (S * DP)},
          {"intrinsic_wait_gpu_s", intrinsic * TP},
          {"extrinsic_wait_gpu_s", extrinsic * TP},
          {"kernel_events", events},
          {"kernels_per_stage_microbatch", sp.kernels_per_microbatch},
          {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
          {"replay_s", replay_s},
          {"plan_s", plan_s},
          {"budget_pct", req.budget_pct},
          {"peak_rss_mib", static_cast<double>(ru.ru_maxrss) / 1024.0},
          {"stages", stages},
          {"simulated", "one actor per TP group (its GPUs run the same stream at the same clocks; energy x TP); PP "
                        "transfers and the DP ring all-reduce (after the last backward, not overlapped) are SimGrid "
                        "communications; embedding and head on the first and last stage, optimizer after the all-reduce"}};
  if (!critical_path.is_null()) out["critical_path"] = critical_path;
  return out;
}

std::string format_synthetic(const Json& j) {
  std::ostringstream os;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "synth %s: TP %d x PP %d x DP %d = %d GPUs (%d actors), %d micro-batches of %d tokens per pipeline, %s, policy %s\n",
                j["model"].get<std::string>().c_str(), j["layout"]["tp"].get<int>(), j["layout"]["pp"].get<int>(),
                j["layout"]["dp"].get<int>(), j["gpus"].get<int>(), j["actors"].get<int>(),
                j["microbatches_per_pipeline"].get<int>(), j["tokens_per_microbatch"].get<int>(),
                j["gpu_model"].get<std::string>().c_str(), j["policy"].get<std::string>().c_str());
  os << buf;
  std::snprintf(buf, sizeof buf,
                "  iteration %.3f s, energy %.2f MJ (%.2f kJ per GPU); GPU-seconds waiting: %.1f in the pipeline, %.1f for "
                "stragglers at the all-reduce\n",
                j["iteration_s"].get<double>(), j["energy_j"].get<double>() / 1e6, j["energy_per_gpu_j"].get<double>() / 1e3,
                j["intrinsic_wait_gpu_s"].get<double>(), j["extrinsic_wait_gpu_s"].get<double>());
  os << buf;
  os << "  stage  kJ/GPU  pipeline wait mean/max s  all-reduce min/max s  straggler wait s\n";
  for (const auto& s : j["stages"]) {
    std::snprintf(buf, sizeof buf, "  %5d %7.2f %12.3f / %-8.3f %11.3f / %-8.3f %10.3f\n", s["stage"].get<int>(),
                  s["energy_per_gpu_j"].get<double>() / 1e3, s["pipeline_wait_mean_s"].get<double>(),
                  s["pipeline_wait_max_s"].get<double>(), s["allreduce_min_s"].get<double>(), s["allreduce_max_s"].get<double>(),
                  s["straggler_wait_s"].get<double>());
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "  %.2e kernel events (%.0f per stage and micro-batch); wall %.2f s (replay %.2f s), peak memory %.0f MiB\n",
                j["kernel_events"].get<double>(), j["kernels_per_stage_microbatch"].get<double>(), j["wall_s"].get<double>(),
                j["replay_s"].get<double>(), j["peak_rss_mib"].get<double>());
  os << buf << "  simulated: " << j["simulated"].get<std::string>() << "\n";
  return os.str();
}

}  // namespace dvfs
