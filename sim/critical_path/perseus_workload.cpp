#include "sim/critical_path/perseus_workload.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/critical_path/iteration_dag.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace dvfs {

std::string default_perseus_workloads_file() { return data_dir() + "/traces/perseus-baselines/workloads.json"; }

static std::vector<int> blocks_per_stage(const PerseusWorkload& w) {
  std::vector<int> b(static_cast<std::size_t>(w.pp), 0);
  if (w.partition == "uniform_transformer") {
    if (w.layers % w.pp != 0) throw InputError(w.file, "run_sets." + w.run_set + ".partition", "uniform_transformer needs layers divisible by pp");
    for (int& x : b) x = w.layers / w.pp;
    return b;
  }
  // custom:b0,...,bpp over Merak's list [token embedding, position embedding, blocks 2..layers+1, final norm + LM head]
  // (the order Zeus's own power-limit baseline agrees with: zeus_local.csv names stage 2 of GPT-3 XL's custom
  // partition its heaviest and gives stage 0 the power of stage 1; [embedding, blocks, norm, head] would make
  // stages 0 and 2 equal).
  std::vector<int> cuts;
  std::stringstream ss(w.partition.rfind("custom:", 0) == 0 ? w.partition.substr(7) : "");
  for (std::string tok; std::getline(ss, tok, ',');) cuts.push_back(std::atoi(tok.c_str()));
  if (static_cast<int>(cuts.size()) != w.pp + 1 || cuts.front() != 0 || cuts.back() != w.layers + 3)
    throw InputError(w.file, "run_sets." + w.run_set + ".partition",
                     "expected uniform_transformer or custom:0,...," + std::to_string(w.layers + 3) + " with pp + 1 boundaries");
  for (int s = 0; s < w.pp; ++s)
    for (int e = cuts[static_cast<std::size_t>(s)]; e < cuts[static_cast<std::size_t>(s) + 1]; ++e)
      if (e >= 2 && e <= w.layers + 1) ++b[static_cast<std::size_t>(s)];
  return b;
}

std::vector<double> PerseusWorkload::stage_blocks() const {
  std::vector<double> b;
  for (int x : blocks_per_stage(*this)) b.push_back(x);
  b.back() += head_ratio * vocab / (12.0 * hidden + 2.0 * context);
  return b;
}

std::vector<double> PerseusWorkload::stage_parameters() const {
  const double h = hidden, table = static_cast<double>(vocab) * h;
  std::vector<double> p;
  const std::vector<int> b = blocks_per_stage(*this);
  for (int s = 0; s < pp; ++s)
    p.push_back((b[static_cast<std::size_t>(s)] * 12.0 * h * h + (s == 0 ? table : 0.0) + (s == pp - 1 ? table : 0.0)) / tp);
  return p;
}

std::string perseus_run_set_name(const std::string& run_dir) {
  std::string base = normalize_path(run_dir);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base.substr(base.find_last_of('/') == std::string::npos ? 0 : base.find_last_of('/') + 1);
}

std::optional<PerseusWorkload> find_perseus_workload(const std::string& run_dir, const std::string& file) {
  const std::string base = perseus_run_set_name(run_dir);
  if (!file_exists(file)) throw InputError(file, "", "expected the Perseus workloads file (traces/perseus-baselines/workloads.json)");
  const Json doc = read_json_file(file);
  JsonReader top(doc, file, "");
  const Json& sets = top.raw("run_sets");
  if (!sets.is_object() || !sets.contains(base)) return std::nullopt;
  JsonReader r(sets[base], file, "run_sets." + base);
  JsonReader pm = top.child("pipeline_model");
  JsonReader d = r.child("default_run");
  PerseusWorkload w;
  w.run_set = base, w.file = file;
  w.board = r.string("board"), w.model = r.string("model"), w.partition = r.string("partition");
  w.layers = static_cast<int>(r.integer("layers")), w.hidden = static_cast<int>(r.integer("hidden"));
  w.context = static_cast<int>(r.integer("context")), w.vocab = static_cast<int>(r.integer("vocab"));
  w.dp = static_cast<int>(r.integer("dp")), w.tp = static_cast<int>(r.integer("tp")), w.pp = static_cast<int>(r.integer("pp"));
  w.microbatch_size = static_cast<int>(r.integer("microbatch_size")), w.microbatches = static_cast<int>(r.integer("microbatches"));
  if (w.layers < 1 || w.hidden < 1 || w.context < 1 || w.vocab < 1 || w.dp < 1 || w.tp < 1 || w.pp < 1 || w.microbatch_size < 1 ||
      w.microbatches < 1)
    r.fail("layers", "expected layers, hidden, context, vocab, dp, tp, pp, microbatch_size and microbatches >= 1");
  w.default_iteration_s = d.number("iteration_s"), w.default_energy_j = d.number("energy_j");
  w.default_power_limit_w = d.number("power_limit_w");
  if (!(w.default_iteration_s > 0) || !(w.default_energy_j > 0)) d.fail("iteration_s", "expected iteration_s and energy_j > 0");
  w.backward_over_forward = pm.number("backward_over_forward"), w.head_ratio = pm.number("head_block_equivalents_per_flop_ratio");
  w.load_s = pm.number("load_s_per_microbatch"), w.optimizer_bytes = pm.number("optimizer_bytes_per_parameter");
  if (!(w.backward_over_forward > 0) || w.head_ratio < 0 || w.load_s < 0 || w.optimizer_bytes < 0)
    pm.fail("backward_over_forward", "expected backward_over_forward > 0 and the other constants >= 0");
  w.stage_blocks();  // checks the partition
  return w;
}

