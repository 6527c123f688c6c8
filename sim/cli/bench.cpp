#include "sim/cli/bench.hpp"

#include "models/src/model_registry.hpp"
#include "sim/simulation.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <sys/resource.h>

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

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  double target_events = 5e6;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--events" && i + 1 < args.size()) target_events = std::stod(args[++i]);
    else throw std::invalid_argument("bench takes only --events N");
  }
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
  std::printf("  default scenario end to end: %.3f s (load %.3f s + simulate %.3f s)   target < 2 s   ratio %.2fx\n",
              total_default_s, load_s, default_sim_s, 2.0 / total_default_s);

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
  std::printf("  peak memory (max RSS): %.1f MiB\n", peak_rss_mib());
  (void)def;
  return 0;
}

}  // namespace dvfs
