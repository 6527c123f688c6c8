#include "sim/critical_path/perseus_validation.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/gzip_file.hpp"
#include "traces/src/stage_profile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

namespace dvfs {

namespace {

std::string existing(const std::string& path) {
  if (file_exists(path)) return path;
  if (file_exists(path + ".gz")) return path + ".gz";
  return "";
}

double mean(const std::vector<double>& v) { return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

}  // namespace

std::string PerseusRunSet::sched_file(int n) const { return existing(join_path(dir, std::to_string(n) + ".sched.json")); }
std::string PerseusRunSet::prof_file(int n) const { return existing(join_path(dir, std::to_string(n) + ".prof.json")); }

const ClockPlanFile& PerseusRunSet::schedule(int n) const {
  auto it = schedules_.find(n);
  if (it == schedules_.end()) {
    ClockPlanFile f = read_clock_plan(sched_file(n));
    if (stages > 0 && static_cast<int>(f.ranks.size()) > stages) {
      // A 3D plan: every rank of a stage runs its first rank's clocks (checked).
      for (std::size_t r = static_cast<std::size_t>(stages); r < f.ranks.size(); ++r)
        if (f.ranks[r].power_states_mhz != f.ranks[r % static_cast<std::size_t>(stages)].power_states_mhz)
          throw InputError(f.file, "[" + std::to_string(r) + "].power_states",
                           "expected the clocks of rank " + std::to_string(r % static_cast<std::size_t>(stages)) + " (the same pipeline stage)");
      f.ranks.resize(static_cast<std::size_t>(stages));
    }
    it = schedules_.emplace(n, std::move(f)).first;
  }
  return it->second;
}

const PerseusMeasurement& PerseusRunSet::measurement(int n) const {
  auto it = measurements_.find(n);
  if (it == measurements_.end()) it = measurements_.emplace(n, fold_to_stages(load_perseus_measurement(prof_file(n)), stages)).first;
  return it->second;
}

PerseusRunSet find_perseus_runs(const std::string& dir) {
  if (!is_directory(dir)) throw InputError(dir, "", "expected a Perseus run directory (N.sched.json and N.prof.json per plan)");
  PerseusRunSet rs;
  rs.dir = dir;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    for (const char* suffix : {".sched.json", ".prof.json"}) {
      const auto dot = name.find(suffix);
      if (dot == std::string::npos || dot == 0 || name.find_first_not_of("0123456789") != dot) continue;
      if (dot > 9)  // beyond an int: std::stoi threw "internal error: stoi"
        throw InputError(dir + "/" + name, "", std::string("expected a plan number N of at most 9 digits in N") + suffix);
      const int n = std::stoi(name.substr(0, dot));
      // A measurement without its schedule was skipped without a word: now it is listed beside the unmeasured plans.
      const bool sched = std::string(suffix) == ".sched.json";
      std::vector<int>& into = sched ? (rs.prof_file(n).empty() ? rs.unmeasured : rs.plans)
                                     : (rs.sched_file(n).empty() ? rs.unscheduled : rs.plans);
      if (std::find(into.begin(), into.end(), n) == into.end()) into.push_back(n);
    }
  }
  for (std::vector<int>* v : {&rs.plans, &rs.unmeasured, &rs.unscheduled}) std::sort(v->begin(), v->end());
  if (rs.plans.empty()) throw InputError(dir, "", "expected plans N.sched.json(.gz) with N.prof.json(.gz) beside them, found none");
  return rs;
}

double calibrated_min_sm_mhz(const GpuModel& model) {
  const Json& prov = model.provenance();
  if (!prov.contains("calibration") || !prov["calibration"].is_object()) return 0;
  // A model derived from a calibrated one (a100-pcie from a100-sxm4) keeps its clock response: its profile's floor.
  const std::string parent = prov["calibration"].value("derived_from", "");
  if (!parent.empty() && file_exists(data_dir() + "/" + parent)) return calibrated_min_sm_mhz(load_gpu_model(data_dir() + "/" + parent, "", "derived_from"));
  const std::string data = prov["calibration"].value("data", "");
  const std::string path = data_dir() + "/traces/profiles/perseus/" + data;
  if (data.size() < 5 || data.substr(data.size() - 4) != ".csv" || !file_exists(path)) return 0;
  return load_stage_profile(path).min_sm_mhz;
}

PerseusAnchor measured_anchor(const PerseusRunSet& runs, const GpuModel& model, double pb) {
  const double fmax = model.max_sm_mhz();
  // Anchors: every instruction at the model's highest clock.
  std::vector<PerseusMeasurement> anchors;
  PerseusAnchor a;
  for (int n : runs.plans) {
    const ClockPlanFile& plan = runs.schedule(n);
    bool all_max = true;
    for (const auto& r : plan.ranks)
      for (double f : r.power_states_mhz) all_max = all_max && f == fmax;
    if (!all_max) continue;
    a.plans.push_back(n);
    anchors.push_back(runs.measurement(n));
  }
  if (anchors.empty())
    throw InputError(runs.dir, "", "expected at least one plan with every instruction at " + std::to_string(static_cast<int>(fmax)) +
                                       " MHz (the highest clock of " + model.name() + "): the anchor of a measured-anchor prediction");
  const int S = anchors.front().stages, M = anchors.front().microbatches;
  for (const auto& m : anchors)
    if (m.stages != S || m.microbatches != M) throw InputError(m.file, "", "expected the same stages and micro-batches as the other anchors");
  a.stages = S, a.microbatches = M, a.gpus_per_stage = anchors.front().gpus_per_stage, a.file = anchors.front().file;
  // Mean measured times per stage, pass and micro-batch; loads; energy per rank.
  a.fw.assign(static_cast<std::size_t>(S), std::vector<double>(static_cast<std::size_t>(M), 0.0));
  a.bw = a.ld = a.fw;
  a.stage_energy_j.assign(static_cast<std::size_t>(S), 0.0);
  double T = 0;
  int n = 0;
  for (const auto& m : anchors)
    for (std::size_t it = 1; it < m.iteration_s.front().size(); ++it, ++n) {
      double t = 0;
      for (std::size_t s = 0; s < static_cast<std::size_t>(S); ++s) {
        for (std::size_t mi = 0; mi < static_cast<std::size_t>(M); ++mi) {
          a.fw[s][mi] += m.forward_s[s][it][mi];
          a.bw[s][mi] += m.backward_s[s][it][mi];
          a.ld[s][mi] += m.load_s[s][it][mi];
        }
        a.stage_energy_j[s] += m.energy_j[s][it] / m.gpus_per_stage;
        t = std::max(t, m.iteration_s[s][it]);
      }
      T += t;
    }
  a.iteration_s = T / n;
  for (auto* tab : {&a.fw, &a.bw, &a.ld})
    for (auto& row : *tab)
      for (double& x : row) x /= n;
  for (double& e : a.stage_energy_j) e /= n;
  // What the measured iteration holds beyond its DAG (p2p, optimizer): one step after everything.
  (void)pb;
  return a;
}

PerseusPrediction build_perseus_prediction(const PerseusAnchor& anchor, const GpuModel& model, double pb, double cap_clock_mhz,
                                           double min_sm_mhz, double time_sm, const std::vector<double>& rank_cap) {
  PerseusPrediction p;
  p.p_blocking_w = pb;
  p.cap_clock_mhz = cap_clock_mhz;
  p.time_sm = time_sm;
  p.anchor_plans = anchor.plans;
  p.gpus_per_stage = anchor.gpus_per_stage;
  p.anchor_file = anchor.file;
  const int S = anchor.stages, M = anchor.microbatches;
  if (!rank_cap.empty() && static_cast<int>(rank_cap.size()) != S)
    throw InputError(anchor.file, "", "expected one clock ceiling per rank (" + std::to_string(S) + "), got " + std::to_string(rank_cap.size()));
  p.rank_cap_clock_mhz = rank_cap;
  std::vector<std::vector<double>> fw = anchor.fw, bw = anchor.bw;
  const double T = anchor.iteration_s;
  p.anchor_iteration_s = T;
  if (!model.computation("forward") || !model.computation("backward"))
    throw InputError(model.source_file(), "computations", "expected `forward` and `backward` coefficient sets (dvfs-sim calibrate --profile)");
  if (time_sm > 1) throw InputError("time_sm", "", "expected a time share in [0, 1]");
  ClassCoefficients cf_own = *model.computation("forward"), cb_own = *model.computation("backward");
  if (time_sm >= 0) cf_own.time_sm = cb_own.time_sm = time_sm, cf_own.time_mem = cb_own.time_mem = 0;
  const ClassCoefficients *cf = &cf_own, *cb = &cb_own;
  for (int s = 0; s < S; ++s) {
    const std::size_t si = static_cast<std::size_t>(s);
    p.anchor_energy_j += anchor.stage_energy_j[si] * anchor.gpus_per_stage;
    const double busy = std::accumulate(fw[si].begin(), fw[si].end(), 0.0) + std::accumulate(bw[si].begin(), bw[si].end(), 0.0);
    p.busy_power_w.push_back((anchor.stage_energy_j[si] - pb * (T - busy)) / busy);
    p.busy_share.push_back(busy / T);
  }
  // The DAG: 1F1B with per-computation curves, the loads as fixed steps, and what the anchor's iteration
  // holds beyond them (transfers, all-reduce, optimizer: measured, or modelled by workload_anchor) as one step
  // after everything. Transfers as DAG nodes moved no MAPE by 0.01 point but made the frontier several times slower.
  PipelineDagSpec spec;
  spec.stages = S;
  spec.microbatches = M;
  spec.per_microbatch_curves = true;
  spec.load_s = anchor.ld;
  IterationDag probe = build_pipeline_dag(spec);
  std::vector<double> d(probe.size(), 0.0);
  for (std::size_t v = 0; v < probe.size(); ++v) {
    const DagNode& nd = probe.nodes()[v];
    if (nd.computation) d[v] = (nd.backward ? bw : fw)[static_cast<std::size_t>(nd.stage)][static_cast<std::size_t>(nd.microbatch)];
  }
  p.residual_s = std::max(0.0, T - longest_path(probe, d));
  spec.tail_s = p.residual_s;
  p.dag = build_pipeline_dag(spec);
  // Curves: per rank and pass one unit curve (anchor time 1 s), scaled by each micro-batch's time.
  // Curves per stage and pass, from the mean over its micro-batches (Perseus profiles per stage and
  // instruction too): identical computations share their breakpoints, which keeps the frontier's cuts
  // wide. Per-micro-batch anchors changed no MAPE by more than 0.02 points on the shipped run sets.
  for (auto* tab : {&fw, &bw})
    for (auto& row : *tab) {
      const double mu = mean(row);
      for (double& x : row) x = mu;
    }
  p.curves.assign(static_cast<std::size_t>(2 * S * M), ComputationCurve{});
  for (int s = 0; s < S; ++s)
    for (int b = 0; b < 2; ++b) {
      const ClassCoefficients& cc = b ? *cb : *cf;
      const double pw = p.busy_power_w[static_cast<std::size_t>(s)];
      const double ceiling = rank_cap.empty() ? cap_clock_mhz : rank_cap[static_cast<std::size_t>(s)];
      const ComputationCurve unit = stage_model_curve(model, cc, {1.0, pw, model.max_clocks()}, pb, ceiling, min_sm_mhz);
      for (int m = 0; m < M; ++m) {
        const double ta = (b ? bw : fw)[static_cast<std::size_t>(s)][static_cast<std::size_t>(m)];
        if (!(ta > 0)) throw InputError(anchor.file, "time_breakdown", "expected forward and backward times > 0 s");
        ComputationCurve c = unit;
        for (CurveOption& o : c.options) o.time_s *= ta, o.energy_j *= ta;
        p.curves[static_cast<std::size_t>(2 * (s * M + m) + b)] = std::move(c);
      }
    }
  p.node_of = nodes_by_schedule_index(p.dag);
  return p;
}

PerseusPrediction build_perseus_prediction(const PerseusRunSet& runs, const GpuModel& model, double pb, double cap_clock_mhz,
                                           double min_sm_mhz, double time_sm, const std::vector<double>& rank_cap) {
  return build_perseus_prediction(measured_anchor(runs, model, pb), model, pb, cap_clock_mhz, min_sm_mhz, time_sm, rank_cap);
}

std::vector<int> perseus_plan_options(const PerseusPrediction& p, const ClockPlanFile& plan, const GpuModel& model) {
  const int S = static_cast<int>(p.node_of.size()), M = static_cast<int>(p.node_of.front().size()) / 2;
  return options_at_clocks(p.dag, p.curves, computation_clocks(plan, S, M, 1, PipelineSchedule::one_f_one_b), model, plan.file);
}

ClockPlanFile perseus_plan_file(const PerseusPrediction& p, const IterationPlan& plan) {
  const int S = static_cast<int>(p.node_of.size()), M = static_cast<int>(p.node_of.front().size()) / 2;
  std::vector<std::vector<double>> clocks(static_cast<std::size_t>(S));
  for (int s = 0; s < S; ++s)
    for (int i = 0; i < 2 * M; ++i) {
      const int v = p.node_of[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)];
      const ComputationCurve& c = p.curves[static_cast<std::size_t>(p.dag.nodes()[static_cast<std::size_t>(v)].curve)];
      clocks[static_cast<std::size_t>(s)].push_back(c.options[static_cast<std::size_t>(plan.option[static_cast<std::size_t>(v)])].clocks.sm_mhz);
    }
  return plan_from_computation_clocks(clocks, S, M, PlanLayout::merak_1f1b);
}

