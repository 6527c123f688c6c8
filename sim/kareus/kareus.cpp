#include "sim/kareus/kareus.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/errors.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

namespace dvfs {

namespace {

template <class T>
std::vector<T> list_of(const JsonReader& r, const char* key, double lo, double hi) {
  const Json& j = r.raw(key);
  if (!j.is_array() || j.empty()) r.fail(key, "expected a non-empty list of numbers");
  std::vector<T> out;
  for (const Json& x : j) {
    if (!x.is_number() || x.get<double>() < lo || x.get<double>() > hi)
      r.fail(key, "expected numbers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out.push_back(x.get<T>());
  }
  return out;
}

bool is_collective(const Kernel& k) { return k.collective != 0; }

// One TP collective's overlapped share run beside the compute kernels [a, b) that follow it.
void overlap_collective(std::vector<Kernel>& ks, std::size_t c, std::size_t a, std::size_t b, double share, const KareusKnobs& knobs,
                        const ContentionModel& m, const GpuModel& model, const std::vector<CollectiveCall>& calls) {
  Kernel& comm = ks[c];
  double D = 0, sm = 0, mem = 0;
  for (std::size_t i = a; i < b; ++i) {
    D += ks[i].duration_s;
    sm += ks[i].sm_fill * ks[i].duration_s;
    mem += counted_memory_tbps(ks[i]) * ks[i].duration_s;
  }
  if (!(D > 0) || !(comm.duration_s > 0)) return;
  const double peak_tbps = model.specs().mem_bandwidth_gbs / 1000.0;
  const double bytes = comm.collective <= calls.size() ? calls[comm.collective - 1].bytes : 0.0;
  const double hbm_bytes = knobs.comm_hbm_bytes_per_byte * bytes;
  const double comm_tbps = hbm_bytes / comm.duration_s / 1e12;
  const StreamDemand compute{std::clamp(sm / D, 1e-3, 1.0), peak_tbps > 0 ? std::clamp(mem / D / peak_tbps, 0.0, 1.0) : 0.0};
  const StreamDemand collective{std::clamp(static_cast<double>(comm.sm_fill), 1e-3, 1.0), peak_tbps > 0 ? std::clamp(comm_tbps / peak_tbps, 0.0, 1.0) : 0.0};
  const std::vector<double> r = concurrent_rates(m, {compute, collective});
  const double O = share * comm.duration_s;
  double L, exposed = 0, hidden = O;
  if (O / r[1] <= D / r[0]) {
    L = O / r[1];
  } else {
    L = D / r[0];
    hidden = r[1] * L;
    exposed = O - hidden;
  }
  const double stretch = (D + L * (1 - r[0])) / D;
  const double added_tbps = hbm_bytes * (hidden / comm.duration_s) / (D * stretch) / 1e12;
  for (std::size_t i = a; i < b; ++i) {
    ks[i].duration_s *= stretch;
    scale_work_rates(ks[i], 1.0 / stretch);
    if (counted_work(ks[i])) ks[i].memory_tbps = static_cast<float>(ks[i].memory_tbps + added_tbps);
  }
  // rates unchanged: the hidden share's bytes went onto the compute kernels above, the rest stay in the shorter time
  comm.duration_s = std::max(1e-9, comm.duration_s - O + exposed);
}

void rewrite_range(std::vector<Kernel>& ks, std::size_t first, std::size_t last, const KareusSetting& s, const KareusKnobs& knobs,
                   const ContentionModel& m, const GpuModel& model, const std::vector<CollectiveCall>& calls) {
  const double overhead = 1 + knobs.nano_batch_overhead * (s.nano_batches - 1);
  const double sms = std::max(1, model.sm_count());
  for (std::size_t i = first; i < last; ++i) {
    Kernel& k = ks[i];
    if (!is_collective(k)) {
      k.duration_s *= overhead;  // smaller launches run less efficiently: longer at the same power (rates unchanged)
    } else if (s.comm_sms > 0) {
      const double stretch = std::max(1.0, knobs.comm_sms_saturating / s.comm_sms);
      k.duration_s *= stretch;
      scale_work_rates(k, 1.0 / stretch);  // the same bytes in more time (an NCCL transfer priced by them)
      k.sm_fill = static_cast<float>(std::min(1.0, s.comm_sms / sms));
    }
  }
  if (!(s.overlap_window > 0) || s.nano_batches < 2) return;
  const double share = s.overlap_window * (s.nano_batches - 1) / s.nano_batches;
  for (std::size_t c = first; c < last; ++c) {
    if (!is_collective(ks[c])) continue;
    std::size_t b = c + 1;
    while (b < last && !is_collective(ks[b])) ++b;
    if (b > c + 1) overlap_collective(ks, c, c + 1, b, share, knobs, m, model, calls);
  }
}

}  // namespace

std::string default_kareus_knobs_path() { return data_dir() + "/models/kareus/knobs.json"; }

KareusKnobs load_kareus_knobs(const std::string& path) {
  const Json doc = read_json_file(path);
  const JsonReader r(doc, path, "");
  r.only_keys({"about", "nano_batches", "comm_sms", "overlap_windows", "comm_sms_saturating", "nano_batch_overhead",
               "comm_hbm_bytes_per_byte", "provenance"});
  KareusKnobs k;
  k.nano_batches = list_of<int>(r, "nano_batches", 1, 64);
  k.comm_sms = list_of<int>(r, "comm_sms", 1, 20);
  k.overlap_windows = list_of<double>(r, "overlap_windows", 0, 1);
  k.comm_sms_saturating = r.positive("comm_sms_saturating");
  k.nano_batch_overhead = r.non_negative("nano_batch_overhead");
  k.comm_hbm_bytes_per_byte = r.non_negative("comm_hbm_bytes_per_byte");
  if (!r.has("provenance")) r.fail("provenance", "expected where each figure comes from (an object)");
  return k;
}

std::string KareusSetting::label() const {
  if (identity()) return "perseus (1 nano-batch, no overlap)";
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d nano-batches, %d comm SMs, window %.2f", nano_batches, comm_sms, overlap_window);
  return buf;
}

std::vector<KareusSetting> kareus_settings(const KareusKnobs& k) {
  std::vector<KareusSetting> out = {KareusSetting{}};
  for (int n : k.nano_batches)
    for (int sms : k.comm_sms)
      for (double w : k.overlap_windows) {
        if (n < 2) continue;  // without a second nano-batch nothing overlaps: fewer SMs would only slow the collective
        out.push_back({n, sms, w});
      }
  return out;
}

KernelPipeline kareus_program(const KernelPipeline& kp, const KareusSetting& s, const KareusKnobs& k, const ContentionModel& m,
                              const GpuModel& model, const std::vector<std::string>&) {
  KernelPipeline out = kp;
  out.on_gpu_done = nullptr;
  if (s.identity()) return out;
  const int S = static_cast<int>(kp.stages.size());
  for (std::size_t v = 0; v < kp.forward.size(); ++v) {
    std::vector<Kernel>& ks = out.stages[v % static_cast<std::size_t>(S)].kernels;
    rewrite_range(ks, kp.forward[v].first, kp.forward[v].second, s, k, m, model, kp.collectives);
    rewrite_range(ks, kp.backward[v].first, kp.backward[v].second, s, k, m, model, kp.collectives);
  }
  return out;
}

double energy_at_time(const std::vector<std::pair<double, double>>& points, double time_s) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [t, e] : points)
    if (t <= time_s * (1 + 1e-12)) best = std::min(best, e);
  return best;
}

