#include "sim/validate/validate.hpp"

#include "sim/validate/work_beyond_peak.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/prior_regime.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "sim/results/summary.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/simulation.hpp"
#include "traces/src/kernel_activity.hpp"
#include "traces/src/multi_rank.hpp"
#include "traces/src/recording.hpp"

#include <cmath>
#include <map>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace dvfs {

namespace {

// A step whose measured energy is interpolated over a span this long is named in the report: the counter advances
// every ~0.1 s; in the project's H200 GPT-3 XL recording the samples stop for 587 ms just after step 5 ends, so the
// counter advances bracketing that end lie 359 ms apart.
constexpr double kTelemetryGapS = 0.25;

double pct(double sim, double meas) { return meas != 0 ? 100.0 * (sim - meas) / meas : 0.0; }

// Steps whose measured energy leans on interpolation across missing telemetry (a stalled poller): named, not hidden.
Json telemetry_gaps(const Recording& rec) {
  Json steps = Json::array();
  double longest_s = 0;
  for (std::size_t i = 0; i < rec.steps.size(); ++i) {
    longest_s = std::max(longest_s, rec.steps[i].interpolated_span_s);
    if (rec.steps[i].interpolated_span_s > kTelemetryGapS) steps.push_back(i);
  }
  return {{"threshold_s", kTelemetryGapS}, {"longest_s", longest_s}, {"steps", steps},
          {"rule", "a step's measured energy is interpolated across the longest span without readings (counter: between "
                   "the advances or samples bracketing its bounds, or from the last advance to a bound after it; power "
                   "samples: between samples inside it); steps listed here have a span over threshold_s"}};
}

// One line when any step is listed; `who` names the rank of a multi-GPU job ("" for one GPU).
void format_telemetry_gaps(std::ostream& os, const Json& g, const std::string& who) {
  if (g["steps"].empty()) return;
  std::string steps;
  for (const Json& i : g["steps"]) steps += (steps.empty() ? "" : ", ") + std::to_string(i.get<std::size_t>());
  char buf[200];
  std::snprintf(buf, sizeof buf, " energy interpolated across up to %.0f ms between telemetry readings (counter advances or "
                "samples; over %.0f ms): not a measurement there\n", g["longest_s"].get<double>() * 1e3, g["threshold_s"].get<double>() * 1e3);
  os << "telemetry gap: " << who << (g["steps"].size() > 1 ? "steps " : "step ") << steps << buf;
}

// One clock source's replay beside the validation report: its trace and its timeline.
void write_replay_files(const Scenario& sc, const Workload& wl, const GpuModel& model, const SimulationResult& r,
                        const std::string& prefix) {
  export_replay_trace(sc, wl, model, r.outcomes, prefix + ".trace.json.gz");
  std::ofstream t(prefix + ".timeline.csv");
  t << timeline_csv(r.outcomes);
  if (!t) throw InputError(prefix + ".timeline.csv", "", "cannot write the timeline");
}

// The telemetry on the replay's time axis: the first measured step (run.json's t0) starts where the replay's
// first step starts (`sim_step0_s`).
void write_measured_csv(const Recording& rec, double sim_step0_s, const std::string& path) {
  std::ofstream f(path);
  f << "t_s,power_w,sm_mhz,mem_mhz\n";
  const double t0_ns = rec.steps.front().t0_ns;
  char line[128];
  for (const TelemetrySample& s : rec.telemetry.samples()) {
    const double t = (s.t_ns - t0_ns) * 1e-9 + sim_step0_s;
    if (t < 0 || s.t_ns > rec.steps.back().t1_ns) continue;
    std::snprintf(line, sizeof line, "%.6f,%.3f,%.1f,%.1f\n", t, s.power_instant_w >= 0 ? s.power_instant_w : s.power_w, s.sm_mhz, s.mem_mhz);
    f << line;
  }
  if (!f) throw InputError(path, "", "cannot write the measured telemetry");
}


}  // namespace