BoardResponse fit_board_response(const PerseusRunSet& runs, const std::vector<int>& plans, const PerseusPrediction& anchor_p,
                                 const GpuModel& model, bool fit_time_share, bool per_rank) {
  struct Bin {
    double t = 0, ta = 0;
  };
  std::map<std::tuple<int, bool, double>, Bin> bins;  // (stage, backward, requested clock)
  const int S = static_cast<int>(anchor_p.node_of.size()), M = static_cast<int>(anchor_p.node_of.front().size()) / 2;
  for (int n : plans) {
    const ClockPlanFile& plan = runs.schedule(n);
    const PerseusMeasurement& meas = runs.measurement(n);
    if (meas.stages != S || meas.microbatches != M)
      throw InputError(meas.file, "", "expected " + std::to_string(S) + " stages x " + std::to_string(M) + " micro-batches, as the anchor plans");
    const auto clocks = computation_clocks(plan, S, M, 1, PipelineSchedule::one_f_one_b);
    for (int s = 0; s < S; ++s)
      for (int i = 0; i < 2 * M; ++i) {
        const DagNode& nd = anchor_p.dag.nodes()[static_cast<std::size_t>(anchor_p.node_of[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)])];
        const ComputationCurve& c = anchor_p.curves[static_cast<std::size_t>(nd.curve)];
        const double ta = c.options[static_cast<std::size_t>(c.option_at_sm_mhz(model.max_sm_mhz()))].time_s;
        double t = 0;
        int k = 0;
        for (std::size_t it = 1; it < meas.iteration_s.front().size(); ++it, ++k)
          t += (nd.backward ? meas.backward_s : meas.forward_s)[static_cast<std::size_t>(s)][it][static_cast<std::size_t>(nd.microbatch)];
        Bin& b = bins[{s, nd.backward, clocks[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)]}];
        b.t += t / k;
        b.ta += ta;
      }
  }
  struct Obs {
    int stage;
    bool backward;
    double f, ratio;
  };
  std::vector<Obs> obs;
  for (const auto& kv : bins) obs.push_back({std::get<0>(kv.first), std::get<1>(kv.first), std::get<2>(kv.first), kv.second.t / kv.second.ta});
  BoardResponse best;
  best.bins = static_cast<int>(obs.size());
  if (obs.empty()) throw InputError(runs.dir, "", "expected at least one plan to fit the board's clock response on");
  const double mem = model.max_mem_mhz();
  const ClassCoefficients own[2] = {*model.computation("forward"), *model.computation("backward")};
  std::vector<std::vector<Obs>> by_rank(static_cast<std::size_t>(S));
  for (const Obs& o : obs) by_rank[static_cast<std::size_t>(o.stage)].push_back(o);
  // Squared relative errors of a set of ratios at ceiling fe and share b.
  auto sse = [&](const std::vector<Obs>& set, double fe, double b) {
    ClassCoefficients cc[2] = {own[0], own[1]};
    if (b >= 0)
      for (ClassCoefficients& c : cc) c.time_sm = b, c.time_mem = 0;
    double err = 0;
    for (const Obs& o : set) {
      const ClassCoefficients& c = cc[o.backward ? 1 : 0];
      const double pred = model.time_shape(c, std::min(o.f, fe), mem) / model.time_shape(c, fe, mem);
      err += (pred / o.ratio - 1) * (pred / o.ratio - 1);
    }
    return err;
  };
  double best_err = INFINITY;
  for (int i = 0; i <= (fit_time_share ? 1000 : 0); ++i) {
    const double b = fit_time_share ? i / 1000.0 : -1.0;
    if (!per_rank) {
      for (double fe : model.sm_clocks_mhz()) {
        const double err = sse(obs, fe, b);
        if (err < best_err) best_err = err, best.cap_clock_mhz = fe, best.time_sm = b;
      }
      continue;
    }
    double err = 0;
    std::vector<double> fes(static_cast<std::size_t>(S), model.max_sm_mhz());
    for (int s = 0; s < S; ++s) {
      if (by_rank[static_cast<std::size_t>(s)].empty()) continue;  // nothing seen: the highest clock
      double e_best = INFINITY;
      for (double fe : model.sm_clocks_mhz()) {
        const double e = sse(by_rank[static_cast<std::size_t>(s)], fe, b);
        if (e < e_best) e_best = e, fes[static_cast<std::size_t>(s)] = fe;
      }
      err += e_best;
    }
    if (err < best_err) best_err = err, best.rank_cap_clock_mhz = fes, best.time_sm = b;
  }
  if (per_rank) {
    const auto busiest = std::max_element(anchor_p.busy_share.begin(), anchor_p.busy_share.end()) - anchor_p.busy_share.begin();
    best.cap_clock_mhz = best.rank_cap_clock_mhz[static_cast<std::size_t>(busiest)];
  }
  best.rms_pct = 100 * std::sqrt(best_err / static_cast<double>(obs.size()));
  return best;
}

