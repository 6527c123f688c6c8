#include "sim/simulation/simulation.hpp"

#include "models/src/retarget.hpp"
#include "sim/planning/planned_policies.hpp"
#include "sim/simulation/policy_catalog.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/prior_regime.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/parallel.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/rank_numbered.hpp"
#include "sim/core/text_format.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/results/summary.hpp"
#include "traces/src/multi_rank.hpp"
#include "traces/src/recording.hpp"
#include "traces/src/trace_formats.hpp"
#include "traces/src/workload_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sys/stat.h>

namespace dvfs {

std::vector<std::string> rank_directories(const std::string& dir) {
  // every sub-folder named rank<N>: they must be rank0 .. rank<n-1>, none skipped and none spelt otherwise
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  return rank_numbered_entries({dir + "/rank", {""}, true, "rank folders", kMaxSimulatedGpus});
}

std::vector<std::string> rank_trace_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return {};
  for (const char* own : {"trace.json.gz", "trace.json", "run.json"})
    if (fs::exists(fs::path(dir) / own, ec)) return {};
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const auto ends = [&](std::string_view tail) { return name.size() > tail.size() && ends_with(name, tail); };  // a name, not only the suffix
    if (e.is_regular_file(ec) && (ends(".json") || ends(".json.gz"))) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out.size() >= 2 ? out : std::vector<std::string>{};
}

std::vector<LoadedTrace> load_each_trace(const std::vector<std::string>& paths) {
  std::vector<LoadedTrace> out(paths.size());
  // the first file's error, as a one-by-one load would report it
  parallel_for_each_index(paths.size(), std::min(kMaxTraceLoadThreads, hardware_threads()),
                          [&](std::size_t i) { out[i] = load_trace(paths[i]); });
  return out;
}

LoadedTrace load_traces(const std::vector<std::string>& paths) {
  if (paths.size() == 1) {
    if (const std::vector<std::string> ranks = rank_directories(paths.front()); !ranks.empty()) return load_traces(ranks);
    if (const std::vector<std::string> files = rank_trace_files(paths.front()); !files.empty()) return load_traces(files);
    return load_trace(paths.front());
  }
  if (paths.size() > static_cast<std::size_t>(kMaxSimulatedGpus))
    throw InputError(paths.front(), "trace", "expected at most " + std::to_string(kMaxSimulatedGpus) +
                                                 " rank traces, GPUs simulated side by side (README \"Limits and bad input\"), got " + std::to_string(paths.size()));
  std::vector<RankTrace> parts;
  LoadedTrace t;
  std::vector<std::string> notes;
  std::vector<LoadedTrace> loaded = load_each_trace(paths);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& p = paths[i];
    LoadedTrace one = std::move(loaded[i]);
    for (const std::string& n : one.report.notes) notes.push_back(p + ": " + n);
    if (t.report.schema.empty()) t.report = one.report;
    else t.report.activities += one.report.activities, t.report.overlapped_activities += one.report.overlapped_activities;
    if (one.report.device_platform == "rocm") t.report.device_platform = "rocm", t.report.device_name = one.report.device_name;
    parts.push_back({std::move(one.workload), p, one.report.world_size, one.report.backend});
  }
  t.workload = merge_rank_workloads(std::move(parts), &notes);
  t.report.notes = notes;
  return t;
}

namespace {

LoadedTrace load_trace_uncached(const std::string& path) {
  Classifier classifier = Classifier::load_default();
  LoadedTrace t;
  if (is_directory(path) && file_exists(path + "/telemetry.csv") && file_exists(path + "/run.json")) {
    // A full recording: kernels get their recorded clocks, steps their measured bounds.
    Recording rec = load_recording(path, classifier);
    t.workload = std::move(rec.workload);
    t.report = rec.import_report;
  } else if (is_directory(path)) {
    const std::string trace = find_trace_file(path);
    t.workload = import_kineto(trace, classifier, &t.report);
    if (file_exists(path + "/telemetry.csv"))
      attach_recorded_clocks(t.workload, Telemetry::load_csv(path + "/telemetry.csv"), trace);
  } else {
    t.workload = import_trace_file(path, classifier, &t.report);  // the format's reader (traces/src/trace_formats.hpp)
  }
  return t;
}

// The workload cache's key of load_trace_uncached(path): every file it reads (traces/src/workload_cache.hpp).
// "" (no caching) where the load is going to fail anyway: the uncached load then reports it as always.
std::string trace_cache_key(const std::string& path) {
  const std::string rules = Classifier::default_path();
  if (!is_directory(path)) return workload_cache_key("trace-file", path, {path, rules});
  std::vector<std::string> candidates = {path + "/trace.json.gz", path + "/trace.json"};
  std::string trace;
  for (const std::string& c : candidates)
    if (file_exists(c) && trace.empty()) trace = c;
  if (trace.empty()) return "";
  const bool telemetry = file_exists(path + "/telemetry.csv");
  if (telemetry && file_exists(path + "/run.json"))
    return workload_cache_key("recording", path, {trace, path + "/telemetry.csv", path + "/run.json", rules});
  if (telemetry) return workload_cache_key("kineto-dir+telemetry", path, {trace, path + "/telemetry.csv", rules});
  return workload_cache_key("kineto-dir", path, {trace, rules});
}

}  // namespace