Scenario validation_scenario(const std::string& dir, const GpuModel& model, const char* source) {
  Scenario sc;
  sc.name = std::string("validate-") + source;
  sc.file = dir;
  sc.trace_path = dir;
  sc.gpu = model.source_file();
  sc.policy.name = source;
  sc.replay.timeline_interval_s = 0;
  return sc;
}

Recording load_validation_recording(const std::string& dir) {
  Recording rec = load_recording(dir, Classifier::load_default());
  if (rec.steps.empty())
    throw InputError(dir + "/run.json", "run.profiled_steps", "missing: validation needs the measured step bounds and energy");
  if (!rec.telemetry.has_energy())
    throw InputError(rec.telemetry.file(), "energy_mj",
                     rec.telemetry.energy_note().empty() ? "missing column: validation needs the NVML energy counter"
                                                         : rec.telemetry.energy_note() + " (expected an advancing NVML energy counter or power_mw samples)");
  for (std::size_t i = 0; i < rec.steps.size(); ++i)
    if (!(rec.steps[i].energy_j > 0))
      throw InputError(rec.telemetry.file(), rec.telemetry.energy_note().empty() ? "energy_mj" : "power_mw",
                       "measures " + std::to_string(rec.steps[i].energy_j) + " J over profiled step " + std::to_string(i) +
                           " (expected a positive energy: a step cannot be scored against nothing)");
  return rec;
}

Json validate_recording(const std::string& dir, const std::string& gpu, const std::string& out_dir, bool shapes_withheld) {
  Recording rec = load_validation_recording(dir);
  const std::size_t withheld = shapes_withheld ? withhold_operator_work(rec.workload) : 0;
  Json report = validate_recording(rec, load_gpu_model(gpu, "", "--gpu"), out_dir);
  if (shapes_withheld) report["shapes_withheld_kernels"] = withheld;
  return report;
}

