#include "sim/cli/bench.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/bench_critical_path.hpp"
#include "sim/cli/command.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/json_util.hpp"
#include "sim/compare.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/synthetic_run.hpp"
#include "sim/planning/clock_plan.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/simulation/simulation.hpp"
#include "traces/src/gzip_file.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/kineto_stream.hpp"
#include "traces/src/workload_cache.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

namespace dvfs {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// Loading the default scenario's trace without the workload cache, into an empty one (import + entry written) and
// from it (best of 3), in a temporary cache directory: the user's own cache is not touched.
void bench_workload_cache(const std::string& trace_path) {
  char tmpl[] = "/tmp/dvfs-bench-cache-XXXXXX";
  if (!::mkdtemp(tmpl)) return;
  const char* old = std::getenv("DVFS_SIM_CACHE_DIR");
  const std::string saved = old ? old : "";
  ::setenv("DVFS_SIM_CACHE_DIR", tmpl, 1);
  const bool was_enabled = workload_cache_enabled();
  auto timed = [&](bool enabled) {
    set_workload_cache_enabled(enabled);
    const auto t = std::chrono::steady_clock::now();
    const LoadedTrace lt = load_trace(trace_path);
    return seconds_since(t);
  };
  const double uncached = timed(false);
  const double cold = timed(true);
  double cached = timed(true);
  for (int i = 0; i < 2; ++i) cached = std::min(cached, timed(true));
  const WorkloadCacheInfo info = WorkloadCache::user().info();
  WorkloadCache::user().clear();
  ::rmdir(tmpl);
  if (old) ::setenv("DVFS_SIM_CACHE_DIR", saved.c_str(), 1);
  else ::unsetenv("DVFS_SIM_CACHE_DIR");
  set_workload_cache_enabled(was_enabled);
  std::printf("  trace load, workload cache: no cache %.3f s, cold (import + entry) %.3f s, cached %.4f s = %.0fx"
              "   (entry %.1f MiB; whole process: bench/workload_cache.sh)\n",
              uncached, cold, cached, uncached / std::max(cached, 1e-9),
              static_cast<double>(info.bytes) / (1024.0 * 1024.0));
}

// The Kineto import's speed on the default scenario's trace (its JSON text in memory, no cache) against simdjson's
// own parse of the same text (DOM parse, best kernel for this CPU, nothing else done) in the same run, best of 3;
// and the import from the .gz file.
void bench_streaming_import(const std::string& scenario_trace) {
  std::string trace_path = scenario_trace;  // a recording directory holds its Kineto trace
  for (const char* name : {"/trace.json.gz", "/trace.json"})
    if (is_directory(scenario_trace) && file_exists(scenario_trace + name) && trace_path == scenario_trace) trace_path = scenario_trace + name;
  const std::string text = read_maybe_gzip(trace_path);
  const Classifier& classifier = Classifier::load_default();
  const double mb = static_cast<double>(text.size()) / 1e6;
  double parse = 1e300, streaming = 1e300, from_file = 1e300;
  bool ok = false;
  for (int i = 0; i < 3; ++i) {
    parse = std::min(parse, simdjson_parse_only_s(text, &ok));
    auto t = std::chrono::steady_clock::now();
    import_kineto_text(text, trace_path, classifier, nullptr, KinetoReader::streaming);
    streaming = std::min(streaming, seconds_since(t));
    t = std::chrono::steady_clock::now();
    import_kineto(trace_path, classifier, nullptr, KinetoReader::streaming);
    from_file = std::min(from_file, seconds_since(t));
  }
  std::printf("  Kineto import (%.1f MB JSON in memory): streaming %.3f s = %.0f MB/s; simdjson parse only %.3f s = %.0f MB/s%s;"
              " import at %.0f %% of it   target >= 50 %%   ratio %.2fx\n",
              mb, streaming, mb / streaming, parse, mb / parse, ok ? "" : " (failed)", 100 * parse / streaming, 2 * parse / streaming);
  std::printf("  Kineto import from the .gz file (inflate included): streaming %.3f s = %.0f MB/s of JSON"
              "   (the checked reader alone: bench/streaming_import.sh)\n",
              from_file, mb / from_file);
  std::printf("  peak memory per MB of trace, whole processes: bench/streaming_import.sh (large trace), bench/workload_cache.sh\n");
}

}  // namespace

