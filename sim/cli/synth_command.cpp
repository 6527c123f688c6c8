// `dvfs-sim synth`: a transformer's training iteration synthesised from the recorded layer and replayed at
// kernel level on a simulated cluster (sim/synthetic_run.hpp). Options are kept as text and
// converted here, so that their errors name the option (parse_number's wording).
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/compare.hpp"
#include "sim/results/trace_export.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/synthetic_run.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

namespace dvfs {

namespace {

struct SynthArgs {
  std::string model, gpu, policy, recording, out_file, per_gpu_file, trace_out, chakra_out, trace_gpus;
  TextOption tp, pp, dp, cp, vpp, gpus, microbatches;                        // layout
  TextOption power_cap, power_budget, latency, budget, straggler;            // power, clocks, replicas
  TextOption gradient_sync, bucket_params, grad_dtype;                        // gradient synchronisation
  TextOption schedule, allreduce, topology, placement, nodes_per_leaf, inter_bw, oversubscription;  // pipeline, cluster
  bool unfold_tp = false, no_sequence_parallel = false, no_memory_check = false, no_overlap = false, json = false;
};

int positive_int(const TextOption& o, const char* name) {
  const double v = parse_number(name, o.value, "a positive integer");
  if (v < 1 || v != std::floor(v) || v > 1e6) throw InputError(name, "", "expected a positive integer");
  return static_cast<int>(v);
}

void read_layout(const SynthArgs& a, SyntheticRun& req) {
  if (!a.model.empty()) req.model = a.model;
  if (!a.gpu.empty()) req.gpu = a.gpu;
  if (!a.policy.empty()) req.policy = a.policy;
  // static runs at the clocks a scenario's policy names (sm_mhz, mem_mhz); synth has no option for them
  if (req.policy == "static")
    throw InputError("--policy", "", "static needs its clocks (policy.sm_mhz, mem_mhz): write a synthetic scenario file and use dvfs-sim run");
  if (!a.recording.empty()) req.recording = a.recording;
  if (a.tp.given()) req.layout.tp = positive_int(a.tp, "--tp");
  if (a.pp.given()) req.layout.pp = positive_int(a.pp, "--pp");
  if (a.dp.given()) req.layout.dp = positive_int(a.dp, "--dp");
  if (a.cp.given()) req.layout.cp = positive_int(a.cp, "--cp");
  if (a.vpp.given()) req.layout.vpp = positive_int(a.vpp, "--vpp");
  if (a.gpus.given()) req.gpus = positive_int(a.gpus, "--gpus");
  if (a.microbatches.given()) req.microbatches = positive_int(a.microbatches, "--microbatches");
  req.unfold_tp = a.unfold_tp;
  if (a.no_sequence_parallel) req.sequence_parallel = false;
  if (a.no_memory_check) req.check_memory = false;
  if (a.schedule.given()) {
    if (!pipeline_schedule_from_string(a.schedule.value, req.schedule))
      throw InputError("--schedule", "", "expected 1f1b, gpipe or interleaved-1f1b, got \"" + a.schedule.value + "\"");
  } else if (req.layout.vpp > 1) {
    req.schedule = PipelineSchedule::interleaved_1f1b;
  }
}

void read_power_and_clocks(const SynthArgs& a, SyntheticRun& req) {
  if (a.power_cap.given()) req.power_cap_w = parse_power_cap(a.power_cap.value);
  if (a.power_budget.given()) {
    req.power_budget_w = parse_number("--power-budget", a.power_budget.value, "a budget in W for the whole job (> 0)");
    if (!(req.power_budget_w > 0)) throw InputError("--power-budget", "", "expected a budget > 0 W for the whole job");
  }
  if (a.latency.given()) {
    const double lat = parse_number("--latency", a.latency.value, "a switch latency in seconds (>= 0)");
    if (lat < 0 || lat > 3600) throw InputError("--latency", "", "expected a switch latency >= 0 s (at most 3600)");
    set_fixed_switch_latency(req.replay, lat);
  }
  if (a.budget.given()) {
    req.budget_pct = parse_budget(a.budget.value);
  }
  if (a.straggler.given()) {  // REPLICA:FACTOR
    const std::string& v = a.straggler.value;
    const auto colon = v.find(':');
    if (colon == std::string::npos) throw InputError("--straggler", "", "expected REPLICA:FACTOR, e.g. 0:1.2");
    const double rep = parse_number("--straggler", v.substr(0, colon), "a replica index");
    if (rep < 0 || rep != std::floor(rep) || rep > 1e6) throw InputError("--straggler", "", "expected an integer replica index >= 0");
    req.straggler_replica = static_cast<int>(rep);
    req.straggler_factor = parse_number("--straggler", v.substr(colon + 1), "a slowdown factor");
  }
}

void read_gradient_sync(const SynthArgs& a, SyntheticRun& req) {
  if (a.no_overlap) req.overlap_gradient_sync = false;
  if (a.gradient_sync.given()) {
    const std::string& v = a.gradient_sync.value;
    if (v == "all-reduce") req.gradient_sync = GradientSync::all_reduce;
    else if (v == "reduce-scatter") req.gradient_sync = GradientSync::reduce_scatter;
    else throw InputError("--gradient-sync", "", "expected all-reduce or reduce-scatter, got \"" + v + "\"");
  }
  if (a.bucket_params.given()) {
    req.bucket_params = parse_number("--bucket-params", a.bucket_params.value, "a parameter count per bucket (> 0)");
    if (!(req.bucket_params > 0)) throw InputError("--bucket-params", "", "expected a parameter count per bucket > 0");
  }
  if (a.grad_dtype.given()) {
    const std::string& v = a.grad_dtype.value;
    if (v == "fp32") req.grad_bytes_per_param = 4;
    else if (v == "bf16") req.grad_bytes_per_param = 2;
    else throw InputError("--grad-dtype", "", "expected fp32 or bf16, got \"" + v + "\"");
  }
}

// The cluster: the default one with what the options change. Its keys go through the scenario reader,
// so the command line and scenarios check them alike.
void read_cluster(const SynthArgs& a, SyntheticRun& req) {
  req.cluster = default_cluster_spec();
  if (a.topology.given()) read_cluster_json(JsonReader(Json{{"topology", a.topology.value}}, "--topology", ""), req.cluster);
  if (a.placement.given()) read_cluster_json(JsonReader(Json{{"placement", a.placement.value}}, "--placement", ""), req.cluster);
  if (a.nodes_per_leaf.given()) {
    const Json n = {{"nodes_per_leaf", positive_int(a.nodes_per_leaf, "--nodes-per-leaf")}};
    read_cluster_json(JsonReader(n, "--nodes-per-leaf", ""), req.cluster);
  }
  if (a.allreduce.given()) {
    const std::string& v = a.allreduce.value;
    req.auto_allreduce = false;
    if (v == "ring") req.cluster.allreduce = AllReduceAlgorithm::ring;
    else if (v == "tree") req.cluster.allreduce = AllReduceAlgorithm::tree;
    else if (v == "auto") req.auto_allreduce = true;
    else throw InputError("--allreduce", "", "expected ring, tree or auto, got \"" + v + "\"");
  }
  if (a.inter_bw.given()) {
    // -1 inside means "the GPU model's NIC": a negative value given here would silently become that default
    req.cluster.inter_bw_bps = parse_number("--inter-bw", a.inter_bw.value, "a bandwidth in bytes/s (> 0)");
    if (!(req.cluster.inter_bw_bps >= 1) || req.cluster.inter_bw_bps > kMaxLinkBandwidth)
      throw InputError("--inter-bw", "", "expected a bandwidth in bytes/s in [1, 1e15], got " + a.inter_bw.value);
  }
  if (a.oversubscription.given())
    req.cluster.oversubscription = parse_number("--oversubscription", a.oversubscription.value, "a factor >= 1");
}

int synth_main(const SynthArgs& a) {
  SyntheticRun req;
  read_layout(a, req);
  read_power_and_clocks(a, req);
  read_gradient_sync(a, req);
  read_cluster(a, req);
  // --budget under a policy that plans nothing (native, max) ran as if it were not given.
  if (a.budget.given() && !policy_registry().at(req.policy, "--policy", "").accepts("budget_pct"))
    throw InputError("--budget", "", "the " + req.policy + " policy takes no slowdown budget (a planned or critical-path policy does)");
  require_trace_out_for_gpus(a.trace_gpus, a.trace_out);
  req.per_gpu = !a.per_gpu_file.empty();
  req.trace_out = a.trace_out;
  req.chakra_out = a.chakra_out;
  if (!a.trace_gpus.empty()) req.trace_gpus = parse_gpu_list(a.trace_gpus, "--trace-gpus");
  const Json r = run_synthetic(req);
  if (!a.per_gpu_file.empty()) {
    std::ofstream f(a.per_gpu_file);
    f << per_gpu_csv(r);
    if (!f) throw InputError(a.per_gpu_file, "", "cannot write the per-GPU table");
  }
  if (!a.out_file.empty()) write_json_output(a.out_file, r, "result");
  std::cout << (a.json ? r.dump(2) + "\n" : format_synthetic(r));
  return 0;
}

void declare_synth(CLI::App& app, SynthArgs& a) {
  app.add_option("--model", a.model, "transformer: gpt3-xl, gpt3-175b, qwen3-1.7b, llama-3.2-3b, llama-3.3-70b (default gpt3-xl)");
  app.add_option("--gpu", a.gpu, "GPU model (default h200)");
  app.add_option("--policy", a.policy, "policy of every GPU (default native; see dvfs-sim help policies)");
  app.add_option("--recording", a.recording, "template recording (default traces/recordings/h200-gpt3xl)");
  add_text_option(app, "--gpus", a.gpus, "total GPUs: checks TP x CP x PP x DP");
  add_text_option(app, "--tp", a.tp, "tensor-parallel degree");
  add_text_option(app, "--pp", a.pp, "pipeline stages");
  add_text_option(app, "--dp", a.dp, "data-parallel replicas");
  add_text_option(app, "--cp", a.cp, "context-parallel degree");
  add_text_option(app, "--vpp", a.vpp, "model chunks per stage (> 1: interleaved-1f1b by default)");
  add_text_option(app, "--microbatches", a.microbatches, "micro-batches per pipeline (default: the preset's global batch / DP)");
  add_text_option(app, "--budget", a.budget, "planned and critical-path policies: allowed slowdown, % (>= 0)");
  add_text_option(app, "--schedule", a.schedule, "1f1b, gpipe or interleaved-1f1b");
  add_text_option(app, "--gradient-sync", a.gradient_sync, "all-reduce or reduce-scatter (distributed optimizer)");
  app.add_flag("--no-overlap", a.no_overlap, "do not overlap the gradient sync with the last backward");
  add_text_option(app, "--bucket-params", a.bucket_params, "parameters per gradient bucket (> 0)");
  add_text_option(app, "--grad-dtype", a.grad_dtype, "fp32 or bf16 gradient reduction");
  add_text_option(app, "--allreduce", a.allreduce, "auto, ring or tree");
  add_text_option(app, "--topology", a.topology, "node-backbone, fat-tree or rail");
  add_text_option(app, "--placement", a.placement, "dp-inner or pp-inner");
  add_text_option(app, "--nodes-per-leaf", a.nodes_per_leaf, "nodes per leaf switch");
  add_text_option(app, "--inter-bw", a.inter_bw, "inter-node bandwidth, bytes/s");
  add_text_option(app, "--oversubscription", a.oversubscription, "fabric oversubscription (>= 1)");
  add_text_option(app, "--straggler", a.straggler, "REPLICA:FACTOR: that replica's kernels run FACTOR slower");
  add_text_option(app, "--latency", a.latency, "SM and memory switch latency, s (0 to 3600)");
  add_text_option(app, "--power-cap", a.power_cap, "every GPU's power limit, W");
  add_text_option(app, "--power-budget", a.power_budget, "a power budget for the whole job, W (> 0)");
  app.add_flag("--no-sequence-parallel", a.no_sequence_parallel, "turn Megatron's sequence parallelism off");
  app.add_flag("--no-memory-check", a.no_memory_check, "run layouts whose estimated memory exceeds the GPU's");
  app.add_flag("--unfold-tp", a.unfold_tp, "simulate every TP rank as its own GPU");
  app.add_option("--per-gpu", a.per_gpu_file, "write one row per simulated GPU to this CSV file");
  app.add_flag("--json", a.json, "print the result as JSON");
  app.add_option("-o,--output", a.out_file, "write the result (JSON) to this file");
  app.add_option("--trace-gpus", a.trace_gpus, "--trace-out: only these simulated GPUs, e.g. 0-7,64 (a Perfetto-sized slice)");
  app.add_option("--chakra-out", a.chakra_out, "also write the iteration as Chakra execution traces, DIR/trace.<gpu>.et (docs/chakra.md)");
  app.add_option("--trace-out", a.trace_out, "also write the iteration as a Chrome trace in Kineto's layout (FILE.json.gz; docs/trace-export.md)");
}

}  // namespace

Command synth_command() {
  Command c;
  c.name = "synth";
  c.summary = "synthesise a transformer's training iteration and replay it at kernel level on a simulated cluster";
  c.description =
      "A transformer's training iteration synthesised from the recorded layer and replayed at kernel level on a\n"
      "simulated cluster: gpt3-xl, gpt3-175b, qwen3-1.7b, llama-3.2-3b, llama-3.3-70b.";
  c.unknown_option = "unknown argument for synth: ";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto a = std::make_shared<SynthArgs>();
    declare_synth(app, *a);
    return [a] { return synth_main(*a); };
  };
  return c;
}

}  // namespace dvfs