Json validate_recording(const Recording& rec, const GpuModel& model, const std::string& out_dir) {
  const std::string& dir = rec.dir;
  LoadedTrace trace{rec.workload, rec.import_report, Json()};

  Json report;
  report["recording"] = dir;
  report["gpu"] = {{"name", model.name()}, {"status", model.status()}};
  report["measured_from"] =
      "step time: run.json profiled_steps t0_ns..t1_ns (GPU synchronised); step energy: NVML energy counter "
      "interpolated between its ~100 ms updates; mean SM clock: NVML clock samples";
  std::size_t resolved = 0;
  for (const MeasuredStep& m : rec.steps) resolved += m.energy_resolved ? 1 : 0;
  const double update_s = rec.telemetry.counter_update_interval_s();
  report["energy_counter"] = {
      {"update_interval_s", update_s},
      {"resolve_updates", kCounterResolveUpdates},
      {"min_resolved_step_s", kCounterResolveUpdates * update_s},
      {"steps_resolved", resolved},
      {"window_resolved", counter_resolves((rec.steps.back().t1_ns - rec.steps.front().t0_ns) * 1e-9, update_s)},
      {"rule", "a step's measured energy is compared only when the step spans >= " + std::to_string(kCounterResolveUpdates) +
                   " updates of the energy counter (update interval: median time between its advances in telemetry.csv); "
                   "otherwise only the profiled window (the total row) is: per-step energy and power figures of "
                   "unresolved steps (energy_resolved false) are interpolation, not measurement"}};
  report["telemetry_gaps"] = telemetry_gaps(rec);
  if (!rec.import_report.notes.empty()) report["import_notes"] = rec.import_report.notes;  // what the import could not size
  // A trace without operator shapes (PyTorch's default) is priced by class priors, whose error differs from counted
  // work's: say so where the figures are read (validate --models prints what it costs on held-out workloads).
  if (const double share = class_prior_kernel_time_share(rec.workload); model.activity().present && share > kMostlyClassPriorShare)
    report["class_prior_note"] = printf_text(
        "%.0f %% of the kernel time is priced by class priors: no counted work reached those kernels (the trace has no "
        "operator shapes for them, or they ran in CUDA-graph replays). Measured on held-out whole workloads with their "
        "shapes withheld, class priors over-price work below the power cap (most read high; `validate --models`, column "
        "\"shapes withheld\"; docs/validation.md); on the at-cap GPT-3 XL recordings they hold. Record with "
        "record_shapes=True (python3 -m dvfs_sim.record turns it on) for counted work",
        100 * share);
  if (!rec.telemetry.energy_note().empty()) {
    report["measured_from"] = "step time: run.json profiled_steps t0_ns..t1_ns (GPU synchronised); step energy: NVML power "
                              "samples integrated over the step (the energy counter is not usable); mean SM clock: NVML clock samples";
    report["energy_note"] = rec.telemetry.file() + ": " + rec.telemetry.energy_note();
  }
  Json sources = Json::array();
  double sim_step0_s = 0;
  if (!out_dir.empty()) make_directories(out_dir);
  for (const char* source : {"native", "recorded"}) {
    Scenario vsc = validation_scenario(dir, model, source);
    if (!out_dir.empty()) vsc.replay.record_activities = true, vsc.replay.timeline_interval_s = 0.01;
    SimulationResult r = simulate(vsc, trace, model);
    if (!out_dir.empty()) {
      write_replay_files(vsc, trace.workload, model, r, out_dir + "/" + source);
      if (!r.outcomes.empty() && !r.outcomes[0].meter.steps().empty()) sim_step0_s = r.outcomes[0].meter.steps()[0].start_s;
    }
    if (const Json& g = r.summary["gpu"]; g.contains("class_prior_regime")) report["gpu"]["class_prior_regime"] = g["class_prior_regime"];
    // which side of the cap the replay's pre-pass put the trace (its summary holds it wherever class priors price any kernel)
    if (const Json& w = r.summary["trace"]["work"];
        report.contains("class_prior_note") && !report.contains("class_prior_at_cap_kernel_time_share")) {
      const double at_cap = w["class_prior_at_cap_kernel_time_share"].get<double>();
      report["class_prior_at_cap_kernel_time_share"] = at_cap;
      report["class_prior_note"] =
          report["class_prior_note"].get<std::string>() + "; " + class_prior_regime_line(at_cap, r.summary["gpu"].contains("class_prior_regime"));
    }
    const Json& steps = r.summary["steps"];
    Json rows = Json::array();
    double mt = 0, st = 0, me = 0, se = 0, ape_t = 0, ape_e = 0, ape_p = 0;
    for (std::size_t i = 0; i < rec.steps.size(); ++i) {
      const MeasuredStep& m = rec.steps[i];
      const Json& s = steps[i];
      const double m_time = (m.t1_ns - m.t0_ns) * 1e-9, s_time = s["time_s"].get<double>();
      const double m_energy = m.energy_j, s_energy = s["energy_j"].get<double>();
      const double m_power = m_energy / m_time, s_power = s["mean_power_w"].get<double>();
      rows.push_back({{"step", i},
                      {"measured_time_s", m_time},
                      {"simulated_time_s", s_time},
                      {"time_error_pct", pct(s_time, m_time)},
                      {"measured_energy_j", m_energy},
                      {"measured_counter_energy_j", m.counter_energy_j},
                      {"simulated_energy_j", s_energy},
                      {"energy_error_pct", pct(s_energy, m_energy)},
                      {"measured_mean_power_w", m_power},
                      {"simulated_mean_power_w", s_power},
                      {"power_error_pct", pct(s_power, m_power)},
                      {"energy_resolved", m.energy_resolved},
                      {"measured_mean_sm_mhz", m.mean_sm_mhz},
                      {"simulated_mean_sm_mhz", s["mean_sm_mhz"].get<double>()}});
      mt += m_time;
      st += s_time;
      me += m_energy;
      se += s_energy;
      ape_t += std::fabs(pct(s_time, m_time));
      ape_e += std::fabs(pct(s_energy, m_energy));
      ape_p += std::fabs(pct(s_power, m_power));
    }
    const double n = static_cast<double>(rec.steps.size());
    sources.push_back({{"clock_source", source},
                       {"steps", rows},
                       {"total", {{"measured_time_s", mt},
                                  {"simulated_time_s", st},
                                  {"time_error_pct", pct(st, mt)},
                                  {"measured_energy_j", me},
                                  {"simulated_energy_j", se},
                                  {"energy_error_pct", pct(se, me)},
                                  {"measured_mean_power_w", me / mt},
                                  {"simulated_mean_power_w", se / st},
                                  {"power_error_pct", pct(se / st, me / mt)}}},
                       {"mape", {{"time_pct", ape_t / n}, {"energy_pct", ape_e / n}, {"mean_power_pct", ape_p / n}}}});
  }
  report["clock_sources"] = sources;
  report["work_beyond_peak"] = work_beyond_peak(rec.workload, model.specs());
  if (!out_dir.empty()) {
    write_measured_csv(rec, sim_step0_s, out_dir + "/measured.csv");
    std::ofstream(out_dir + "/validate.json") << report.dump(2) << "\n";
  }
  return report;
}

