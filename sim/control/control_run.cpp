#include "sim/control/control_run.hpp"

#include "sim/core/text_format.hpp"
#include "sim/telemetry/window_stats.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dvfs {

ControllerSpec controller_named(const ControlScenario& sc, const std::string& name, const std::string& policy_file) {
  ControllerSpec c = sc.controller;
  if (!name.empty()) c.name = name;
  if (!policy_file.empty()) c.policy_file = policy_file;
  return c;
}

std::vector<ControllerSpec> checked_controllers(const ControlScenario& sc, const std::vector<std::string>& names,
                                                const std::string& policy_file, const std::string& where) {
  std::vector<ControllerSpec> specs;
  for (const std::string& name : names) {
    specs.push_back(controller_named(sc, name, policy_file));
    make_controller(specs.back(), where);  // unknown names fail before any run
    check_controller_budgets(sc, specs.back());
  }
  return specs;
}

Json run_control(const ControlScenario& sc, const ControllerSpec& cspec, const ControlRunOptions& opts) {
  check_controller_budgets(sc, cspec);
  const SessionSetup setup = make_session_setup(sc, cspec);
  std::unique_ptr<Controller> controller = make_controller(cspec, sc.file);
  const auto t0 = std::chrono::steady_clock::now();
  ControlSession s(setup);
  controller->start(s);
  const std::vector<int> controlled = controlled_budgets(s);
  double reward = 0;
  while (!s.done()) {
    s.advance();
    for (int b : controlled) reward += budget_reward(s, b, sc.reward);
    controller->control(s);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return session_summary(s, sc, controller->name(), reward, wall, opts.series);
}

Json session_summary(const ControlSession& s, const ControlScenario& sc, const std::string& controller, double reward, double wall,
                     bool series) {
  const SessionSetup& setup = s.setup();
  const double dur = s.now_s(), energy = s.energy_j(), gen = s.generated_tokens();
  Json budgets = Json::array();
  for (std::size_t b = 0; b < setup.budgets.size(); ++b) {
    const PowerBudget& pb = setup.budgets[b];
    std::vector<double> measured, exact;
    for (const IntervalReport& r : s.reports()) measured.push_back(r.budget_measured_w[b]), exact.push_back(r.budget_exact_w[b]);
    const double nameplate = setup.model->power_cap_w() * static_cast<double>(pb.gpus.size());
    Json windows = Json::array();
    for (double w : {setup.interval_s, 30.0, 300.0}) {
      if (w > dur + 1e-9) continue;
      const WindowSummary m = summarize_windows(measured, setup.interval_s, w, pb.budget_w, nameplate);
      const WindowSummary x = summarize_windows(exact, setup.interval_s, w, pb.budget_w, nameplate);
      windows.push_back({{"window_s", w}, {"windows", m.windows}, {"violation_rate", m.violation_rate}, {"peak_share", m.peak_share},
                         {"mean_w", m.mean_w}, {"exact_violation_rate", x.violation_rate}, {"exact_peak_share", x.peak_share}});
    }
    budgets.push_back({{"name", pb.name}, {"level", pb.level}, {"budget_w", pb.budget_w}, {"gpus", pb.gpus.size()},
                       {"controlled", pb.controlled}, {"nameplate_w", nameplate}, {"windows", windows}});
  }
  Json steps = Json::array();
  for (std::size_t j = 0; j < setup.jobs.size(); ++j) steps.push_back(s.steps_done(static_cast<int>(j)));
  Json out = {{"scenario", sc.name},
              {"file", sc.file},
              {"gpu", setup.model->name()},
              {"controller", controller},
              {"seed", setup.seed},
              {"duration_s", dur},
              {"interval_s", setup.interval_s},
              {"field", to_string(setup.field)},
              {"gpus", s.physical_gpus()},
              {"energy_j", energy},
              {"mean_power_w", dur > 0 ? energy / dur : 0.0},
              {"generated_tokens", gen},
              {"trained_tokens", s.trained_tokens()},
              {"tokens_per_s", dur > 0 ? gen / dur : 0.0},
              {"tokens_per_mwh", energy > 0 ? gen / (energy / 3.6e9) : 0.0},
              {"steps_done", steps},
              {"reward", reward},
              {"budgets", budgets},
              {"wall_s", wall},
              {"wall_per_interval_ms", s.tick() ? 1e3 * wall / s.tick() : 0.0},
              {"model_output", "dvfs-sim model output (GPU model " + setup.model->name() + ", " + setup.model->status() +
                                   "; decode kernels from the H200 decode recordings, training from the H200 GPT-3 XL layer)"}};
  if (series) {
    Json t = Json::array(), bm = Json::array(), bx = Json::array(), tok = Json::array(), trn = Json::array(), caps = Json::array(),
         conc = Json::array(), gen_share = Json::array();
    for (const IntervalReport& r : s.reports()) {
      t.push_back(r.t_end_s);
      bm.push_back(r.budget_measured_w);
      bx.push_back(r.budget_exact_w);
      double g = 0, tr = 0;
      for (double v : r.job_generated_tokens) g += v;
      for (double v : r.job_trained_tokens) tr += v;
      tok.push_back(g);
      trn.push_back(tr);
      double generating = 0;
      for (GpuPhase p : r.gpu_phase) generating += p == GpuPhase::generating;
      gen_share.push_back(r.gpu_phase.empty() ? 0.0 : generating / static_cast<double>(r.gpu_phase.size()));
    }
    out["series"] = {{"t_s", t}, {"budget_measured_w", bm}, {"budget_exact_w", bx}, {"generated_tokens", tok}, {"trained_tokens", trn},
                     {"share_generating", gen_share}};
  }
  return out;
}

std::string format_control_run(const Json& j) {
  std::ostringstream os;
  char buf[400];
  os << printf_text("control %s: %d GPUs (%s), controller %s, seed %llu, %.0f s simulated (%s every %.2f s)\n",
                    j["scenario"].get<std::string>().c_str(), j["gpus"].get<int>(), j["gpu"].get<std::string>().c_str(),
                    j["controller"].get<std::string>().c_str(), static_cast<unsigned long long>(j["seed"].get<std::uint64_t>()),
                    j["duration_s"].get<double>(), j["field"].get<std::string>().c_str(), j["interval_s"].get<double>());
  std::snprintf(buf, sizeof buf, "  generated %.0f tokens (%.0f tokens/s), trained %.0f; energy %.2f MJ (mean %.0f W); %.3g tokens per MWh\n",
                j["generated_tokens"].get<double>(), j["tokens_per_s"].get<double>(), j["trained_tokens"].get<double>(),
                j["energy_j"].get<double>() / 1e6, j["mean_power_w"].get<double>(), j["tokens_per_mwh"].get<double>());
  os << buf;
  for (const Json& b : j["budgets"]) {
    os << printf_text("  budget %s (%s, %zu GPUs, %.0f W%s):", b["name"].get<std::string>().c_str(),
                      b["level"].get<std::string>().c_str(), b["gpus"].get<std::size_t>(), b["budget_w"].get<double>(),
                      b["controlled"].get<bool>() ? ", controlled" : "");
    for (const Json& w : b["windows"]) {
      std::snprintf(buf, sizeof buf, "  %gs windows: violated %.1f %% (true power %.1f %%), peak %.0f %% of nameplate;",
                    w["window_s"].get<double>(), 100 * w["violation_rate"].get<double>(), 100 * w["exact_violation_rate"].get<double>(),
                    100 * w["peak_share"].get<double>());
      os << buf;
    }
    os << "\n";
  }
  os << printf_text("  reward %.2f; wall %.2f s (%.2f ms per control interval)\n  %s\n", j["reward"].get<double>(),
                    j["wall_s"].get<double>(), j["wall_per_interval_ms"].get<double>(),
                    j["model_output"].get<std::string>().c_str());
  return os.str();
}

Json compare_controllers(const ControlScenario& sc, const std::vector<ControllerSpec>& cs) {
  Json rows = Json::array();
  const Json* ref = nullptr;
  std::vector<Json> runs;
  for (const ControllerSpec& c : cs) runs.push_back(run_control(sc, c));
  for (const Json& r : runs)
    if (r["controller"] == "uncontrolled") {
      ref = &r;
      break;
    }
  auto first_controlled = [](const Json& r) {
    for (const Json& b : r["budgets"])
      if (b["controlled"].get<bool>()) return b;
    return r["budgets"].empty() ? Json::object() : r["budgets"][0];
  };
  auto rate = [](const Json& b, double w) {
    for (const Json& x : b.value("windows", Json::array()))
      if (std::fabs(x["window_s"].get<double>() - w) < 1e-9) return x["violation_rate"].get<double>();
    return -1.0;
  };
  // Throughput in generated tokens, or in trained tokens where no run generated any (training jobs only: 0 / 0 tokens
  // was printed as "-nan %" against uncontrolled).
  bool generated = false;
  for (const Json& r : runs) generated = generated || r["generated_tokens"].get<double>() > 0;
  const char* basis = generated ? "generated" : "trained";
  auto tokens = [&](const Json& r) { return r[generated ? "generated_tokens" : "trained_tokens"].get<double>(); };
  auto per_s = [&](const Json& r) { return r["duration_s"].get<double>() > 0 ? tokens(r) / r["duration_s"].get<double>() : 0.0; };
  auto per_mwh = [&](const Json& r) { return r["energy_j"].get<double>() > 0 ? tokens(r) / (r["energy_j"].get<double>() / 3.6e9) : 0.0; };
  for (const Json& r : runs) {
    const Json b = first_controlled(r);
    Json row = {{"controller", r["controller"]},
                {"violation_rate_interval", rate(b, r["interval_s"].get<double>())},
                {"violation_rate_30s", rate(b, 30.0)},
                {"energy_j", r["energy_j"]},
                {"tokens", basis},
                {"tokens_per_s", per_s(r)},
                {"tokens_per_mwh", per_mwh(r)},
                {"reward", r["reward"]}};
    if (ref) {
      const Json rb = first_controlled(*ref);
      const double v0 = rate(rb, r["interval_s"].get<double>());
      row["violations_vs_uncontrolled"] = v0 > 0 ? rate(b, r["interval_s"].get<double>()) / v0 - 1.0 : 0.0;
      // null where the uncontrolled run made no tokens of either kind (it finished no step in the time simulated)
      row["throughput_vs_uncontrolled"] = per_s(*ref) > 0 ? Json(per_s(r) / per_s(*ref)) : Json(nullptr);
      row["tokens_per_mwh_vs_uncontrolled"] = per_mwh(*ref) > 0 ? Json(per_mwh(r) / per_mwh(*ref) - 1.0) : Json(nullptr);
    }
    rows.push_back(row);
  }
  return {{"scenario", sc.name}, {"seed", sc.seed}, {"tokens", basis}, {"rows", rows}, {"runs", runs}};
}

std::string format_control_comparison(const Json& t) {
  std::ostringstream os;
  os << "controllers on " << t["scenario"].get<std::string>() << " (seed " << t["seed"].get<std::uint64_t>() << "; model output)\n";
  os << "  controller    viol. 0.5s  viol. 30s  energy MJ  tokens/s  vs uncontrolled  violations vs unc.  tokens/MWh\n";
  // A share in %, "-" where it does not apply (a rate of -1: the run is shorter than the window).
  auto pct = [](double v, bool signed_value = false) {
    if (!signed_value && v < 0) return std::string("-");
    char b[32];
    std::snprintf(b, sizeof b, signed_value ? "%+.1f %%" : "%.1f %%", 100 * v);
    return std::string(b);
  };
  bool no_reference_tokens = false;
  for (const Json& r : t["rows"]) {
    const Json& vs = r.value("throughput_vs_uncontrolled", Json());
    no_reference_tokens = no_reference_tokens || (r.contains("throughput_vs_uncontrolled") && vs.is_null());
    const std::string throughput = !r.contains("throughput_vs_uncontrolled") ? "-" : vs.is_null() ? "n/a" : pct(vs.get<double>());
    os << printf_text("  %-12s %10s %10s %10.2f %9.0f %14s %18s %11.3g\n", r["controller"].get<std::string>().c_str(),
                      pct(r["violation_rate_interval"].get<double>()).c_str(), pct(r["violation_rate_30s"].get<double>()).c_str(),
                      r["energy_j"].get<double>() / 1e6, r["tokens_per_s"].get<double>(), throughput.c_str(),
                      r.contains("violations_vs_uncontrolled") ? pct(r["violations_vs_uncontrolled"].get<double>(), true).c_str()
                                                               : "-",
                      r["tokens_per_mwh"].get<double>());
  }
  if (t.value("tokens", "generated") == "trained") os << "  tokens: trained tokens (the jobs generate none)\n";
  if (no_reference_tokens) os << "  vs uncontrolled: n/a, the uncontrolled run made no tokens (no step finished in the time simulated)\n";
  return os.str();
}

}  // namespace dvfs