namespace {

IterationDag anchor_dag(const PerseusAnchor& a) {
  PipelineDagSpec spec;
  spec.stages = a.stages;
  spec.microbatches = a.microbatches;
  spec.per_microbatch_curves = true;
  spec.load_s = a.ld;
  spec.p2p_s = a.p2p_s;
  spec.after_last_backward_s = a.after_last_backward_s;
  spec.tail_s = a.tail_s;
  return build_pipeline_dag(spec);
}

double iteration_at(const IterationDag& dag, const std::vector<double>& blocks, double r, double k) {
  std::vector<double> d(dag.size(), 0.0);
  for (std::size_t v = 0; v < dag.size(); ++v) {
    const DagNode& nd = dag.nodes()[v];
    if (nd.computation) d[v] = k * blocks[static_cast<std::size_t>(nd.stage)] * (nd.backward ? r : 1.0);
  }
  return longest_path(dag, d);
}

}  // namespace

PerseusAnchor workload_anchor(const PerseusWorkload& w, const GpuModel& model, double pb) {
  const GpuSpecs& sp = model.specs();
  if (!(sp.interconnect_gbs > 0) || !(sp.mem_bandwidth_gbs > 0) || (w.dp > 1 && !(sp.nic_gbs > 0)))
    throw InputError(model.source_file(), "specs", "the models-only Perseus anchor needs interconnect_gbs, mem_bandwidth_gbs (and nic_gbs for dp > 1)");
  PerseusAnchor a;
  a.stages = w.pp, a.microbatches = w.microbatches, a.gpus_per_stage = w.gpus_per_stage();
  a.file = w.file + " (run_sets." + w.run_set + ")";
  const std::size_t S = static_cast<std::size_t>(w.pp), M = static_cast<std::size_t>(w.microbatches);
  a.ld.assign(S, std::vector<double>(M, 0.0));
  if (w.dp * w.tp == 1) {  // the 3D runs log no loads (Merak's 3D schedule overlaps them)
    a.ld.front().assign(M, w.load_s);
    if (S > 1) a.ld.back().assign(M, w.load_s);
  }
  const double act_bytes = 2.0 * w.microbatch_size * w.context * w.hidden / w.tp;
  a.p2p_s = act_bytes / (sp.interconnect_gbs * 1e9);
  const std::vector<double> params = w.stage_parameters();
  double opt = 0;
  for (std::size_t s = 0; s < S; ++s) {
    opt = std::max(opt, params[s] * w.optimizer_bytes / (sp.mem_bandwidth_gbs * 1e9));
    if (w.dp > 1) a.after_last_backward_s.push_back(2.0 * (w.dp - 1) / w.dp * 2.0 * params[s] / (sp.nic_gbs * 1e9));
  }
  a.tail_s = opt;
  const IterationDag dag = anchor_dag(a);
  const std::vector<double> blocks = w.stage_blocks();
  const double r = w.backward_over_forward, T = w.default_iteration_s;
  if (iteration_at(dag, blocks, r, 0.0) >= T)
    throw InputError(w.file, "run_sets." + w.run_set + ".default_run.iteration_s",
                     "expected an iteration longer than the modelled loads, transfers and optimizer step");
  double lo = 0, hi = T / (static_cast<double>(M) * blocks.front());
  while (iteration_at(dag, blocks, r, hi) < T) hi *= 2;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (iteration_at(dag, blocks, r, mid) < T ? lo : hi) = mid;
  }
  const double k = 0.5 * (lo + hi);
  a.iteration_s = T;
  a.fw.assign(S, std::vector<double>(M, 0.0));
  a.bw = a.fw;
  double busy_sum = 0, idle_sum = 0;
  std::vector<double> busy(S, 0.0);
  for (std::size_t s = 0; s < S; ++s) {
    a.fw[s].assign(M, k * blocks[s]);
    a.bw[s].assign(M, k * blocks[s] * r);
    busy[s] = static_cast<double>(M) * k * blocks[s] * (1 + r);
    busy_sum += busy[s], idle_sum += T - busy[s];
  }
  const double p_busy = (w.default_energy_j / w.gpus_per_stage() - pb * idle_sum) / busy_sum;
  for (std::size_t s = 0; s < S; ++s) a.stage_energy_j.push_back(p_busy * busy[s] + pb * (T - busy[s]));
  return a;
}

}  // namespace dvfs