namespace {

// The MAPE line: energy and power over the steps the counter resolves, or, with none, the window's figures.
void format_mape(std::ostream& os, const Json& src, const Json& counter) {
  char buf[320];
  std::size_t n = 0, resolved = 0;
  double ape_e = 0, ape_p = 0;
  for (const Json& r : src["steps"]) {
    ++n;
    if (!r.value("energy_resolved", true)) continue;
    ++resolved;
    ape_e += std::fabs(r["energy_error_pct"].get<double>());
    ape_p += std::fabs(r["power_error_pct"].get<double>());
  }
  if (resolved == n) {
    std::snprintf(buf, sizeof buf, "MAPE over steps: time %.2f%%, energy %.2f%%, mean power %.2f%%\n",
                  src["mape"]["time_pct"].get<double>(), src["mape"]["energy_pct"].get<double>(),
                  src["mape"]["mean_power_pct"].get<double>());
    os << buf;
    return;
  }
  std::snprintf(buf, sizeof buf, "MAPE over steps: time %.2f%%", src["mape"]["time_pct"].get<double>());
  os << buf;
  if (resolved > 0) {
    std::snprintf(buf, sizeof buf, "; over the %zu of %zu steps the energy counter resolves: energy %.2f%%, mean power %.2f%%",
                  resolved, n, ape_e / static_cast<double>(resolved), ape_p / static_cast<double>(resolved));
    os << buf;
  }
  const double u = counter.is_object() ? counter["update_interval_s"].get<double>() : -1;
  if (counter.is_object() && !counter["window_resolved"].get<bool>()) {
    std::snprintf(buf, sizeof buf, "\nenergy: not resolved, not even over the whole profiled window (%.0f ms < %d x the "
                  "counter's %.0f ms updates): no measured energy figure; record more steps (--steps WARMUP:PROFILED)\n",
                  src["total"]["measured_time_s"].get<double>() * 1e3, kCounterResolveUpdates, u * 1e3);
    os << buf;
    return;
  }
  std::snprintf(buf, sizeof buf, "\nenergy per step: %s (steps shorter than %d x the counter's %.0f ms updates show '-'); "
                "the total row compares the whole profiled window: energy %+.2f%%\n",
                resolved ? "partly resolved" : "not resolved", kCounterResolveUpdates, u * 1e3,
                src["total"]["energy_error_pct"].get<double>());
  os << buf;
}

}  // namespace

