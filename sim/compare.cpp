#include "sim/compare.hpp"

#include "sim/simulation/kareus_study.hpp"
#include "sim/core/limits.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "sim/synthetic_run.hpp"

#include "sim/simulation/run_scenario.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/prior_regime.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/progress.hpp"
#include "sim/core/text_format.hpp"
#include "sim/core/workload.hpp"
#include "sim/simulation/policy_catalog.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <cstdio>
#include <sstream>

namespace dvfs {

void set_fixed_switch_latency(ReplayOptions& opts, double latency_s) {
  opts.sm_latency.mean_s = latency_s;
  opts.sm_latency.spread_s = 0.0;
  opts.mem_latency.mean_s = latency_s;
  opts.mem_latency.spread_s = 0.0;
}

std::vector<std::string> comparable_policies() {
  // Replays of a trace that need no settings: the online policies but static (which needs clocks), and the
  // planned ones; the pipeline policies need a synthetic workload.
  std::vector<std::string> out;
  for (const PolicyEntry& e : policy_registry().entries())
    if ((e.kind == PolicyKind::online && !e.accepts("sm_mhz")) || e.kind == PolicyKind::planned) out.push_back(e.name);
  return out;
}

std::vector<std::string> default_comparison() {
  std::vector<const PolicyEntry*> ranked;
  for (const PolicyEntry& e : policy_registry().entries())
    if (e.compare_rank > 0) ranked.push_back(&e);
  std::stable_sort(ranked.begin(), ranked.end(), [](const PolicyEntry* a, const PolicyEntry* b) { return a->compare_rank < b->compare_rank; });
  std::vector<std::string> out;
  for (const PolicyEntry* e : ranked) out.push_back(e->name);
  return out;
}

Json compare_policies(const Scenario& sc, const std::vector<std::string>& policies, double budget_pct, const std::string& trace_dir) {
  const GpuModel model = load_gpu_model(sc.gpu, sc.file, "gpu");
  const LoadedTrace trace = load_scenario_trace(sc, model);
  return compare_policies(sc, trace, model, policies, budget_pct, trace_dir);
}

namespace {

// A trace mostly priced by class priors (no operator shapes) gets savings that rest on the priors' class split, which
// differs from counted work (docs/design-notes.md, "Class priors set below the cap"): say so beside the table.
void add_class_prior_note(const Json& summary, Json& notes) {
  const Json& work = summary["trace"].value("work", Json::object());
  if (!summary["gpu"].value("activity_model", false) || !work.contains("class_prior_kernel_time_share")) return;
  const double share = work["class_prior_kernel_time_share"].get<double>();
  if (share <= kMostlyClassPriorShare) return;
  if (notes.is_null()) notes = Json::array();
  std::string note = std::to_string(static_cast<int>(std::lround(100 * share))) +
                     " % of the kernel time is priced by class priors (no counted work reached those kernels: no operator shapes, no link to "
                     "their operators, or CUDA-graph replays): differences between kernels, and "
                     "the savings of per-kernel policies, rest on the priors' class split; record with record_shapes=True for "
                     "counted work (docs/design-notes.md, \"Class priors set below the cap\")";
  if (work.contains("class_prior_at_cap_kernel_time_share"))  // which side of the cap (models/src/prior_regime.hpp)
    note += "; " + class_prior_regime_line(work["class_prior_at_cap_kernel_time_share"].get<double>(),
                                           summary["gpu"].contains("class_prior_regime"));
  notes.push_back(note);
}

bool takes_budget(const std::string& name) {
  const PolicyEntry* e = policy_registry().find(name);
  return e && e->kind == PolicyKind::planned;
}

bool comparable(const std::string& name) {
  const std::vector<std::string> names = comparable_policies();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// One comparison; `progress` counts one unit per replayed policy (a local bar when null).
Json compare_with_progress(const Scenario& base, const LoadedTrace& trace, const GpuModel& model,
                           const std::vector<std::string>& policies, double budget_pct, Progress* progress,
                           const std::string& trace_dir = "") {
  if (!(budget_pct >= 0) || !(budget_pct <= kMaxSlowdownBudgetPct))
    throw InputError("--budget", "", "expected a slowdown budget from 0 to 1000 %, got " + std::to_string(budget_pct));
  if (policies.empty()) throw InputError("--policies", "", "expected at least one policy to compare with native");
  std::vector<std::string> names = {"native"};
  for (const auto& p : policies) {
    if (p != "native" && std::find(names.begin(), names.end(), p) != names.end())
      throw InputError("--policies", "", "policy \"" + p + "\" is listed twice");
    if (p == "static") throw InputError("--policies", "", "static needs clocks: use static-best, or run a scenario with {\"name\": \"static\", ...}");
    if (!comparable(p))
      throw InputError("--policies", "", "unknown policy \"" + p + "\" (expected any of: " + join_names(comparable_policies()) + ")");
    if (p != "native") names.push_back(p);
  }
  Json rows = Json::array(), notes;
  double ref_e = 0, ref_t = 0;
  std::optional<Progress> local;
  if (!progress) progress = &local.emplace("compare " + model.name(), names.size());
  for (const auto& name : names) {
    progress->note(name);
    Scenario sc = base;
    sc.policy = PolicySpec{};
    sc.policy.name = name;
    if (takes_budget(name)) sc.policy.budget_pct = budget_pct;
    sc.replay.timeline_interval_s = 0;
    if (!trace_dir.empty()) sc.replay.record_activities = true, sc.replay.timeline_interval_s = base.replay.timeline_interval_s;
    const SimulationResult r = simulate(sc, trace, model);
    const Json& t = r.summary["totals"];
    const double e = t["energy_j"].get<double>(), time = t["time_s"].get<double>();
    if (name == "native") ref_e = e, ref_t = time;
    if (name == "native" && r.summary.contains("notes")) notes = r.summary["notes"];
    if (name == "native") add_class_prior_note(r.summary, notes);
    Json row = {{"policy", name},
                {"budget_pct", takes_budget(name) ? budget_pct : 0.0},
                {"energy_j", e},
                {"time_s", time},
                {"energy_saved_pct", 100.0 * (ref_e - e) / ref_e},
                {"slowdown_pct", 100.0 * (time - ref_t) / ref_t},
                {"clock_switches", t.value("clock_switches", Json(0))},
                {"switches_applied", t.value("switches_applied", Json(0))},
                {"switch_latency_s", t.value("switch_latency_s", Json(0.0))},
                {"switch_energy_j", t.value("switch_energy_j", Json(0.0))}};
    if (r.summary.contains("plan")) {
      const Json& p = r.summary["plan"][0];
      if (r.timing.contains("plan_solve_s")) row["plan_solve_s"] = r.timing["plan_solve_s"][0];
      row["plan_feasible"] = p["feasible"];
      if (p.contains("prediction")) row["prediction_accuracy"] = p["prediction"]["accuracy"];
      if (p.contains("chosen")) row["latency_aware_choice"] = p["chosen"];
      if (p.contains("budget_held")) row["budget_held"] = p["budget_held"];
    }
    if (!trace_dir.empty())
      row["trace"] = export_replay_trace(sc, trace.workload, model, r.outcomes, trace_dir + "/" + name + ".trace.json.gz")["file"];
    rows.push_back(row);
    progress->advance();
  }
  SwitchLatency lat = model.switch_latency();
  base.replay.sm_latency.apply_to(lat.sm);
  base.replay.mem_latency.apply_to(lat.mem);
  Json out = {{"scenario", base.name}, {"gpu", model.name()}, {"trace", base.trace_path},
              {"budget_pct", budget_pct}, {"sm_switch_latency_s", lat.sm.mean_s}, {"mem_switch_latency_s", lat.mem.mean_s},
              {"rows", rows}};
  if (!trace.retargeted.is_null()) out["trace_retargeted"] = trace.retargeted;
  if (!notes.is_null()) out["notes"] = notes;  // what the summaries say about the trace
  return out;
}

}  // namespace

Json compare_policies(const Scenario& base, const LoadedTrace& trace, const GpuModel& model,
                      const std::vector<std::string>& policies, double budget_pct, const std::string& trace_dir) {
  return compare_with_progress(base, trace, model, policies, budget_pct, nullptr, trace_dir);
}

Json compare_grid(const Scenario& base, const std::vector<std::string>& policies, const std::vector<double>& budgets_pct,
                  const std::vector<double>& latencies_s) {
  const auto t0 = std::chrono::steady_clock::now();
  const GpuModel model = load_gpu_model(base.gpu, base.file, "gpu");
  const LoadedTrace trace = load_scenario_trace(base, model);
  Json rows = Json::array();
  std::vector<std::optional<double>> lats(latencies_s.begin(), latencies_s.end());
  if (lats.empty()) lats.push_back(std::nullopt);  // the scenario's own (or the model's) latency
  // One unit per replay: native and each policy, for every latency and budget.
  const std::size_t per_budget = 1 + static_cast<std::size_t>(std::count_if(
      policies.begin(), policies.end(), [](const std::string& p) { return p != "native"; }));
  Progress progress("compare " + model.name(), lats.size() * budgets_pct.size() * per_budget);
  for (const auto& requested : lats) {
    Scenario sc = base;
    if (requested) {
      if (!(*requested >= 0) || !(*requested <= 3600))
        throw InputError("latencies", "", "expected switch latencies in [0, 3600] s, got " + std::to_string(*requested));
      set_fixed_switch_latency(sc.replay, *requested);
    }
    SwitchLatency eff = model.switch_latency();
    sc.replay.sm_latency.apply_to(eff.sm);
    const double lat = eff.sm.mean_s;
    for (double b : budgets_pct) {
      const Json t = compare_with_progress(sc, trace, model, policies, b, &progress);
      for (Json r : t["rows"]) {
        r["gpu"] = model.name();
        r["switching_time_s"] = r.value("switch_latency_s", 0.0);  // summed over the replay's switches
        r["switch_latency_s"] = lat;                                // the latency of one switch
        r["grid_budget_pct"] = b;
        rows.push_back(r);
      }
    }
  }
  return {{"scenario", base.name}, {"gpu", model.name()}, {"rows", rows},
          {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
}

std::string format_comparison(const Json& t) {
  std::ostringstream os;
  char buf[256];
  os << "compare " << t["scenario"].get<std::string>() << " on " << t["gpu"].get<std::string>() << " (budget "
     << t["budget_pct"].get<double>() << " %, SM switch latency " << t["sm_switch_latency_s"].get<double>() * 1e3
     << " ms)\n";
  if (t.contains("trace_retargeted"))
    os << "trace retargeted from " << t["trace_retargeted"]["from"].get<std::string>() << ": "
       << t["trace_retargeted"]["method"].get<std::string>() << "\n";
  // requests: clock requests the policy made (superseded ones included); applied: those that took effect.
  os << "policy              energy J    time s   saved %  slowdown %  requests   applied  note\n";
  for (const auto& r : t["rows"]) {
    std::string note;
    if (r.contains("prediction_accuracy")) {
      std::snprintf(buf, sizeof buf, "prediction accuracy %.1f %%", 100 * r["prediction_accuracy"].get<double>());
      note = buf;
    }
    if (r.contains("latency_aware_choice")) note = "chose " + r["latency_aware_choice"].get<std::string>();
    if (r.contains("plan_feasible") && !r["plan_feasible"].get<bool>()) note += " (budget infeasible: fastest pairs)";
    if (r.contains("budget_held") && !r["budget_held"].get<bool>()) note += " (budget not held in the replay)";
    if (r["clock_switches"].get<std::uint64_t>() > 0 && r.value("switches_applied", std::uint64_t{1}) == 0)
      note += " (no request took effect: each was superseded within the switch latency)";
    os << printf_text("%-18s %10.1f %9.4f %9.2f %11.2f %9llu %9llu  %s\n", r["policy"].get<std::string>().c_str(),
                      r["energy_j"].get<double>(), r["time_s"].get<double>(), r["energy_saved_pct"].get<double>(),
                      r["slowdown_pct"].get<double>(), static_cast<unsigned long long>(r["clock_switches"].get<std::uint64_t>()),
                      static_cast<unsigned long long>(r.value("switches_applied", std::uint64_t{0})), note.c_str());
  }
  return os.str();
}

std::string comparison_csv(const Json& t) {
  std::ostringstream os;
  os << "gpu,policy,budget_pct,sm_switch_latency_s,energy_j,time_s,energy_saved_pct,slowdown_pct,clock_switches,"
        "switches_applied,switch_latency_s,switch_energy_j,prediction_accuracy,latency_aware_choice\n";
  for (const auto& r : t["rows"]) {
    os << t["gpu"].get<std::string>() << "," << r["policy"].get<std::string>() << "," << r["budget_pct"].get<double>() << ","
       << t["sm_switch_latency_s"].get<double>() << "," << r["energy_j"].get<double>() << "," << r["time_s"].get<double>()
       << "," << r["energy_saved_pct"].get<double>() << "," << r["slowdown_pct"].get<double>() << ","
       << r["clock_switches"].get<std::uint64_t>() << "," << r.value("switches_applied", std::uint64_t{0}) << ","
       << r["switch_latency_s"].get<double>() << ","
       << r["switch_energy_j"].get<double>() << "," << (r.contains("prediction_accuracy") ? r["prediction_accuracy"].dump() : "")
       << "," << (r.contains("latency_aware_choice") ? r["latency_aware_choice"].get<std::string>() : "") << "\n";
  }
  return os.str();
}

Json compare_synthetic(const std::string& scenario_path, const std::vector<std::string>& policies_in, double budget_pct) {
  const Json doc = read_json_file(scenario_path);
  const Scenario sc = parse_scenario(doc, scenario_path, dirname_of(scenario_path));
  SyntheticRun base = synthetic_request(sc);
  base.budget_pct = budget_pct;
  const std::vector<std::string> policies = policies_in.empty() ? std::vector<std::string>{"max", "critical-path", "kareus"} : policies_in;
  Json rows = Json::array();
  double ref_t = 0, ref_e = 0;
  for (const std::string& p : policies) {
    const PolicyEntry& e = policy_registry().at(p, "--policies", "");
    if (e.kind == PolicyKind::planned) throw InputError("--policies", "", "\"" + p + "\" plans against a trace replay; a synthetic scenario takes online and pipeline policies");
    SyntheticRun req = base;
    req.policy = p;
    req.clock_plan.clear();
    req.policy_object = Json::object();
    const Json r = run_synthetic(req);
    const double t = r["iteration_s"].get<double>(), en = r["energy_j"].get<double>();
    if (rows.empty()) ref_t = t, ref_e = en;
    Json row = {{"policy", p}, {"iteration_s", t}, {"energy_j", en}, {"energy_vs_first_pct", 100 * (en / ref_e - 1)}, {"time_vs_first_pct", 100 * (t / ref_t - 1)}};
    if (r.contains("critical_path") && r["critical_path"].contains("kareus")) row["kareus_setting"] = r["critical_path"]["kareus"]["setting"];
    rows.push_back(row);
  }
  if (!base.clock_plan.empty()) {  // the scenario's own fixed plan (clock_plan) beside the policies, not planned over
    const Json r = run_synthetic(base);
    const double t = r["iteration_s"].get<double>(), en = r["energy_j"].get<double>();
    rows.push_back({{"policy", "clock_plan " + base.clock_plan.substr(base.clock_plan.find_last_of('/') + 1)},
                    {"iteration_s", t}, {"energy_j", en}, {"energy_vs_first_pct", 100 * (en / ref_e - 1)},
                    {"time_vs_first_pct", 100 * (t / ref_t - 1)}});
  }
  return {{"scenario", scenario_path}, {"budget_pct", budget_pct}, {"rows", rows}, {"study", kareus_study(base)}};
}

std::string format_synthetic_comparison(const Json& t) {
  std::string s = "replayed iteration (whole job), against " + t["rows"][0]["policy"].get<std::string>() + ":\n";
  for (const Json& r : t["rows"]) {
    const std::string setting = r.contains("kareus_setting") ? "  (" + r["kareus_setting"].get<std::string>() + ")" : "";
    s += printf_text("  %-40s %8.3f s %+6.1f %%   %10.1f kJ %+6.1f %%%s\n", r["policy"].get<std::string>().c_str(),
                     r["iteration_s"].get<double>(), r["time_vs_first_pct"].get<double>(), r["energy_j"].get<double>() / 1e3,
                     r["energy_vs_first_pct"].get<double>(), setting.c_str());
  }
  return s + "frontier study:\n" + format_kareus_study(t["study"]);
}

}  // namespace dvfs
