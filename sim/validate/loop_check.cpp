#include "sim/validate/loop_check.hpp"

#include "sim/simulation/simulation.hpp"
#include "sim/validate/validate.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

Json validate_kernel_loop(const KernelLoop& loop, const GpuModel& model) {
  const std::string& dir = loop.recording.dir;
  LoadedTrace trace{steady_workload(loop), loop.recording.import_report, Json()};
  std::size_t priced = 0, kernels = 0;
  for (const Kernel& k : trace.workload.ranks.front().kernels) {
    ++kernels;
    priced += counted_work(k);
  }
  Json out = {{"loop", loop.name},
              {"recording", dir},
              {"measured_mean_power_w", loop.measured_power_w},
              {"measured_step_s", loop.steady_step_s},
              {"activities", kernels},
              {"activities_priced_by_work", priced}};
  for (const char* source : {"native", "recorded"}) {
    Scenario sc = validation_scenario(dir, model, source);
    // The loop ran for seconds, the governor settled: replay the profiled steps for 2 s (at least twice) and
    // measure the second half.
    const std::size_t nsteps = trace.workload.ranks.front().steps.size();
    sc.replay.repeat = static_cast<int>(std::clamp(std::ceil(2.0 / (static_cast<double>(nsteps) * loop.steady_step_s)), 2.0, 2000.0));
    const SimulationResult r = simulate(sc, trace, model);
    const Json& all = r.summary["steps"];
    const std::size_t from = static_cast<std::size_t>(sc.replay.repeat / 2) * nsteps;
    double t = 0, e = 0;
    for (std::size_t i = from; i < all.size(); ++i) {
      t += all[i]["time_s"].get<double>();
      e += all[i]["energy_j"].get<double>();
    }
    const double steps = static_cast<double>(all.size() - from);
    const double p = t > 0 ? e / t : 0, step_s = steps > 0 ? t / steps : 0;
    const double meas_step_j = loop.measured_power_w * loop.steady_step_s;
    out[source] = {{"mean_power_w", p},
                   {"power_error_pct", 100.0 * (p - loop.measured_power_w) / loop.measured_power_w},
                   {"step_s", step_s},
                   {"time_error_pct", 100.0 * (step_s - loop.steady_step_s) / loop.steady_step_s},
                   {"step_energy_j", steps > 0 ? e / steps : 0},
                   {"energy_error_pct", 100.0 * ((steps > 0 ? e / steps : 0) - meas_step_j) / meas_step_j}};
  }
  return out;
}

double measured_steady_power_w(const std::string& dir) {
  return read_steady_window(read_json_file(dir + "/run.json"), dir + "/run.json").mean_power_w;
}

Json abs_distribution(std::vector<double> x) {
  for (double& v : x) v = std::fabs(v);
  std::sort(x.begin(), x.end());
  if (x.empty()) return Json::object();
  auto at = [&](double q) { return x[std::min(x.size() - 1, static_cast<std::size_t>(q * static_cast<double>(x.size() - 1) + 0.5))]; };
  double sum = 0;
  for (double v : x) sum += v;
  return {{"count", x.size()}, {"mean_pct", sum / static_cast<double>(x.size())}, {"median_pct", at(0.5)},
          {"p90_pct", at(0.9)}, {"max_pct", x.back()}};
}

}  // namespace dvfs