std::string format_validation(const Json& rep) {
  std::ostringstream os;
  char buf[256];
  os << "validate " << rep["recording"].get<std::string>() << " on " << rep["gpu"]["name"].get<std::string>() << " ["
     << rep["gpu"]["status"].get<std::string>() << "]\n";
  os << "measured: " << rep["measured_from"].get<std::string>() << "\n";
  if (rep.contains("energy_note")) os << "note: " << rep["energy_note"].get<std::string>() << "\n";
  if (rep.contains("shapes_withheld_kernels"))
    os << "shapes withheld: " << rep["shapes_withheld_kernels"].get<std::size_t>()
       << " kernels priced by class priors instead of work counted from their operators' shapes\n";
  if (rep.contains("import_notes"))
    for (const Json& n : rep["import_notes"]) os << "import note: " << n.get<std::string>() << "\n";
  if (rep.contains("class_prior_note")) os << "note: " << rep["class_prior_note"].get<std::string>() << "\n";
  if (rep.contains("telemetry_gaps")) format_telemetry_gaps(os, rep["telemetry_gaps"], "");
  for (const Json& src : rep["clock_sources"]) {
    os << "\nclock source: " << src["clock_source"].get<std::string>() << "\n";
    std::snprintf(buf, sizeof buf, "%-5s %9s %9s %7s | %9s %9s %7s | %8s %8s %7s | %7s %7s\n", "step", "meas ms",
                  "sim ms", "err %", "meas J", "sim J", "err %", "meas W", "sim W", "err %", "meas MHz", "sim MHz");
    os << buf;
    auto line = [&](const std::string& label, const Json& r, bool clocks) {
      std::snprintf(buf, sizeof buf, "%-5s %9.2f %9.2f %+7.2f |", label.c_str(), r["measured_time_s"].get<double>() * 1e3,
                    r["simulated_time_s"].get<double>() * 1e3, r["time_error_pct"].get<double>());
      os << buf;
      if (r.value("energy_resolved", true))
        std::snprintf(buf, sizeof buf, " %9.2f %9.2f %+7.2f | %8.1f %8.1f %+7.2f |", r["measured_energy_j"].get<double>(),
                      r["simulated_energy_j"].get<double>(), r["energy_error_pct"].get<double>(),
                      r["measured_mean_power_w"].get<double>(), r["simulated_mean_power_w"].get<double>(),
                      r["power_error_pct"].get<double>());
      else  // the counter cannot resolve this step: no measured figure (see energy_counter.rule)
        std::snprintf(buf, sizeof buf, " %9s %9.2f %7s | %8s %8.1f %7s |", "-", r["simulated_energy_j"].get<double>(), "-",
                      "-", r["simulated_mean_power_w"].get<double>(), "-");
      os << buf;
      if (clocks) {
        std::snprintf(buf, sizeof buf, " %7.0f %7.0f", r["measured_mean_sm_mhz"].get<double>(),
                      r["simulated_mean_sm_mhz"].get<double>());
        os << buf;
      }
      os << "\n";
    };
    for (const Json& r : src["steps"]) line(std::to_string(r["step"].get<int>()), r, true);
    Json total = src["total"];
    if (rep.contains("energy_counter")) total["energy_resolved"] = rep["energy_counter"]["window_resolved"];
    line("total", total, false);
    format_mape(os, src, rep.contains("energy_counter") ? rep["energy_counter"] : Json());
  }
  const Json& beyond = rep["work_beyond_peak"];
  if (beyond.value("kernels", 0) > 0) {
    os << printf_text("\nwork beyond the part: %zu kernels (%.1f %% of kernel time) counted faster than %.2fx %s's datasheet "
                      "bandwidth or tensor peak (a miscount, or data served from L2 priced as DRAM bytes: their power is "
                      "over-priced); most time:\n",
                      beyond["kernels"].get<std::size_t>(), 100.0 * beyond["share_of_kernel_time"].get<double>(),
                      beyond["margin"].get<double>(), rep["gpu"]["name"].get<std::string>().c_str());
    for (const Json& t : beyond["top"]) {
      std::snprintf(buf, sizeof buf, "  %6zu x %8.2f ms  %6.2f TB/s  %7.1f tensor TFLOP/s  %.90s\n", t["kernels"].get<std::size_t>(),
                    t["seconds"].get<double>() * 1e3, t["memory_tbps"].get<double>(), t["tensor_tflops"].get<double>(),
                    t["name"].get<std::string>().c_str());
      os << buf;
    }
  }
  return os.str();
}