namespace {

// A rank's measured computation time per iteration (its forward and backward timers), averaged over the
// iterations after the warm-up.
double measured_busy_s(const PerseusMeasurement& meas, std::size_t s) {
  double t = 0;
  const std::size_t n = meas.forward_s[s].size();
  for (std::size_t it = 1; it < n; ++it)
    for (std::size_t m = 0; m < static_cast<std::size_t>(meas.microbatches); ++m) t += meas.forward_s[s][it][m] + meas.backward_s[s][it][m];
  return n > 1 ? t / static_cast<double>(n - 1) : 0.0;
}

// Per rank: its computations plus P_blocking for the rest of the predicted iteration, against the rank's
// measured energy (the NVML counter of its GPU, iterations after the warm-up); and the energy's composition
// per GPU of the stage (computations, blocking, predicted busy time) with the measured busy time (forward +
// backward timers), which says how the predicted waiting compares.
Json rank_composition(const PerseusPrediction& p, const IterationPlan& pred, const PerseusMeasurement& meas) {
  const std::size_t S = p.node_of.size();
  const double g = p.gpus_per_stage;
  std::vector<double> busy(S, 0.0), energy(S, 0.0);
  for (std::size_t v = 0; v < p.dag.size(); ++v) {
    const DagNode& nd = p.dag.nodes()[v];
    if (!nd.computation) continue;
    const CurveOption& c = p.curves[static_cast<std::size_t>(nd.curve)].options[static_cast<std::size_t>(pred.option[v])];
    busy[static_cast<std::size_t>(nd.stage)] += c.time_s;
    energy[static_cast<std::size_t>(nd.stage)] += c.energy_j;
  }
  Json out = {{"rank_energy_error_pct", Json::array()}, {"rank_compute_energy_j", Json::array()}, {"rank_blocking_energy_j", Json::array()},
              {"rank_busy_s", Json::array()}, {"measured_rank_busy_s", Json::array()}};
  for (std::size_t s = 0; s < S; ++s) {
    double e = 0;
    for (std::size_t it = 1; it < meas.energy_j[s].size(); ++it) e += meas.energy_j[s][it];
    e /= static_cast<double>(meas.energy_j[s].size() - 1);
    const double blocking = p.p_blocking_w * (pred.time_s - busy[s]);
    out["rank_energy_error_pct"].push_back(100 * (g * (energy[s] + blocking) - e) / e);
    out["rank_compute_energy_j"].push_back(energy[s]);
    out["rank_blocking_energy_j"].push_back(blocking);
    out["rank_busy_s"].push_back(busy[s]);
    out["measured_rank_busy_s"].push_back(measured_busy_s(meas, s));
  }
  return out;
}

struct MapeAcc {
  double t = 0, e = 0;
  int n = 0;
  void add(double te, double ee) { t += std::fabs(te), e += std::fabs(ee), ++n; }
  double time() const { return n ? t / n : 0.0; }
  double energy() const { return n ? e / n : 0.0; }
};

Json run_variant(const std::string& name, const std::string& how, const PerseusRunSet& runs, const PerseusPrediction& p,
                 const GpuModel& model, const PerseusValidationOptions& o, const std::vector<int>& held_out, bool write,
                 bool frontier) {
  Json rows = Json::array();
  MapeAcc all, non_anchor, held;
  const std::size_t S = p.node_of.size();
  std::vector<double> rank_err(S, 0.0), rank_abs(S, 0.0);  // per rank, over the non-anchor plans
  struct PlanPoint {
    int plan;
    IterationPlan pred;
  };
  std::vector<PlanPoint> perseus_points;
  for (int n : runs.plans) {
    const ClockPlanFile& plan = runs.schedule(n);
    const PerseusMeasurement& meas = runs.measurement(n);
    const IterationPlan pred = evaluate_plan(p.dag, p.curves, perseus_plan_options(p, plan, model), p.p_blocking_w);
    const double mt = meas.mean_iteration_s(), me = meas.mean_energy_j();
    const double g = p.gpus_per_stage, pred_e = pred.energy_j * g;  // every GPU of a stage runs its first rank's clocks
    const double te = 100 * (pred.time_s - mt) / mt, ee = 100 * (pred_e - me) / me;
    const bool anchor = std::find(p.anchor_plans.begin(), p.anchor_plans.end(), n) != p.anchor_plans.end();
    const Json ranks = rank_composition(p, pred, meas);
    for (std::size_t r = 0; r < S && !anchor; ++r) {
      const double err = ranks["rank_energy_error_pct"][r].get<double>();
      rank_err[r] += err, rank_abs[r] += std::fabs(err);
    }
    const bool is_held = std::find(held_out.begin(), held_out.end(), n) != held_out.end();
    all.add(te, ee);
    if (!anchor) non_anchor.add(te, ee), perseus_points.push_back({n, pred});
    if (is_held) held.add(te, ee);
    rows.push_back({{"plan", n}, {"anchor", anchor}, {"held_out", is_held}, {"measured_iteration_s", mt},
                    {"predicted_iteration_s", pred.time_s}, {"time_error_pct", te}, {"measured_energy_j", me},
                    {"predicted_energy_j", pred_e}, {"energy_error_pct", ee}});
    rows.back().update(ranks);
  }
  Json per_rank = Json::array();
  for (std::size_t s = 0; s < S; ++s)
    per_rank.push_back({{"rank", s}, {"busy_share", p.busy_share[s]}, {"busy_power_w", p.busy_power_w[s]},
                        {"energy_error_mean_pct", non_anchor.n ? rank_err[s] / non_anchor.n : 0.0},
                        {"energy_mape_pct", non_anchor.n ? rank_abs[s] / non_anchor.n : 0.0}});
  // The SM clock each pass runs at when the highest is requested: the anchor's, which the busy power
  // measured there is referred to (g(f_e) / g(f_e,anchor)).
  Json anchor_clock = Json::object();
  for (const char* pass : {"forward", "backward"}) {
    ClassCoefficients cc = *model.computation(pass);
    if (p.time_sm >= 0) cc.time_sm = p.time_sm, cc.time_mem = 0;
    anchor_clock[pass] = anchored_prediction(model, cc, {1.0, p.busy_power_w.front(), model.max_clocks()}, model.max_sm_mhz(),
                                             p.cap_clock_mhz).effective_sm_mhz;
  }
  Json v = {{"name", name},
            {"how", how},
            {"cap_clock_mhz", p.cap_clock_mhz > 0 ? Json(p.cap_clock_mhz) : Json(nullptr)},
            {"rank_cap_clock_mhz", p.rank_cap_clock_mhz.empty() ? Json(nullptr) : Json(p.rank_cap_clock_mhz)},
            {"time_sm", p.time_sm >= 0 ? Json(p.time_sm) : Json(nullptr)},
            {"anchor_sm_mhz", anchor_clock},
            {"per_rank", per_rank},
            {"residual_s", p.residual_s},
            {"busy_power_w", p.busy_power_w},
            {"rows", rows},
            {"time_mape_pct", all.time()},
            {"energy_mape_pct", all.energy()},
            {"plans", all.n},
            {"time_mape_non_anchor_pct", non_anchor.time()},
            {"energy_mape_non_anchor_pct", non_anchor.energy()}};
  if (held.n) v["time_mape_held_out_pct"] = held.time(), v["energy_mape_held_out_pct"] = held.energy(), v["held_out_plans"] = held.n;
  if (!o.frontier || !frontier) return v;
  FrontierOptions fo;
  fo.quantum_s = o.quantum_s;
  fo.p_blocking_w = p.p_blocking_w;
  const Frontier f = solve_frontier(p.dag, p.curves, fo);
  const auto tc = std::chrono::steady_clock::now();
  Json cmp = Json::array();
  double worst = -INFINITY;
  for (const PlanPoint& pp : perseus_points) {
    const IterationPlan ours = plan_for_time(p.dag, p.curves, f, pp.pred.time_s);
    if (write) write_clock_plan(join_path(o.write_plans, "ours-at-" + std::to_string(pp.plan) + ".sched.json"), perseus_plan_file(p, ours));
    const double diff = 100 * (ours.energy_j - pp.pred.energy_j) / pp.pred.energy_j;
    worst = std::max(worst, diff);
    cmp.push_back({{"plan", pp.plan}, {"perseus_iteration_s", pp.pred.time_s}, {"perseus_energy_j", pp.pred.energy_j},
                   {"ours_iteration_s", ours.time_s}, {"ours_energy_j", ours.energy_j}, {"energy_diff_pct", diff}});
  }
  const double compare_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tc).count();
  const IterationPlan fast = fastest_plan(p.dag, p.curves, p.p_blocking_w);
  const IterationPlan ns = no_slowdown_plan(p.dag, p.curves, f);
  if (write) {
    write_clock_plan(join_path(o.write_plans, "no-slowdown.sched.json"), perseus_plan_file(p, ns));
    v["plans_written"] = o.write_plans;
  }
  Json pts = Json::array();
  const std::size_t stride = std::max<std::size_t>(1, f.points.size() / 300);
  for (std::size_t k = 0; k < f.points.size(); k += stride) pts.push_back({f.points[k].time_s(f.quantum_s), f.total_energy_j(k)});
  pts.push_back({f.points.back().time_s(f.quantum_s), f.total_energy_j(f.points.size() - 1)});
  v["frontier"] = {{"quantum_s", f.quantum_s},
                   {"points", f.points.size()},
                   {"iterations", f.iterations},
                   {"max_flows", f.max_flows},
                   {"fallback_cuts", f.fallback_cuts},
                   {"solve_s", f.solve_s},
                   {"compare_s", compare_s},
                   {"relaxed_points", pts},
                   {"all_max", {{"iteration_s", fast.time_s}, {"energy_j", fast.energy_j}}},
                   {"no_slowdown", {{"iteration_s", ns.time_s}, {"energy_j", ns.energy_j},
                                    {"energy_saved_pct", 100 * (fast.energy_j - ns.energy_j) / fast.energy_j}}},
                   {"vs_perseus", cmp},
                   {"max_energy_diff_pct", perseus_points.empty() ? 0.0 : worst}};
  return v;
}