LoadedTrace load_trace(const std::string& path) {
  // No key (the files' digests) when the cache is off: cached_import would not use it.
  CachedImport c = cached_import(workload_cache_enabled() ? trace_cache_key(path) : std::string(), [&] {
    LoadedTrace t = load_trace_uncached(path);
    return CachedImport{std::move(t.workload), std::move(t.report)};
  });
  LoadedTrace t;
  t.workload = std::move(c.workload);
  t.report = std::move(c.report);
  return t;
}

std::string SimulationResult::timeline_csv() const { return dvfs::timeline_csv(outcomes); }

namespace {

// Refuses, before replaying, a run whose per-step rows or timeline would need gigabytes (the limits of
// sim/core/limits.hpp; the timeline estimate uses the recorded span, check_timeline the simulated one), and a
// top-level cluster the trace's ranks cannot use.
void check_run_inputs(const Scenario& sc, const Workload& wl) {
  const double repeat = sc.replay.repeat;
  double steps = 0, span_s = 0;
  for (const Rank& r : wl.ranks) {
    steps += static_cast<double>(r.steps.size());
    if (!r.kernels.empty()) span_s = std::max(span_s, r.recorded_start_s.back() + r.kernels.back().duration_s);
  }
  char msg[384];
  if (steps * repeat > kMaxReplayedSteps) {
    std::snprintf(msg, sizeof msg, "expected at most %.0f replayed steps in all (%.0f steps x repeat %.0f = %.3g)",
                  kMaxReplayedSteps, steps, repeat, steps * repeat);
    throw InputError(sc.file, "repeat", msg);
  }
  // The top-level cluster places collectives among ranks: with one rank it would change nothing, silently.
  if (sc.cluster_given && wl.ranks.size() < 2)
    throw InputError(sc.file, "cluster",
                     "a cluster places the collectives of several ranks, and this trace has one rank: drop `cluster`, or give the "
                     "job's rank traces (a list in `trace`, or a folder of rank<N>/ recordings)");
  const double dt = sc.replay.timeline_interval_s;
  if (dt > 0 && span_s * repeat / dt > kMaxTimelineRows) {
    // The least interval that would do, rounded up at 3 significant figures (rounded to nearest it could still fail).
    const double need = span_s * repeat / kMaxTimelineRows, unit = std::pow(10.0, std::floor(std::log10(need)) - 2);
    std::snprintf(msg, sizeof msg,
                  "expected at most %.0f timeline rows (recorded span %.6g s x repeat %.0f / interval %g s = %.3g rows): the trace is "
                  "longer than the timeline can sample; give output.timeline_interval_s >= %.3g s",
                  kMaxTimelineRows, span_s, repeat, dt, span_s * repeat / dt, std::ceil(need / unit) * unit);
    throw InputError(sc.file, "output.timeline_interval_s", msg);
  }
}

// The recorded policy (by name, as a scenario gives it: a Python policy in its place reads no recorded clock): it
// replays each kernel at its telemetry's clocks, so a trace needs some, and a clock far outside the model's table
// is no reading of a GPU (1 MHz ran at 345; another card's real 1980 MHz on an A100 model is taken to its nearest).
void check_recorded_clocks(const Scenario& sc, const Workload& wl, const GpuModel& model) {
  if (sc.policy.name != "recorded") return;
  bool any = false;
  const double lo = 0.5 * model.sm_clocks_mhz().front(), hi = 1.5 * model.sm_clocks_mhz().back();
  for (const Rank& r : wl.ranks)
    for (const Kernel& k : r.kernels) {
      if (k.recorded_sm_mhz <= 0) continue;  // unknown for this kernel
      any = true;
      if (k.recorded_sm_mhz >= lo && k.recorded_sm_mhz <= hi) continue;
      throw InputError(sc.trace_path, "telemetry sm_mhz",
                       printf_text("a recorded SM clock of %g MHz lies outside %s's clocks (%g-%g MHz): expected telemetry of a "
                                   "GPU (from half its lowest to 1.5 x its highest clock)",
                                   static_cast<double>(k.recorded_sm_mhz), model.name().c_str(), model.sm_clocks_mhz().front(),
                                   model.sm_clocks_mhz().back()));
    }
  if (!any)
    throw InputError(sc.file, "policy", "the recorded policy replays each kernel at the clocks its telemetry reported, and this trace has "
                                        "none (expected a recording folder with telemetry.csv, or a trace beside one)");
}

void check_timeline(const Scenario& sc, const std::vector<RankOutcome>& outcomes) {
  for (const RankOutcome& o : outcomes)
    if (o.meter.timeline_overflowed()) {
      char msg[256];
      std::snprintf(msg, sizeof msg, "expected at most %.0f timeline rows: the simulated run is longer than %.6g s at interval %g s",
                    kMaxTimelineRows, kMaxTimelineRows * sc.replay.timeline_interval_s, sc.replay.timeline_interval_s);
      throw InputError(sc.file, "output.timeline_interval_s", msg);
    }
}

}  // namespace

