#include "sim/critical_path/pipeline_plans.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/critical_path/critical_path_policy.hpp"
#include "sim/critical_path/plan_file.hpp"
#include "sim/engine/gpu_replayer.hpp"
#include "models/src/collective_cost.hpp"
#include "sim/pipeline/schedule.hpp"
#include "sim/planning/clock_plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>

namespace dvfs {

namespace {

// Per-kernel budgets over a computation's fastest kernel time (critical-path+per-kernel variants).
const double kKernelBudgets[] = {0.0, 0.01, 0.02, 0.04, 0.07, 0.10, 0.15, 0.20, 0.30};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The straggler replica's programs: every kernel but the collectives slower, as the pipeline engine does.
std::vector<Rank> stretched(const std::vector<Rank>& stages, double factor) {
  std::vector<Rank> out = stages;
  for (Rank& r : out)
    for (Kernel& k : r.kernels)
      if (!k.collective) {
        k.duration_s *= factor;
        scale_work_rates(k, 1.0 / factor);  // the same work, slower
      }
  return out;
}

Rank slice(const Rank& r, std::size_t first, std::size_t last) {
  Rank s;
  s.id = r.id;
  s.kernels.assign(r.kernels.begin() + static_cast<std::ptrdiff_t>(first), r.kernels.begin() + static_cast<std::ptrdiff_t>(last));
  if (r.shapes.size() >= last)
    s.shapes.assign(r.shapes.begin() + static_cast<std::ptrdiff_t>(first), r.shapes.begin() + static_cast<std::ptrdiff_t>(last));
  return s;
}

struct CurveSet {
  std::vector<ComputationCurve> curves;                          // per curve 2 v + backward
  std::vector<std::vector<std::vector<ClockPair>>> kernel_plans;  // per curve, per variant: a pair per kernel
};

std::pair<std::size_t, std::size_t> range_of(const KernelPipeline& kp, int curve) {
  const std::size_t v = static_cast<std::size_t>(curve / 2);
  return curve % 2 ? kp.backward[v] : kp.forward[v];
}

// One stage's schedule replayed back to back from a cold start (as an iteration starts) under a
// policy, without the waits for the neighbours: per curve (2 v + backward) the mean time and energy of
// its computations. Back to back keeps the power limit's window where the pipeline has it on the
// critical stage; a computation replayed alone starts cold and is up to ~4 % faster on a capped GPU.
std::vector<RangeCost> sweep_stage(const KernelPipeline& kp, const Rank& prog, int s, const GpuModel& model, Policy& policy,
                                   const ReplayOptions& opts) {
  const int S = static_cast<int>(kp.stages.size());
  ReplayOptions o = opts;
  o.timeline_interval_s = 0;
  EnergyMeter meter(0, std::max<std::size_t>(1, kp.annotation_sets), model.sm_clocks_mhz().size(), 0);
  GpuReplayer rp(prog, model, policy, o, meter);
  LocalTime tk;
  std::vector<RangeCost> sum(static_cast<std::size_t>(2 * S * kp.chunks));
  std::vector<int> count(sum.size(), 0);
  int index = 0;
  for (const PipelineOp& op : schedule_ops(kp.schedule, s, S, kp.microbatches, kp.chunks)) {
    const int c = 2 * (op.chunk * S + s) + (op.backward ? 1 : 0);
    const auto [first, last] = range_of(kp, c);
    const double t0 = tk.now(), e0 = meter.total_j();
    rp.begin_computation(tk, ComputationInfo{s, op.chunk, op.microbatch, index++, op.backward});
    rp.run_kernels(tk, first, last);
    sum[static_cast<std::size_t>(c)].time_s += tk.now() - t0;
    sum[static_cast<std::size_t>(c)].energy_j += meter.total_j() - e0;
    ++count[static_cast<std::size_t>(c)];
  }
  for (std::size_t c = 0; c < sum.size(); ++c)
    if (count[c]) sum[c].time_s /= count[c], sum[c].energy_j /= count[c];
  return sum;
}

// A plan where every computation of a stage runs one setting per pass (for the sweeps).
std::shared_ptr<const StageClockPlan> uniform_plan(const KernelPipeline& kp, int s, const ComputationSetting& fwd,
                                                   const ComputationSetting& bwd, std::vector<std::vector<ClockPair>> kernel_plans) {
  StageClockPlan p;
  p.stage = s;
  for (const PipelineOp& op : schedule_ops(kp.schedule, s, static_cast<int>(kp.stages.size()), kp.microbatches, kp.chunks)) {
    p.settings.push_back(op.backward ? bwd : fwd);
    p.planned_s.push_back(0);
  }
  p.kernel_plans = std::move(kernel_plans);
  return std::make_shared<const StageClockPlan>(std::move(p));
}

CurveSet build_curves(const KernelPipeline& kp, const std::vector<Rank>& programs, const std::vector<std::string>& names,
                      const GpuModel& model, const ReplayOptions& opts, double pb, bool per_kernel) {
  const int S = static_cast<int>(programs.size()), V = S * kp.chunks;
  CurveSet cs;
  cs.kernel_plans.resize(static_cast<std::size_t>(2 * V));
  std::vector<std::vector<CurveOption>> options(static_cast<std::size_t>(2 * V));
  Workload wl;
  wl.names = names;
  const double mem = model.max_mem_mhz();
  for (int s = 0; s < S; ++s) {
    const Rank& prog = programs[static_cast<std::size_t>(s)];
    for (double f : model.sm_clocks_mhz()) {  // every computation of the stage at one clock
      CriticalPathPolicy p("sweep", uniform_plan(kp, s, {{f, mem}, -1}, {{f, mem}, -1}, {}));
      const std::vector<RangeCost> cost = sweep_stage(kp, prog, s, model, p, opts);
      for (int c = 0; c < 2 * V; ++c)
        if ((c / 2) % S == s) options[static_cast<std::size_t>(c)].push_back({{f, mem}, cost[static_cast<std::size_t>(c)].time_s, cost[static_cast<std::size_t>(c)].energy_j, -1});
    }
    if (!per_kernel) continue;
    // Per-kernel plans of each of the stage's computations at each budget, then one sweep per budget.
    std::vector<std::vector<std::vector<ClockPair>>> seqs(static_cast<std::size_t>(2 * V));
    for (int c = 0; c < 2 * V; ++c) {
      if ((c / 2) % S != s) continue;
      const auto [first, last] = range_of(kp, c);
      const Rank r = slice(prog, first, last);
      const double fastest = plan_clocks(wl, r, model, PlanGrouping::per_kernel, 1e30).fastest_kernel_time_s;
      for (double b : kKernelBudgets) {
        const ClockPlan plan = plan_clocks(wl, r, model, PlanGrouping::per_kernel, (1 + b) * fastest);
        std::vector<ClockPair> seq;
        for (std::size_t i = 0; i < r.kernels.size(); ++i) seq.push_back(plan.pair_for_kernel(i));
        seqs[static_cast<std::size_t>(c)].push_back(std::move(seq));
      }
    }
    for (std::size_t k = 0; k < std::size(kKernelBudgets); ++k) {
      for (int ch = 0; ch < kp.chunks; ++ch) {
        const int cf = 2 * (ch * S + s), cb = cf + 1;
        // The sweep's plan holds this budget's sequences: forward 0, backward 1 (one chunk at a time).
        CriticalPathPolicy p("sweep", uniform_plan(kp, s, {{}, 0}, {{}, 1}, {seqs[static_cast<std::size_t>(cf)][k], seqs[static_cast<std::size_t>(cb)][k]}));
        const std::vector<RangeCost> cost = sweep_stage(kp, prog, s, model, p, opts);
        for (int c : {cf, cb}) {
          auto& cps = cs.kernel_plans[static_cast<std::size_t>(c)];
          options[static_cast<std::size_t>(c)].push_back({seqs[static_cast<std::size_t>(c)][k].front(), cost[static_cast<std::size_t>(c)].time_s,
                                                         cost[static_cast<std::size_t>(c)].energy_j, static_cast<int>(cps.size())});
          cps.push_back(seqs[static_cast<std::size_t>(c)][k]);
        }
      }
    }
  }
  for (int c = 0; c < 2 * V; ++c) {
    cs.curves.push_back(make_curve(std::move(options[static_cast<std::size_t>(c)]), pb));
  }
  return cs;
}

// Per stage: what a replica runs, from a plan over the DAG.
std::vector<std::shared_ptr<const StageClockPlan>> stage_plans(const IterationDag& dag, const CurveSet& cs, const KernelPipeline& kp,
                                                               const std::vector<int>& option, double lead_s) {
  const int S = static_cast<int>(kp.stages.size());
  std::vector<StageClockPlan> plans(static_cast<std::size_t>(S));
  std::vector<int> offset(cs.curves.size(), 0);  // a curve's first per-kernel plan in its stage's list
  for (int s = 0; s < S; ++s) {
    StageClockPlan& p = plans[static_cast<std::size_t>(s)];
    p.stage = s;
    p.lead_s = lead_s;
    const std::size_t n = schedule_ops(kp.schedule, s, S, kp.microbatches, kp.chunks).size();
    p.settings.resize(n);
    p.planned_s.assign(n, 0.0);
  }
  for (std::size_t c = 0; c < cs.curves.size(); ++c) {
    StageClockPlan& p = plans[(c / 2) % static_cast<std::size_t>(S)];
    offset[c] = static_cast<int>(p.kernel_plans.size());
    for (const auto& seq : cs.kernel_plans[c]) p.kernel_plans.push_back(seq);
  }
  for (std::size_t v = 0; v < dag.size(); ++v) {
    const DagNode& n = dag.nodes()[v];
    if (!n.computation) continue;
    const CurveOption& o = cs.curves[static_cast<std::size_t>(n.curve)].options[static_cast<std::size_t>(option[v])];
    StageClockPlan& p = plans[static_cast<std::size_t>(n.stage)];
    p.settings[static_cast<std::size_t>(n.index)] = {o.clocks, o.variant >= 0 ? offset[static_cast<std::size_t>(n.curve)] + o.variant : -1};
    p.planned_s[static_cast<std::size_t>(n.index)] = o.time_s;
  }
  std::vector<std::shared_ptr<const StageClockPlan>> out;
  for (auto& p : plans) out.push_back(std::make_shared<const StageClockPlan>(std::move(p)));
  return out;
}

// With a switch latency, a clock that changes more often than the latency never takes effect (each
// request supersedes the one in flight). So on every stage consecutive computations are merged into
// runs of at least `dwell_s` planned time, each run at one clock: among its computations' planned
// clocks, the cheapest one at which none of them is slower than planned (else the fastest for the
// slowest of them). The iteration stays within the plan's time; some slack goes unused.
std::vector<int> smooth_for_latency(const IterationDag& dag, const CurveSet& cs, std::vector<int> option,
                                    double dwell_s) {
  const std::vector<std::vector<int>> by_index = nodes_by_schedule_index(dag);
  auto opt = [&](int v) -> const CurveOption& {
    return cs.curves[static_cast<std::size_t>(dag.nodes()[static_cast<std::size_t>(v)].curve)].options[static_cast<std::size_t>(option[static_cast<std::size_t>(v)])];
  };
  for (const auto& row : by_index) {
    std::size_t i = 0;
    while (i < row.size()) {
      if (opt(row[i]).variant >= 0) {  // per-kernel computations keep their own plan
        ++i;
        continue;
      }
      std::size_t j = i;
      double span = 0;
      while (j < row.size() && opt(row[j]).variant < 0 && (span < dwell_s || j == i)) span += opt(row[j]).time_s, ++j;
      // Candidate clocks: those the run's computations were planned at.
      std::vector<double> clocks;
      for (std::size_t k = i; k < j; ++k) clocks.push_back(opt(row[k]).clocks.sm_mhz);
      std::sort(clocks.begin(), clocks.end());
      clocks.erase(std::unique(clocks.begin(), clocks.end()), clocks.end());
      double best_f = clocks.back(), best_e = INFINITY, best_late = INFINITY;
      for (double f : clocks) {
        double e = 0, late = 0;
        for (std::size_t k = i; k < j; ++k) {
          const ComputationCurve& c = cs.curves[static_cast<std::size_t>(dag.nodes()[static_cast<std::size_t>(row[k])].curve)];
          const CurveOption& o = c.options[static_cast<std::size_t>(c.option_at_sm_mhz(f))];
          e += o.energy_j;
          late = std::max(late, o.time_s / opt(row[k]).time_s - 1);
        }
        const bool on_time = late <= 1e-9, best_on_time = best_late <= 1e-9;
        if ((on_time && (!best_on_time || e < best_e)) || (!on_time && !best_on_time && late < best_late))
          best_f = f, best_e = e, best_late = late;
      }
      for (std::size_t k = i; k < j; ++k) {
        const ComputationCurve& c = cs.curves[static_cast<std::size_t>(dag.nodes()[static_cast<std::size_t>(row[k])].curve)];
        option[static_cast<std::size_t>(row[k])] = c.option_at_sm_mhz(best_f);
      }
      i = j;
    }
  }
  return option;
}

Json plan_summary(const IterationDag& dag, const CurveSet& cs, const IterationPlan& p) {
  std::map<double, int> clocks;
  int per_kernel = 0, computations = 0;
  for (std::size_t v = 0; v < dag.size(); ++v) {
    const DagNode& n = dag.nodes()[v];
    if (!n.computation) continue;
    ++computations;
    const CurveOption& o = cs.curves[static_cast<std::size_t>(n.curve)].options[static_cast<std::size_t>(p.option[v])];
    if (o.variant >= 0) ++per_kernel;
    else ++clocks[o.clocks.sm_mhz];
  }
  Json hist = Json::object();
  for (const auto& [f, k] : clocks) hist[std::to_string(static_cast<int>(f))] = k;
  return {{"iteration_s", p.time_s}, {"energy_j", p.energy_j}, {"computations", computations},
          {"per_kernel_computations", per_kernel}, {"sm_mhz_histogram", hist}};
}

}  // namespace

RangeCost replay_range(const Rank& rank, std::size_t first, std::size_t last, const GpuModel& model, Policy& policy,
                       const ReplayOptions& opts, std::size_t annotation_sets) {
  ReplayOptions o = opts;
  o.timeline_interval_s = 0;
  EnergyMeter meter(0, std::max<std::size_t>(1, annotation_sets), model.sm_clocks_mhz().size(), 0);
  GpuReplayer rp(rank, model, policy, o, meter);
  LocalTime tk;
  rp.run_kernels(tk, first, last);
  rp.run_kernels(tk, first, last);
  const double t0 = tk.now(), e0 = meter.total_j();
  rp.run_kernels(tk, first, last);
  return {tk.now() - t0, meter.total_j() - e0};
}

void register_critical_path_policies(PolicyRegistry& r) {
  auto budget = [](const JsonReader&, const JsonReader* object, PolicySpec& spec) {
    if (object && object->has("budget_pct")) spec.budget_pct = object->number_in("budget_pct", 0.0, kMaxSlowdownBudgetPct, "%");
  };
  PolicyEntry cp;
  cp.name = "critical-path";
  cp.summary = "one SM clock per forward / backward: the least-energy plan of the iteration's time-energy frontier (Perseus)";
  cp.kind = PolicyKind::pipeline;
  cp.keys = {"budget_pct"};
  cp.scenario_keys = {"clock_plan"};
  cp.parse = budget;
  auto plan = [](const std::string& name) {
    return [name](const PipelinePlanRequest& q) {
      CriticalPathSettings cps;
      cps.policy = name;
      cps.slowdown_pct = q.spec.budget_pct;
      cps.clock_plan = q.clock_plan;
      PipelinePlan p;
      p.factory = critical_path_factory(*q.pipeline, *q.names, *q.model, *q.opts, cps, p.report);
      return p;
    };
  };
  cp.plan_pipeline = plan(cp.name);
  r.add(cp);
  PolicyEntry pk = cp;
  pk.name = "critical-path+per-kernel";
  pk.summary = "per computation one SM clock or one of its per-kernel plans, chosen on the frontier";
  pk.scenario_keys.clear();
  pk.plan_pipeline = plan(pk.name);
  r.add(pk);
}

namespace {
const PolicyRegistry& critical_path_family() {
  static const PolicyRegistry family = [] {
    PolicyRegistry r;
    register_critical_path_policies(r);
    return r;
  }();
  return family;
}
// The DAG: transfers over the inter-node link; gradient sync (ring estimate) and optimizer per stage.
PipelineDagSpec pipeline_dag_spec(const KernelPipeline& kp, const GpuModel& model, const ReplayOptions& opts) {
  const int S = static_cast<int>(kp.stages.size());
  PipelineDagSpec spec;
  spec.stages = S;
  spec.microbatches = kp.microbatches;
  spec.chunks = kp.chunks;
  spec.schedule = kp.schedule;
  const double lat = kp.use_cluster ? kp.cluster.inter_latency_s : kp.p2p_latency_s;
  const double bw = kp.use_cluster ? kp.cluster.inter_bw_bps : kp.p2p_bandwidth_bps;
  spec.p2p_s = lat + (bw > 0 ? kp.activation_bytes / bw : 0.0);
  const int DP = kp.data_parallel;
  for (int st = 0; st < S; ++st) {
    double sync = 0;
    // The stage's gradients: its buckets (every chunk), else gradient_bytes.
    double bytes = kp.gradient_bytes.empty() ? 0.0 : kp.gradient_bytes[static_cast<std::size_t>(st)];
    if (!kp.buckets.empty()) {
      bytes = 0;
      for (int c = 0; c < kp.chunks; ++c)
        for (const GradientBucket& gb : kp.buckets[static_cast<std::size_t>(c * S + st)]) bytes += gb.bytes;
    }
    if (DP > 1 && bytes > 0 && bw > 0) sync = collective_time_s(CollectiveKind::all_reduce, false, DP, bytes, bw, lat);  // the ring
    if (static_cast<std::size_t>(st) < kp.optimizer.size() && kp.optimizer[static_cast<std::size_t>(st)].first < kp.optimizer[static_cast<std::size_t>(st)].second) {
      StaticPolicy top(model.max_clocks());
      sync += replay_range(kp.stages[static_cast<std::size_t>(st)], kp.optimizer[static_cast<std::size_t>(st)].first,
                           kp.optimizer[static_cast<std::size_t>(st)].second, model, top, opts, kp.annotation_sets).time_s;
    }
    spec.after_last_backward_s.push_back(sync);
  }
  return spec;
}

}  // namespace

bool is_critical_path_policy(const std::string& name) { return critical_path_family().find(name) != nullptr; }

PipelineFrontier critical_path_frontier(const KernelPipeline& kp, const std::vector<std::string>& names, const GpuModel& model,
                                        const ReplayOptions& opts_in, double quantum_s) {
  ReplayOptions opts = opts_in;
  opts.firmware_power_cap = true;
  const double pb = model.idle_power_at(model.max_sm_mhz());
  const IterationDag dag = build_pipeline_dag(pipeline_dag_spec(kp, model, opts));
  const auto tc = std::chrono::steady_clock::now();
  const CurveSet cs = build_curves(kp, kp.stages, names, model, opts, pb, false);
  PipelineFrontier out;
  out.curves_s = seconds_since(tc);
  const IterationPlan fast = fastest_plan(dag, cs.curves, pb);
  out.fastest_s = fast.time_s;
  out.fastest_j = fast.energy_j;
  FrontierOptions fo;
  fo.quantum_s = quantum_s > 0 ? quantum_s : std::max(1e-3, fast.time_s / 2000);  // <= 0: about 2,000 quanta
  fo.p_blocking_w = pb;
  const Frontier f = solve_frontier(dag, cs.curves, fo);
  out.solve_s = f.solve_s;
  out.quantum_s = fo.quantum_s;
  for (std::size_t k = 0; k < f.points.size(); ++k) out.points.emplace_back(f.points[k].time_s(fo.quantum_s), f.total_energy_j(k));
  return out;
}

PolicyFactory critical_path_factory(const KernelPipeline& kp, const std::vector<std::string>& names, const GpuModel& model,
                                    const ReplayOptions& opts_in, const CriticalPathSettings& s, Json& report) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!is_critical_path_policy(s.policy)) {
    std::string expected;
    for (const std::string& n : critical_path_family().names()) expected += (expected.empty() ? "" : " or ") + n;
    throw InputError("policy", "", "\"" + s.policy + "\" is not a critical-path policy (expected " + expected + ")");
  }
  if (!(s.slowdown_pct >= 0) || s.slowdown_pct > kMaxSlowdownBudgetPct)
    throw InputError("budget_pct", "", "expected an iteration slowdown budget from 0 to 1000 %");
  ReplayOptions opts = opts_in;
  opts.firmware_power_cap = true;  // driver-locked clocks still live under the power limit
  const int S = static_cast<int>(kp.stages.size()), M = kp.microbatches, T = kp.tp_ranks;
  const double pb = model.idle_power_at(model.max_sm_mhz());
  // Ask for each computation's clock one switch latency ahead of when the plan needs it.
  SwitchLatency latency = model.switch_latency();
  opts.sm_latency.apply_to(latency.sm);
  const double lead = latency.sm.mean_s;
  report = Json::object();
  report["lead_s"] = lead;
  report["policy"] = s.policy;
  report["p_blocking_w"] = pb;
  using Plans = std::vector<std::shared_ptr<const StageClockPlan>>;

  const PipelineDagSpec spec = pipeline_dag_spec(kp, model, opts);
  const IterationDag dag = build_pipeline_dag(spec);
  const bool straggler = kp.straggler_replica >= 0 && kp.straggler_factor != 1.0;
  const bool per_kernel = s.policy == "critical-path+per-kernel";
  const auto tc = std::chrono::steady_clock::now();
  const CurveSet normal = build_curves(kp, kp.stages, names, model, opts, pb, per_kernel);
  CurveSet slow;
  if (straggler) slow = build_curves(kp, stretched(kp.stages, kp.straggler_factor), names, model, opts, pb, per_kernel);
  const double curves_s = seconds_since(tc);
  report["dag"] = {{"computations", 2 * S * kp.chunks * M}, {"p2p_s", spec.p2p_s}, {"after_last_backward_s", spec.after_last_backward_s}};
  report["curves_s"] = curves_s;
  std::size_t options = 0, pareto = 0, pareto_kernel = 0;
  for (const auto& c : normal.curves) {
    options += c.options.size(), pareto += c.pareto.size();
    for (int i : c.pareto) pareto_kernel += c.options[static_cast<std::size_t>(i)].variant >= 0;
  }
  report["curve_options"] = options;
  report["pareto_options"] = pareto;
  report["pareto_per_kernel_options"] = pareto_kernel;

  Plans normal_plans, slow_plans;
  if (!s.clock_plan.empty()) {  // a given plan, on every replica
    const ClockPlanFile file = read_clock_plan(s.clock_plan);
    check_plan_clocks(file, model);
    const std::vector<int> option = options_at_clocks(dag, normal.curves, computation_clocks(file, S, M, kp.chunks, kp.schedule), model, file.file);
    const IterationPlan p = evaluate_plan(dag, normal.curves, option, pb);
    normal_plans = slow_plans = stage_plans(dag, normal, kp, option, lead);
    report["clock_plan"] = s.clock_plan;
    report["plan"] = plan_summary(dag, normal, p);
  } else {
    FrontierOptions fo;
    fo.quantum_s = s.quantum_s;
    fo.p_blocking_w = pb;
    const Frontier fn = solve_frontier(dag, normal.curves, fo);
    const IterationPlan fast_n = fastest_plan(dag, normal.curves, pb);
    double target_n = fast_n.time_s * (1 + s.slowdown_pct / 100);
    Json jr = Json::array();
    if (straggler) {
      const Frontier fs = solve_frontier(dag, slow.curves, fo);
      const IterationPlan fast_s = fastest_plan(dag, slow.curves, pb);
      const double target_s = fast_s.time_s * (1 + s.slowdown_pct / 100);
      IterationPlan ps = plan_for_time(dag, slow.curves, fs, target_s);
      if (lead > 0) ps = evaluate_plan(dag, slow.curves, smooth_for_latency(dag, slow, ps.option, lead), pb);
      slow_plans = stage_plans(dag, slow, kp, ps.option, lead);
      if (s.straggler_aware) target_n = std::max(target_n, target_s);
      Json j = plan_summary(dag, slow, ps);
      j["which"] = "straggler";
      j["target_s"] = target_s;
      j["all_max"] = {{"iteration_s", fast_s.time_s}, {"energy_j", fast_s.energy_j}};
      j["frontier"] = {{"points", fs.points.size()}, {"cuts", fs.iterations}, {"solve_s", fs.solve_s}};
      jr.push_back(j);
    }
    if (s.target_s > 0) target_n = s.target_s;
    IterationPlan pn = plan_for_time(dag, normal.curves, fn, target_n);
    if (lead > 0) pn = evaluate_plan(dag, normal.curves, smooth_for_latency(dag, normal, pn.option, lead), pb);
    normal_plans = stage_plans(dag, normal, kp, pn.option, lead);
    Json j = plan_summary(dag, normal, pn);
    j["which"] = straggler ? "others" : "every replica";
    j["target_s"] = target_n;
    j["all_max"] = {{"iteration_s", fast_n.time_s}, {"energy_j", fast_n.energy_j}};
    j["frontier"] = {{"points", fn.points.size()}, {"cuts", fn.iterations}, {"solve_s", fn.solve_s}};
    jr.insert(jr.begin(), j);
    report["replicas"] = jr;
    report["straggler_aware"] = s.straggler_aware;
    report["slowdown_pct"] = s.slowdown_pct;
  }
  report["plan_s"] = seconds_since(t0);
  const int sr = straggler ? kp.straggler_replica : -1;
  const std::string name = s.policy;
  return [normal_plans, slow_plans, S, T, sr, name](int g) {
    const int st = (g / T) % S, r = g / (T * S);
    const Plans& p = r == sr && !slow_plans.empty() ? slow_plans : normal_plans;
    return std::make_unique<CriticalPathPolicy>(name, p[static_cast<std::size_t>(st)]);
  };
}

}  // namespace dvfs