GpuModel model_for(const std::string& dir, const PerseusValidationOptions& o) {
  std::string gpu = o.gpu;
  if (gpu.empty()) {
    std::string base = normalize_path(dir);
    while (!base.empty() && base.back() == '/') base.pop_back();
    base = base.substr(base.find_last_of('/') == std::string::npos ? 0 : base.find_last_of('/') + 1);
    if (base.rfind("a100", 0) == 0) gpu = "a100-pcie";  // the Perseus A100 runs used the 300 W PCIe board
    else if (base.rfind("a40", 0) == 0) gpu = "a40";
    else throw InputError(dir, "", "cannot tell the GPU from the directory name (a100..., a40...): pass --gpu MODEL");
  }
  const GpuModel board = load_gpu_model(gpu, "", "--gpu");
  if (o.power_cap_w <= 0) return board;
  if (o.power_cap_w > board.power_cap_w() || o.power_cap_w <= board.idle_w()) {  // it blamed the model file's power.cap_w
    std::ostringstream os;
    os << "expected a power limit above " << board.name() << "'s idle power (" << board.idle_w() << " W) and at most its cap ("
       << board.power_cap_w() << " W), got " << o.power_cap_w << " W";
    throw InputError("--power-cap", "", os.str());
  }
  Json doc = read_json_file(resolve_model_path(gpu, "", "--gpu"));
  doc["power"]["cap_w"] = o.power_cap_w;
  return GpuModel::from_json(doc, resolve_model_path(gpu, "", "--gpu") + " (cap_w " + std::to_string(o.power_cap_w) + " W)");
}

}  // namespace