Command bench_command() {
  Command c;
  c.name = "bench";
  c.summary = "replay throughput (kernel events/s), planning and multi-GPU timings and peak memory, against targets";
  c.description = "Times the default scenario, replay throughput in both engine modes, per-kernel planning, the kernel-DVFS\n"
                  "study grid, kernel-level pipelines and multi-GPU scale, the critical-path planner and the power-budget\n"
                  "control loop, each against its target. --quick: each section's smallest case only (a smoke run).";
  c.unknown_option = "bench takes only --events N and --quick; got ";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto events = std::make_shared<TextOption>();
    add_text_option(app, "--events", *events, "kernel events per throughput measurement (default 5e6)");
    auto quick = std::make_shared<bool>(false);
    app.add_flag("--quick", *quick, "each section's smallest case only: a smoke run, not a measurement of record");
    return [events, quick] {
      double n = 5e6;
      if (events->given()) {
        n = parse_number("--events", events->value, "a number of kernel events (> 0)");
        // 1e8 events keep the replay inside the run limits (sim/core/limits.hpp: timeline rows, replayed steps).
        if (!(n > 0) || n > 1e8) throw InputError("--events", "", "expected a number of kernel events in (0, 1e8], got " + events->value);
      }
      return run_bench(n, *quick);
    };
  };
  return c;
}