bool is_multi_rank_recording(const std::string& dir) { return !rank_directories(dir).empty(); }

Json validate_multi_rank(const std::string& dir, const std::string& gpu, const ClusterSpec& cluster) {
  std::vector<Recording> recs;
  std::vector<RankTrace> parts;
  for (const std::string& rank_dir : rank_directories(dir)) {
    recs.push_back(load_validation_recording(rank_dir));
    const Telemetry& tel = recs.back().telemetry;
    if (!tel.energy_note().empty()) std::fprintf(stderr, "dvfs-sim: note: %s: %s\n", tel.file().c_str(), tel.energy_note().c_str());
    parts.push_back({recs.back().workload, recs.back().dir, recs.back().import_report.world_size, recs.back().import_report.backend});
  }
  if (recs.empty()) throw InputError(dir, "rank0", "missing: expected rank<N>/ recordings of one job");
  const GpuModel model = load_gpu_model(gpu, "", "--gpu");
  std::vector<std::string> merge_notes;  // printed as the run's are: nothing the merge decides goes unsaid
  LoadedTrace trace{merge_rank_workloads(std::move(parts), &merge_notes), recs.front().import_report, Json()};
  for (const std::string& n : merge_notes) std::fprintf(stderr, "dvfs-sim: note: %s: %s\n", dir.c_str(), n.c_str());
  std::map<int, const Recording*> rec_of;  // global rank -> its recording
  for (const Recording& rec : recs) rec_of[rec.workload.ranks.front().id] = &rec;
  // Measured time in communication kernels per rank over the profiled steps (as replayed: their busy-union part).
  std::map<int, double> measured_comm;
  for (const Rank& r : trace.workload.ranks)
    for (const Kernel& k : r.kernels)
      if (k.step >= 0 && k.cls == KernelClass::communication) measured_comm[r.id] += k.duration_s;

  Json report;
  report["recording"] = dir;
  report["ranks"] = recs.size();
  report["gpu"] = {{"name", model.name()}, {"status", model.status()}};
  report["collectives"] = describe_collectives(trace.workload);
  report["measured_from"] = "per rank: step bounds of its run.json (GPU synchronised), NVML energy counter interpolated over them, "
                            "time in NCCL kernels from its trace; iteration time = the slowest rank's step";
  Json gaps = Json::array();
  for (const Recording& rec : recs) {
    Json g = telemetry_gaps(rec);
    g["rank"] = rec.workload.ranks.front().id;
    gaps.push_back(std::move(g));
  }
  report["telemetry_gaps"] = std::move(gaps);
  Json sources = Json::array();
  for (const char* source : {"native", "recorded"}) {
    Scenario sc = validation_scenario(dir, model, source);
    sc.cluster = cluster;
    SimulationResult res = simulate(sc, trace, model);
    std::map<std::pair<int, std::size_t>, const Json*> sim_step;
    for (const Json& st : res.summary["steps"]) sim_step[{st["rank"].get<int>(), st["index"].get<std::size_t>()}] = &st;
    Json ranks = Json::array();
    std::map<std::size_t, std::pair<double, double>> iteration;  // step -> (measured, simulated) slowest rank
    double ape_iter = 0;
    for (const RankOutcome& o : res.outcomes) {
      const Recording& rec = *rec_of.at(o.rank);
      double mt = 0, st = 0, me = 0, se = 0, ape_t = 0;
      for (std::size_t i = 0; i < rec.steps.size(); ++i) {
        const Json& s = *sim_step.at({o.rank, i});
        const double m_time = (rec.steps[i].t1_ns - rec.steps[i].t0_ns) * 1e-9, s_time = s["time_s"].get<double>();
        mt += m_time, st += s_time, me += rec.steps[i].energy_j, se += s["energy_j"].get<double>();
        ape_t += std::fabs(pct(s_time, m_time));
        auto& it = iteration[i];
        it.first = std::max(it.first, m_time), it.second = std::max(it.second, s_time);
      }
      const double sim_comm = o.meter.class_s()[static_cast<int>(KernelClass::communication)];
      const double n = static_cast<double>(rec.steps.size());
      ranks.push_back({{"rank", o.rank}, {"steps", rec.steps.size()},
                       {"measured_time_s", mt}, {"simulated_time_s", st}, {"time_error_pct", pct(st, mt)}, {"time_mape_pct", ape_t / n},
                       {"measured_energy_j", me}, {"simulated_energy_j", se}, {"energy_error_pct", pct(se, me)},
                       {"measured_communication_s", measured_comm[o.rank]}, {"simulated_communication_s", sim_comm},
                       {"communication_error_pct", pct(sim_comm, measured_comm[o.rank])}});
    }
    Json iters = Json::array();
    for (const auto& [i, mt] : iteration) {
      iters.push_back({{"step", i}, {"measured_s", mt.first}, {"simulated_s", mt.second}, {"error_pct", pct(mt.second, mt.first)}});
      ape_iter += std::fabs(pct(mt.second, mt.first));
    }
    sources.push_back({{"clock_source", source}, {"ranks", ranks}, {"iterations", iters},
                       {"iteration_time_mape_pct", iteration.empty() ? 0.0 : ape_iter / static_cast<double>(iteration.size())}});
  }
  report["clock_sources"] = sources;
  return report;
}