namespace {

// The run set's role in models/calibration/perseus-split.json: "held_out", "development" or "unlisted".
std::string split_role(const std::string& run_set) {
  const std::string path = data_dir() + "/models/calibration/perseus-split.json";
  if (!file_exists(path)) return "unlisted";
  const Json doc = read_json_file(path);
  for (const char* role : {"held_out", "development"})
    if (doc.contains(role) && doc[role].is_array())
      for (const Json& n : doc[role])
        if (n.is_string() && n.get<std::string>() == run_set) return role;
  return "unlisted";
}

Json models_only_variant(const PerseusRunSet& runs, const PerseusWorkload& wl, const GpuModel& model, double pb, double floor_mhz,
                         const PerseusValidationOptions& o, bool write) {
  const PerseusAnchor anchor = workload_anchor(wl, model, pb);
  const PerseusPrediction p = build_perseus_prediction(anchor, model, pb, 0, floor_mhz);
  const std::string how = printf_text(
      "models only, no fit on this run set: nothing read from its plans but their clocks (N.sched.json); each "
      "computation at the highest clock from the workload (%s: %s, dp %d x pp %d x tp %d, %d micro-batches of %d) "
      "scaled to its default-settings run (power-limit baseline at %.0f W: %.3f s, %.1f kJ), the clock the board "
      "sustains from %s's power under its %.0f W cap; transfers, loads, all-reduce and optimizer modelled",
      (wl.file.rfind(data_dir() + "/", 0) == 0 ? wl.file.substr(data_dir().size() + 1) : wl.file).c_str(), wl.model.c_str(),
      wl.dp, wl.pp, wl.tp, wl.microbatches, wl.microbatch_size, wl.default_power_limit_w, wl.default_iteration_s,
      wl.default_energy_j / 1e3, model.name().c_str(), model.power_cap_w());
  Json v = run_variant("models only", how, runs, p, model, o, runs.plans, write, true);
  v["fitted_on_plans"] = Json::array();
  v["outside_dag"] = {{"p2p_s_per_transfer", anchor.p2p_s},
                      {"load_s_per_microbatch", anchor.ld.front().front()},  // none in 3D runs
                      {"allreduce_s", anchor.after_last_backward_s.empty() ? 0.0 : anchor.after_last_backward_s.front()},
                      {"optimizer_s", anchor.tail_s}};
  return v;
}

// Whether a plan runs every instruction at the top clock (a measured anchor; reading the plans: their errors stop
// here). Without one and without a workload (`no_workload` says what is missing) nothing can be predicted: the
// anchor's one-line error, naming both ways out.
bool has_measured_anchor(const PerseusRunSet& runs, const GpuModel& model, double pb, const std::string& no_workload) {
  bool has_anchor = false;
  for (int n : runs.plans) {
    bool all_max = true;
    for (const auto& r : runs.schedule(n).ranks)
      for (double f : r.power_states_mhz) all_max = all_max && f == model.max_sm_mhz();
    has_anchor = has_anchor || all_max;
  }
  if (!has_anchor && !no_workload.empty()) {
    try {
      measured_anchor(runs, model, pb);
    } catch (const InputError& e) {
      throw InputError(e.file(), e.field(), e.problem() + "; or " + no_workload);
    }
  }
  return has_anchor;
}

}  // namespace