double time_at_energy(const std::vector<std::pair<double, double>>& points, double energy_j) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [t, e] : points)
    if (e <= energy_j * (1 + 1e-12)) best = std::min(best, t);
  return best;
}

KareusFrontier kareus_frontier(const KernelPipeline& kp, const std::vector<std::string>& names, const GpuModel& model,
                               const ReplayOptions& opts, const KareusKnobs& k, const ContentionModel& m) {
  const auto t0 = std::chrono::steady_clock::now();
  KareusFrontier out;
  out.settings = kareus_settings(k);
  std::vector<std::tuple<double, double, int>> all;
  for (std::size_t i = 0; i < out.settings.size(); ++i) {
    const KernelPipeline prog = kareus_program(kp, out.settings[i], k, m, model, names);
    // One quantum for every setting (the identity's: ~1/2000 of Perseus's fastest iteration), so that the frontiers
    // differ only where the settings do.
    out.frontiers.push_back(critical_path_frontier(prog, names, model, opts, i == 0 ? 0.0 : out.frontiers.front().quantum_s));
    for (const auto& [t, e] : out.frontiers.back().points) all.emplace_back(t, e, static_cast<int>(i));
  }
  std::sort(all.begin(), all.end());
  double lowest = std::numeric_limits<double>::infinity();
  for (const auto& [t, e, i] : all)
    if (e < lowest) {
      lowest = e;
      out.envelope.emplace_back(t, e);
      out.envelope_setting.push_back(i);
    }
  std::reverse(out.envelope.begin(), out.envelope.end());
  std::reverse(out.envelope_setting.begin(), out.envelope_setting.end());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

namespace {

PipelinePlan plan_kareus(const PipelinePlanRequest& q) {
  if (!q.clock_plan.empty()) throw InputError("clock_plan", "", "the kareus policy makes its own plan (clock_plan goes with critical-path)");
  if (q.pipeline->tp_ranks > 1)
    throw InputError("synthetic.unfold_tp", "", "the kareus policy needs each TP group folded into one actor (unfold_tp off)");
  const KareusKnobs knobs = load_kareus_knobs(default_kareus_knobs_path());
  const ContentionModel m = load_contention_model(data_dir() + "/models/contention/h200-streams.json");
  const KareusFrontier kf = kareus_frontier(*q.pipeline, *q.names, *q.model, *q.opts, knobs, m);
  const PipelineFrontier& perseus = kf.frontiers.front();
  const double target = perseus.fastest_s * (1 + q.spec.budget_pct / 100);
  // The settings are compared at the target, or at Perseus's fastest frontier point where the quantum rounded it up.
  const double at = std::max(target, perseus.points.empty() ? 0.0 : perseus.points.back().first);
  std::size_t best = 0;
  double best_e = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < kf.settings.size(); ++i) {
    const double e = energy_at_time(kf.frontiers[i].points, at);
    if (e < best_e) best_e = e, best = i;
  }
  auto prog = std::make_shared<KernelPipeline>(kareus_program(*q.pipeline, kf.settings[best], knobs, m, *q.model, *q.names));
  CriticalPathSettings cps;
  cps.policy = "critical-path";
  cps.target_s = target;
  PipelinePlan p;
  p.factory = critical_path_factory(*prog, *q.names, *q.model, *q.opts, cps, p.report);
  p.report["policy"] = "kareus";
  Json settings = Json::array();
  for (std::size_t i = 0; i < kf.settings.size(); ++i)
    settings.push_back({{"setting", kf.settings[i].label()},
                        {"fastest_s", kf.frontiers[i].fastest_s},
                        {"energy_at_target_j", std::isfinite(energy_at_time(kf.frontiers[i].points, at)) ? Json(energy_at_time(kf.frontiers[i].points, at)) : Json()}});
  p.report["kareus"] = {{"setting", kf.settings[best].label()},
                        {"nano_batches", kf.settings[best].nano_batches},
                        {"comm_sms", kf.settings[best].comm_sms},
                        {"overlap_window", kf.settings[best].overlap_window},
                        {"target_s", target},
                        {"perseus_energy_at_target_j", energy_at_time(perseus.points, at)},
                        {"kareus_energy_at_target_j", best_e},
                        {"frontier_s", kf.seconds},
                        {"settings", settings}};
  p.program = prog;
  return p;
}

}  // namespace

void register_kareus_policy(PolicyRegistry& r) {
  PolicyEntry e;
  e.name = "kareus";
  e.summary = "Kareus: nano-batches, SMs for communication and overlap window beside per-partition clocks; the least-energy "
              "plan of their frontier envelope at Perseus's fastest time x (1 + budget_pct)";
  e.kind = PolicyKind::pipeline;
  e.keys = {"budget_pct"};
  e.parse = [](const JsonReader&, const JsonReader* object, PolicySpec& spec) {
    if (object && object->has("budget_pct")) spec.budget_pct = object->number_in("budget_pct", 0.0, kMaxSlowdownBudgetPct, "%");
  };
  e.plan_pipeline = plan_kareus;
  r.add(e);
}

}  // namespace dvfs