std::string format_multi_rank_validation(const Json& rep) {
  std::ostringstream os;
  char buf[320];
  os << "validate " << rep["recording"].get<std::string>() << " (" << rep["ranks"].get<std::size_t>() << " ranks) on "
     << rep["gpu"]["name"].get<std::string>() << " [" << rep["gpu"]["status"].get<std::string>() << "]\n";
  os << "measured: " << rep["measured_from"].get<std::string>() << "\n";
  os << collectives_line(rep["collectives"]);
  if (rep.contains("telemetry_gaps"))
    for (const Json& g : rep["telemetry_gaps"]) format_telemetry_gaps(os, g, "rank " + std::to_string(g["rank"].get<int>()) + " ");
  for (const Json& src : rep["clock_sources"]) {
    os << "\nclock source: " << src["clock_source"].get<std::string>() << "\n";
    std::snprintf(buf, sizeof buf, "%-5s %10s %10s %7s %8s | %10s %10s %7s | %9s %9s %7s\n", "rank", "meas s", "sim s", "err %",
                  "MAPE %", "meas J", "sim J", "err %", "comm ms", "sim ms", "err %");
    os << buf;
    for (const Json& r : src["ranks"]) {
      std::snprintf(buf, sizeof buf, "%-5d %10.4f %10.4f %+7.2f %8.2f | %10.1f %10.1f %+7.2f | %9.2f %9.2f %+7.1f\n", r["rank"].get<int>(),
                    r["measured_time_s"].get<double>(), r["simulated_time_s"].get<double>(), r["time_error_pct"].get<double>(),
                    r["time_mape_pct"].get<double>(), r["measured_energy_j"].get<double>(), r["simulated_energy_j"].get<double>(),
                    r["energy_error_pct"].get<double>(), r["measured_communication_s"].get<double>() * 1e3,
                    r["simulated_communication_s"].get<double>() * 1e3, r["communication_error_pct"].get<double>());
      os << buf;
    }
    std::snprintf(buf, sizeof buf, "iteration time (slowest rank per step) MAPE %.2f %%\n", src["iteration_time_mape_pct"].get<double>());
    os << buf;
  }
  return os.str();
}

}  // namespace dvfs