// The options and plans against the board: --p-blocking 1e6 printed an energy MAPE of 13,084 %, --min-clock 1411 failed
// in "computation curve", a non-computation instruction's clock of 5000 MHz passed.
static void check_against_board(const PerseusRunSet& runs, const GpuModel& model, double pb, double floor_mhz) {
  if (pb > model.power_cap_w())
    throw InputError("--p-blocking", "", "expected at most " + model.name() + "'s power cap (" + std::to_string(model.power_cap_w()) +
                                             " W), got " + std::to_string(pb) + " W");
  if (floor_mhz > model.max_sm_mhz())
    throw InputError("--min-clock", "", "expected at most " + model.name() + "'s highest SM clock (" + std::to_string(model.max_sm_mhz()) +
                                            " MHz), got " + std::to_string(floor_mhz) + " MHz");
  for (int n : runs.plans) check_plan_clocks(runs.schedule(n), model);
}

// --write-plans' directory, made where missing as -o's is, and checked before the work rather than after it.
static void prepare_plan_directory(const PerseusValidationOptions& o) {
  if (o.write_plans.empty()) return;
  if (!o.frontier) throw InputError("--write-plans", "", "needs the frontier (drop --no-frontier)");
  std::error_code ec;
  std::filesystem::create_directories(o.write_plans, ec);
  if (!is_directory(o.write_plans))
    throw InputError(o.write_plans, "--write-plans",
                     "expected a directory (or a path where one can be made)" + (ec ? ": " + ec.message() : std::string()));
}

Json validate_perseus(const std::string& dir, const PerseusValidationOptions& o) {
  PerseusRunSet runs = find_perseus_runs(dir);
  const std::optional<PerseusWorkload> wl = find_perseus_workload(dir, o.workloads.empty() ? default_perseus_workloads_file() : o.workloads);
  if (wl) runs.stages = wl->pp;
  prepare_plan_directory(o);
  PerseusValidationOptions mo = o;
  if (mo.gpu.empty() && wl) mo.gpu = wl->board;
  const GpuModel model = model_for(dir, mo);
  const double pb = o.p_blocking_w >= 0 ? o.p_blocking_w : model.idle_w();
  const double floor_mhz = o.min_sm_mhz >= 0 ? o.min_sm_mhz : calibrated_min_sm_mhz(model);
  check_against_board(runs, model, pb, floor_mhz);
  Json variants = Json::array();
  const std::string no_workload = "no run_sets.\"" + perseus_run_set_name(runs.dir) + "\" in " +
                                  (o.workloads.empty() ? default_perseus_workloads_file() : o.workloads) +
                                  " (keyed by the run folder's name): describe the workload there, or pass --workloads FILE, for a "
                                  "models-only prediction";
  const bool has_anchor = has_measured_anchor(runs, model, pb, wl ? "" : no_workload);
  const bool fits = o.fits && has_anchor;
  if (wl) variants.push_back(models_only_variant(runs, *wl, model, pb, floor_mhz, o, !fits && !o.write_plans.empty()));
  const std::string base_name = perseus_run_set_name(runs.dir);
  Json head = {{"runs", dir}, {"gpu", model.name()}, {"model_file", model.source_file()}, {"p_blocking_w", pb},
               {"frontier_min_sm_mhz", floor_mhz}, {"plans", runs.plans}, {"split_role", split_role(base_name)},
               {"workload", wl ? Json(wl->file + " (run_sets." + wl->run_set + ")") : Json(nullptr)}};
  if (!wl) head["models_only_skipped"] = no_workload;
  if (!runs.unmeasured.empty()) head["plans_without_measurement"] = runs.unmeasured;
  if (!runs.unscheduled.empty()) head["measurements_without_plan"] = runs.unscheduled;
  const PerseusMeasurement& first = runs.measurement(runs.plans.front());
  head["stages"] = first.stages, head["microbatches"] = first.microbatches, head["gpus_per_stage"] = first.gpus_per_stage;
  if (!fits) {
    head["anchor_plans"] = Json::array();
    head["fits_skipped"] = has_anchor ? "--no-fits" : "no plan runs every instruction at the highest clock: no measured anchor to fit on";
    head["method"] = "models only (see the variant); fitted variants skipped";
    head["variants"] = variants;
    head["board_fit_by_subset"] = Json::array();
    return head;
  }
  const PerseusPrediction base = build_perseus_prediction(runs, model, pb, 0, floor_mhz);
  std::vector<int> even, odd;
  for (int n : runs.plans) {
    if (std::find(base.anchor_plans.begin(), base.anchor_plans.end(), n) != base.anchor_plans.end()) continue;
    (n % 2 ? odd : even).push_back(n);
  }
  const std::string cap = std::to_string(static_cast<int>(model.power_cap_w())) + " W";
  std::string anchors;
  for (int n : base.anchor_plans) anchors += (anchors.empty() ? "" : ", ") + std::to_string(n);
  variants.push_back(run_variant("measured anchor", "fitted on this run set: every computation's time and each rank's busy power from its "
                                 "measured all-max plans (" + anchors + "), moved by the model (" + model.name() + ", cap " + cap + ")",
                                 runs, base, model, o, {}, false, false));
  Json stability = Json::array();
  if (!even.empty()) {
    // The ceiling alone, with the model's time shares (fitted on GPT-3 175B stage profiles): no frontier,
    // it is there to show what the time share adds.
    const BoardResponse ceiling = fit_board_response(runs, even, base, model, false);
    const PerseusPrediction capped = build_perseus_prediction(runs, model, pb, ceiling.cap_clock_mhz, floor_mhz);
    Json vc = run_variant("cap-clock fit", "fitted on this run set: the model with the board's clock ceiling " + std::to_string(static_cast<int>(ceiling.cap_clock_mhz)) +
                                               " MHz fitted on the per-computation times of the even-numbered plans, the model's time shares; "
                                               "odd-numbered plans held out",
                          runs, capped, model, o, odd, false, false);
    vc["fit_rms_pct"] = ceiling.rms_pct, vc["fit_bins"] = ceiling.bins;
    variants.push_back(vc);
    // Each board's own ceiling and this run set's own pooled time share, on the same times: energy is
    // not fitted.
    const BoardResponse board = fit_board_response(runs, even, base, model, true, true);
    const PerseusPrediction fitted = build_perseus_prediction(runs, model, pb, board.cap_clock_mhz, floor_mhz, board.time_sm, board.rank_cap_clock_mhz);
    std::string ceilings;
    for (double c : board.rank_cap_clock_mhz) ceilings += (ceilings.empty() ? "" : " ") + std::to_string(std::lround(c));
    const std::string how = printf_text(
        "the model with each board's clock ceiling (%s MHz, per rank) and the computations' time share %.3f (model: "
        "%.3f / %.3f) fitted together on the per-computation times of the even-numbered plans; odd-numbered plans held out",
        ceilings.c_str(), board.time_sm, model.computation("forward")->time_sm, model.computation("backward")->time_sm);
    Json vb = run_variant("board fit", std::string("fitted on this run set: ") + how, runs, fitted, model, o, odd, !o.write_plans.empty(), true);
    vb["fitted_on_plans"] = even;
    vc["fitted_on_plans"] = even;
    vb["fit_rms_pct"] = board.rms_pct, vb["fit_bins"] = board.bins;
    // How much the figures rest on the ceilings: every rank's one table step (15 MHz on both GPUs) lower
    // and higher. The anchor's busy power is referred to g(ceiling), so energy moves with it.
    Json sens = Json::array();
    const double step = model.sm_clocks_mhz().size() > 1 ? model.sm_clocks_mhz()[1] - model.sm_clocks_mhz()[0] : 0.0;
    for (double shift : {-step, step}) {
      std::vector<double> shifted = board.rank_cap_clock_mhz;
      for (double& c : shifted) c = std::min(model.max_sm_mhz(), c + shift);
      const PerseusPrediction sp = build_perseus_prediction(runs, model, pb, board.cap_clock_mhz + shift, floor_mhz, board.time_sm, shifted);
      const Json sv = run_variant("shifted", "", runs, sp, model, o, odd, false, false);
      sens.push_back({{"shift_mhz", shift}, {"time_mape_pct", sv["time_mape_pct"]}, {"energy_mape_pct", sv["energy_mape_pct"]}});
    }
    vb["ceiling_sensitivity"] = sens;
    variants.push_back(vb);
    // The same fit on other subsets: a property of the board and the workload should not move with them.
    std::vector<std::pair<double, int>> by_time;
    for (int n : runs.plans)
      if (std::find(base.anchor_plans.begin(), base.anchor_plans.end(), n) == base.anchor_plans.end())
        by_time.push_back({runs.measurement(n).mean_iteration_s(), n});
    std::sort(by_time.begin(), by_time.end());
    std::vector<int> faster, slower;
    for (std::size_t i = 0; i < by_time.size(); ++i) (2 * i < by_time.size() ? faster : slower).push_back(by_time[i].second);
    const std::pair<const char*, const std::vector<int>*> subsets[] = {
        {"even-numbered plans", &even}, {"odd-numbered plans", &odd}, {"faster half", &faster}, {"slower half", &slower}};
    for (const auto& sub : subsets) {
      if (sub.second->empty()) continue;
      const BoardResponse r = sub.second == &even ? board : fit_board_response(runs, *sub.second, base, model, true, true);
      stability.push_back({{"fitted_on", sub.first}, {"plans", *sub.second}, {"rank_cap_clock_mhz", r.rank_cap_clock_mhz},
                           {"time_sm", r.time_sm}, {"rms_pct", r.rms_pct}});
    }
  }
  head["anchor_plans"] = base.anchor_plans;
  head["anchor_iteration_s"] = base.anchor_iteration_s;
  head["anchor_energy_j"] = base.anchor_energy_j;
  head["method"] = "models only first (no number of the run set's plans used); then fitted on the run set: per plan, each computation's "
                   "measured time at the highest clock (anchor plans, iterations after the warm-up) moved to the plan's clock by the "
                   "stage model, its energy from the rank's measured busy power; the 1F1B DAG's longest path with the measured loads "
                   "and the anchor's remaining time (p2p, optimizer); energy = computations + P_blocking x other GPU-seconds";
  head["board_fit_by_subset"] = stability;
  head["variants"] = variants;
  return head;
}