SimulationResult simulate(const Scenario& sc, const LoadedTrace& trace, const GpuModel& unbound) {
  // Per-kernel coefficients resolve against this trace's kernel names.
  check_run_inputs(sc, trace.workload);
  check_recorded_clocks(sc, trace.workload, unbound);
  const GpuModel model = bound_to_workload(unbound, trace.workload);
  SimulationResult r;
  const PolicyEntry* entry = policy_registry().find(sc.policy.name);
  if (entry && entry->plan) {
    // Planned policies plan against what the GPU does alone (the budget is relative to it).
    Scenario native = sc;
    native.policy = PolicySpec{};
    const std::vector<RankOutcome> reference =
        run_engine(trace.workload, model, make_policy_factory(native.policy, model, sc.file), sc.replay, sc.mode,
                   cluster_for(sc, model));
    PlannedRun planned = entry->plan(sc, trace.workload, model, reference);
    r.outcomes = std::move(planned.outcomes);
    check_timeline(sc, r.outcomes);
    r.summary = build_summary(sc, trace.workload, trace.report, model, r.outcomes);
    // A plan's solve time is wall-clock: it goes to timing.json, so that two runs write the same summary.
    for (Json& p : planned.plan)
      if (p.contains("solve_s")) r.timing["plan_solve_s"].push_back(p["solve_s"]), p.erase("solve_s");
    r.summary["plan"] = planned.plan;
    if (!trace.retargeted.is_null()) r.summary["trace_retargeted"] = trace.retargeted;
    return r;
  }
  // Online policies (make_policy_factory names the online family when the name is not one of them).
  return simulate_with_factory(sc, trace, model, make_policy_factory(sc.policy, model, sc.file));
}

SimulationResult simulate_with_factory(const Scenario& sc, const LoadedTrace& trace, const GpuModel& model,
                                       const PolicyFactory& factory) {
  check_run_inputs(sc, trace.workload);
  SimulationResult r;
  r.outcomes = run_engine(trace.workload, model, factory, sc.replay, sc.mode, cluster_for(sc, model));
  check_timeline(sc, r.outcomes);
  r.summary = build_summary(sc, trace.workload, trace.report, model, r.outcomes);
  if (!trace.retargeted.is_null()) r.summary["trace_retargeted"] = trace.retargeted;
  return r;
}

LoadedTrace load_scenario_trace(const Scenario& sc, const GpuModel& model) {
  LoadedTrace trace = load_traces(sc.trace_paths.empty() ? std::vector<std::string>{sc.trace_path} : sc.trace_paths);
  if (!sc.trace_gpu.empty()) {
    const GpuModel from = load_gpu_model(sc.trace_gpu, sc.file, "trace_gpu");
    if (from.name() != model.name()) {
      const RetargetReport rep = retarget_workload(trace.workload, from, model);
      trace.retargeted = {{"from", rep.from}, {"to", rep.to}, {"compute_ratio", rep.compute_ratio},
                          {"memory_ratio", rep.memory_ratio}, {"recorded_busy_s", rep.recorded_busy_s},
                          {"retargeted_busy_s", rep.retargeted_busy_s},
                          {"method", "per kernel: SM-bound share x tensor-throughput ratio, memory share x bandwidth "
                                     "ratio, rest kept (models/src/retarget.hpp)"}};
    }
  }
  return trace;
}

SimulationResult simulate(const Scenario& sc) {
  if (!sc.synthetic.is_null())
    throw InputError(sc.file, "synthetic", "a synthesised workload is run by `dvfs-sim run` / dvfs_sim.run (run_synthetic), not replayed as a trace");
  GpuModel model = load_gpu_model(sc.gpu, sc.file, "gpu");
  LoadedTrace trace = load_scenario_trace(sc, model);
  return simulate(sc, trace, model);
}

void make_directories(const std::string& dir) {
  std::string partial;
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!partial.empty() && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
        throw InputError(dir, "", std::string("cannot create output directory: ") + std::strerror(errno));
    }
    if (i < dir.size()) partial += dir[i];
  }
}

void write_results(const SimulationResult& r, const std::string& dir) {
  write_results(r.summary, r.outcomes, dir);
  if (r.timing.is_null()) return;
  std::ofstream t(dir + "/timing.json");
  t << r.timing.dump(2) << "\n";
  if (!t) throw InputError(dir, "", "cannot write timing.json");
}

void write_results(const Json& summary, const std::vector<RankOutcome>& outcomes, const std::string& dir) {
  make_directories(dir);
  std::ofstream s(dir + "/summary.json");
  s << summary.dump(2) << "\n";
  std::ofstream t(dir + "/timeline.csv");
  t << timeline_csv(outcomes);
  if (!s || !t) throw InputError(dir, "", "cannot write result files");
}

}  // namespace dvfs