int run_bench(double target_events, bool quick) {
  auto t0 = std::chrono::steady_clock::now();
  Scenario sc = load_scenario(default_scenario_path());
  GpuModel model = load_gpu_model(sc.gpu, sc.file, "gpu");
  LoadedTrace trace = load_trace(sc.trace_path);
  const double load_s = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  SimulationResult def = simulate(sc, trace, model);
  const double default_sim_s = seconds_since(t1);
  const double total_default_s = seconds_since(t0);

  const double per_pass = static_cast<double>(trace.workload.kernel_count());
  std::printf("dvfs-sim bench: default scenario (%s, %.0f device activities, policy %s)\n", sc.name.c_str(), per_pass,
              sc.policy.name.c_str());
  std::printf("  default scenario end to end (through the user's workload cache): %.3f s (load %.3f s + simulate %.3f s)   target < 2 s   ratio %.2fx\n",
              total_default_s, load_s, default_sim_s, 2.0 / total_default_s);
  bench_workload_cache(sc.trace_path);
  bench_streaming_import(sc.trace_path);

  for (EngineMode mode : {EngineMode::local_loop, EngineMode::event}) {
    Scenario b = sc;
    b.mode = mode;
    b.replay.timeline_interval_s = 0.01;
    // Event mode is much slower by design; a tenth of the events keeps the bench short.
    const double events = mode == EngineMode::event ? target_events / 10 : target_events;
    b.replay.repeat = std::max(1, static_cast<int>(events / per_pass + 0.5));
    auto t = std::chrono::steady_clock::now();
    SimulationResult r = simulate(b, trace, model);
    const double s = seconds_since(t);
    const double n = r.summary["totals"]["kernel_events"].get<double>();
    const double rate = n / s;
    if (mode == EngineMode::local_loop)
      std::printf("  replay, local loop:   %.2e kernel events in %.3f s = %.2f M events/s   target >= 5 M/s   ratio %.2fx\n",
                  n, s, rate / 1e6, rate / 5e6);
    else
      std::printf("  replay, event mode:   %.2e kernel events in %.3f s = %.2f M events/s   (one SimGrid event per segment)\n",
                  n, s, rate / 1e6);
  }
  // Per-kernel planning: one training step (the first step's activities) of the GPT-3 XL trace,
  // retargeted to the RTX 3080 Ti model, over its full clock table (SM x memory pairs).
  {
    const std::string root = data_dir();
    Scenario rs = load_scenario(root + "/scenarios/kernel-dvfs/rtx-3080-ti.json");
    const GpuModel rtx = load_gpu_model(rs.gpu, rs.file, "gpu");
    const LoadedTrace rt = load_scenario_trace(rs, rtx);
    Workload one = rt.workload;
    Rank& r0 = one.ranks.front();
    const Step& st = r0.steps.front();
    Rank step;
    step.kernels.assign(r0.kernels.begin() + st.first_kernel, r0.kernels.begin() + st.last_kernel + 1);
    if (!r0.shapes.empty()) step.shapes.assign(r0.shapes.begin() + st.first_kernel, r0.shapes.begin() + st.last_kernel + 1);
    double busy = 0;
    for (const Kernel& k : step.kernels) busy += k.duration_s;
    auto tp = std::chrono::steady_clock::now();
    const ClockPlan plan = plan_clocks(one, step, rtx, PlanGrouping::per_kernel, 1.01 * busy);
    const double plan_s = seconds_since(tp);
    std::printf("  per-kernel plan, one step (%zu activities, %zu identities) x %zu clock pairs (rtx-3080-ti): %.3f s"
                "   target < 1 s   ratio %.1fx\n",
                step.kernels.size(), plan.group_names.size(), plan.pairs.size(), plan_s, 1.0 / std::max(plan_s, 1e-9));
    // The study grid of notebooks/02-per-kernel-and-latency.ipynb.
    if (quick) {
      std::printf("  kernel-DVFS study grid: skipped (--quick)\n");
    } else {
      std::vector<std::string> planned;  // every planned policy (the registry), in compare's order
      for (const std::string& p : default_comparison())
        if (policy_registry().at(p, "", "policy").kind == PolicyKind::planned) planned.push_back(p);
      auto tg = std::chrono::steady_clock::now();
      std::size_t replays = 0;
      for (const char* gpu : {"rtx-3080-ti", "a100-sxm4", "h200", "b200-like"}) {
        const Scenario g = load_scenario(root + "/scenarios/kernel-dvfs/" + gpu + ".json");
        const Json t = compare_grid(g, planned, {0.0, 1.0}, {0.0, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1});
        replays += t["rows"].size();
      }
      const double grid_s = seconds_since(tg);
      std::printf("  kernel-DVFS study grid (4 GPUs x 6 latencies x 2 budgets x %zu policies = %zu replays): %.1f s"
                  "   target < 120 s   ratio %.1fx\n",
                  planned.size() + 1, replays, grid_s, 120.0 / grid_s);
    }
  }
  // Kernel-level pipeline (issue 5 groundwork): 8 stages x 64 micro-batches, each stage's forward and
  // backward 600 and 1,200 kernels of the GPT-3 XL trace's first step (replayed on h200 at max clocks).
  {
    const Rank& src = trace.workload.ranks.front();
    KernelPipeline kp;
    kp.microbatches = 64;
    kp.annotation_sets = trace.workload.annotation_sets.size();
    for (int s = 0; s < 8; ++s) {
      Rank r;
      r.id = s;
      r.kernels.assign(src.kernels.begin(), src.kernels.begin() + 1800);
      kp.stages.push_back(std::move(r));
      kp.forward.push_back({0, 600});
      kp.backward.push_back({600, 1800});
    }
    PolicySpec mx;
    mx.name = "max";
    ReplayOptions o;
    o.timeline_interval_s = 0;
    auto tp = std::chrono::steady_clock::now();
    const KernelPipelineResult r = simulate_kernel_pipeline(kp, model, make_policy_factory(mx, model, ""), o);
    const double s = seconds_since(tp);
    double events = 0;
    for (const auto& out : r.outcomes) events += static_cast<double>(out.stats.kernel_events);
    std::printf("  kernel-level 1F1B pipeline, 8 stages x 64 micro-batches: %.2e kernel events + %d transfers in %.3f s"
                " = %.2f M events/s\n",
                events, 2 * 7 * 64, s, events / s / 1e6);
  }
  bench_scale(quick);
  bench_critical_path(quick);
  bench_control(quick);
  std::printf("  peak memory (max RSS): %.1f MiB\n", peak_rss_mib());
  (void)def;
  return 0;
}

}  // namespace dvfs