namespace {

// A variant's second and third lines: what lies outside the computations, busy power and share per rank, the anchor's clock.
void format_variant_header(std::ostringstream& os, const Json& v) {
  char buf[512];
  if (v.contains("outside_dag")) {
    const Json& od = v["outside_dag"];
    std::snprintf(buf, sizeof buf, "   outside the computations, modelled: transfer %.2f ms per stage boundary, load %.1f ms per micro-batch "
                  "(first and last stage), gradient all-reduce %.3f s, optimizer step %.3f s\n",
                  1e3 * od["p2p_s_per_transfer"].get<double>(), 1e3 * od["load_s_per_microbatch"].get<double>(),
                  od["allreduce_s"].get<double>(), od["optimizer_s"].get<double>());
    os << buf << "   busy power per rank (W):";
  } else {
    std::snprintf(buf, sizeof buf, "   time not covered by the DAG (from the anchor): %.3f s; busy power per rank (W):",
                  v["residual_s"].get<double>());
    os << buf;
  }
  for (const Json& w : v["busy_power_w"]) os << " " << std::lround(w.get<double>());
  os << " (busy share";
  for (const Json& rk : v["per_rank"]) {
    std::snprintf(buf, sizeof buf, " %.2f", rk["busy_share"].get<double>());
    os << buf;
  }
  if (v["rank_cap_clock_mhz"].is_null()) {
    std::snprintf(buf, sizeof buf, ")\n   clock at the requested highest (the anchor's): forward %.0f, backward %.0f MHz",
                  v["anchor_sm_mhz"]["forward"].get<double>(), v["anchor_sm_mhz"]["backward"].get<double>());
    os << buf;
  } else {
    os << ")\n   clock at the requested highest (the anchor's), per rank (MHz):";
    for (const Json& c : v["rank_cap_clock_mhz"]) os << " " << std::lround(c.get<double>());
  }
  if (v.contains("fit_rms_pct")) {
    std::snprintf(buf, sizeof buf, "; time-ratio fit rms %.2f %% over %d (stage, pass, clock) conditions", v["fit_rms_pct"].get<double>(),
                  v["fit_bins"].get<int>());
    os << buf;
  }
}

}  // namespace

std::string format_perseus_report(const Json& r) {
  std::ostringstream os;
  char buf[512];
  os << printf_text("Perseus runs %s: %d stages x %d micro-batches, %zu plans, GPU model %s, P_blocking %.1f W\n",
                    r["runs"].get<std::string>().c_str(), r["stages"].get<int>(), r["microbatches"].get<int>(), r["plans"].size(),
                    r["gpu"].get<std::string>().c_str(), r["p_blocking_w"].get<double>());
  os << "run set in models/calibration/perseus-split.json: " << r["split_role"].get<std::string>()
     << (r["gpus_per_stage"].get<int>() > 1 ? "; " + std::to_string(r["gpus_per_stage"].get<int>()) + " GPUs per stage (dp x tp)" : "")
     << "\n";
  if (r.contains("anchor_iteration_s")) {
    std::snprintf(buf, sizeof buf, "measured anchor (all-max plans %s): %.3f s, %.1f kJ per iteration\n", r["anchor_plans"].dump().c_str(),
                  r["anchor_iteration_s"].get<double>(), r["anchor_energy_j"].get<double>() / 1e3);
    os << buf;
  }
  if (r.contains("models_only_skipped")) os << "models only skipped: " << r["models_only_skipped"].get<std::string>() << "\n";
  if (r.contains("fits_skipped")) os << "fitted variants skipped: " << r["fits_skipped"].get<std::string>() << "\n";
  if (r.contains("plans_without_measurement"))
    os << "plans with a schedule and no N.prof.json beside it, not compared: " << r["plans_without_measurement"].dump() << "\n";
  if (r.contains("measurements_without_plan"))
    os << "measurements N.prof.json with no N.sched.json beside them, not compared: " << r["measurements_without_plan"].dump() << "\n";
  os << r["method"].get<std::string>() << "\n";
  for (const Json& v : r["variants"]) {
    os << "\n== " << v["name"].get<std::string>() << ": " << v["how"].get<std::string>() << "\n";
    format_variant_header(os, v);
    os << "\n plan   measured s  predicted s  time err %   measured kJ  predicted kJ  energy err %\n";
    for (const Json& row : v["rows"]) {
      std::snprintf(buf, sizeof buf, " %4d%s %11.3f %12.3f %11.2f %13.2f %13.2f %13.2f\n", row["plan"].get<int>(),
                    row["anchor"].get<bool>() ? "a" : (row["held_out"].get<bool>() ? "h" : " "), row["measured_iteration_s"].get<double>(),
                    row["predicted_iteration_s"].get<double>(), row["time_error_pct"].get<double>(),
                    row["measured_energy_j"].get<double>() / 1e3, row["predicted_energy_j"].get<double>() / 1e3,
                    row["energy_error_pct"].get<double>());
      os << buf;
    }
    const bool models_only = v["name"] == "models only";
    if (models_only)
      std::snprintf(buf, sizeof buf, " MAPE over all %d plans, none of them seen by any fit: time %.2f %%, energy %.2f %% (targets 3 %% / 6 %%)\n",
                    v["plans"].get<int>(), v["time_mape_pct"].get<double>(), v["energy_mape_pct"].get<double>());
    else
      std::snprintf(buf, sizeof buf, " MAPE over all %d plans: time %.2f %%, energy %.2f %% (targets 2 %% / 5 %%); without the anchors: %.2f %% / %.2f %%\n",
                    v["plans"].get<int>(), v["time_mape_pct"].get<double>(), v["energy_mape_pct"].get<double>(),
                    v["time_mape_non_anchor_pct"].get<double>(), v["energy_mape_non_anchor_pct"].get<double>());
    os << buf;
    if (v.contains("fitted_on_plans") && !v["fitted_on_plans"].empty()) os << " fitted on plans " << v["fitted_on_plans"].dump() << "\n";
    if (v.contains("time_mape_held_out_pct") && !models_only) {
      std::snprintf(buf, sizeof buf, " held out (h, %d odd-numbered plans): time %.2f %%, energy %.2f %%\n", v["held_out_plans"].get<int>(),
                    v["time_mape_held_out_pct"].get<double>(), v["energy_mape_held_out_pct"].get<double>());
      os << buf;
    }
    os << " per rank, mean energy error over the non-anchor plans (%):";
    for (const Json& rk : v["per_rank"]) {
      std::snprintf(buf, sizeof buf, " %+.1f", rk["energy_error_mean_pct"].get<double>());
      os << buf;
    }
    os << "\n";
    if (v["name"] == "board fit" && r.contains("board_fit_by_subset")) {
      os << " the same fit on other subsets (ceilings per rank, MHz / time share):";
      for (const Json& f : r["board_fit_by_subset"]) {
        os << " " << f["fitted_on"].get<std::string>();
        for (const Json& c : f["rank_cap_clock_mhz"]) os << " " << std::lround(c.get<double>());
        std::snprintf(buf, sizeof buf, " / %.3f;", f["time_sm"].get<double>());
        os << buf;
      }
      os << "\n";
      if (v.contains("ceiling_sensitivity")) {
        os << " every ceiling one table step off:";
        for (const Json& c : v["ceiling_sensitivity"]) {
          std::snprintf(buf, sizeof buf, " %+.0f MHz: time %.2f %%, energy %.2f %%;", c["shift_mhz"].get<double>(), c["time_mape_pct"].get<double>(),
                        c["energy_mape_pct"].get<double>());
          os << buf;
        }
        os << "\n";
      }
    }
    if (!v.contains("frontier")) continue;
    const Json& f = v["frontier"];
    std::snprintf(buf, sizeof buf,
                  " frontier: %zu points in %.2f s (%zu cuts, %zu max-flows, %zu without lengthening; quantum %.1f ms; clocks >= %.0f MHz)\n",
                  f["points"].get<std::size_t>(), f["solve_s"].get<double>(), f["iterations"].get<std::size_t>(),
                  f["max_flows"].get<std::size_t>(), f["fallback_cuts"].get<std::size_t>(), 1e3 * f["quantum_s"].get<double>(),
                  r["frontier_min_sm_mhz"].get<double>());
    os << buf;
    std::snprintf(buf, sizeof buf, " no slowdown: %.3f s, %.2f kJ vs all-max %.3f s, %.2f kJ: %.1f %% less energy (model)\n",
                  f["no_slowdown"]["iteration_s"].get<double>(), f["no_slowdown"]["energy_j"].get<double>() / 1e3,
                  f["all_max"]["iteration_s"].get<double>(), f["all_max"]["energy_j"].get<double>() / 1e3,
                  f["no_slowdown"]["energy_saved_pct"].get<double>());
    os << buf << " Perseus's plans vs ours at the same (predicted) iteration time, through this model:\n"
       << " plan  Perseus s  Perseus kJ    ours s   ours kJ  ours - Perseus %\n";
    for (const Json& c : f["vs_perseus"]) {
      std::snprintf(buf, sizeof buf, " %4d %10.3f %11.2f %9.3f %9.2f %17.2f\n", c["plan"].get<int>(), c["perseus_iteration_s"].get<double>(),
                    c["perseus_energy_j"].get<double>() / 1e3, c["ours_iteration_s"].get<double>(), c["ours_energy_j"].get<double>() / 1e3,
                    c["energy_diff_pct"].get<double>());
      os << buf;
    }
    std::snprintf(buf, sizeof buf, " worst: ours %+.2f %% vs Perseus (target <= +0.5 %%); comparison took %.2f s\n",
                  f["max_energy_diff_pct"].get<double>(), f["compare_s"].get<double>());
    os << buf;
    if (v.contains("plans_written"))
      os << " our plans (no-slowdown and ours-at-N, Perseus's N.sched.json format): " << v["plans_written"].get<std::string>() << "\n";
  }
  return os.str();
}

}  // namespace dvfs
