#include "sim/validate/validate.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/simulation.hpp"
#include "traces/src/recording.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace dvfs {

namespace {

double pct(double sim, double meas) { return meas != 0 ? 100.0 * (sim - meas) / meas : 0.0; }

}  // namespace

Recording load_validation_recording(const std::string& dir) {
  Recording rec = load_recording(dir, Classifier::load_default());
  if (rec.steps.empty())
    throw InputError(dir + "/run.json", "run.profiled_steps", "missing: validation needs the measured step bounds and energy");
  if (!rec.telemetry.has_energy())
    throw InputError(rec.telemetry.file(), "energy_mj", "missing column: validation needs the NVML energy counter");
  return rec;
}

Json validate_recording(const std::string& dir, const std::string& gpu) {
  return validate_recording(load_validation_recording(dir), load_gpu_model(gpu, "", "--gpu"));
}

Json validate_recording(const Recording& rec, const GpuModel& model) {
  const std::string& dir = rec.dir;
  const std::string gpu = model.source_file();
  LoadedTrace trace{rec.workload, rec.import_report, Json()};

  Json report;
  report["recording"] = dir;
  report["gpu"] = {{"name", model.name()}, {"status", model.status()}};
  report["measured_from"] =
      "step time: run.json profiled_steps t0_ns..t1_ns (GPU synchronised); step energy: NVML energy counter "
      "interpolated between its ~100 ms updates; mean SM clock: NVML clock samples";
  Json sources = Json::array();
  for (const char* source : {"native", "recorded"}) {
    Scenario sc;
    sc.name = std::string("validate-") + source;
    sc.file = dir;
    sc.trace_path = dir;
    sc.gpu = gpu;
    sc.policy.name = source;
    sc.replay.timeline_interval_s = 0;
    SimulationResult r = simulate(sc, trace, model);
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
  return report;
}

std::string format_validation(const Json& rep) {
  std::ostringstream os;
  char buf[256];
  os << "validate " << rep["recording"].get<std::string>() << " on " << rep["gpu"]["name"].get<std::string>() << " ["
     << rep["gpu"]["status"].get<std::string>() << "]\n";
  os << "measured: " << rep["measured_from"].get<std::string>() << "\n";
  for (const Json& src : rep["clock_sources"]) {
    os << "\nclock source: " << src["clock_source"].get<std::string>() << "\n";
    std::snprintf(buf, sizeof buf, "%-5s %9s %9s %7s | %9s %9s %7s | %8s %8s %7s | %7s %7s\n", "step", "meas ms",
                  "sim ms", "err %", "meas J", "sim J", "err %", "meas W", "sim W", "err %", "meas MHz", "sim MHz");
    os << buf;
    auto line = [&](const std::string& label, const Json& r, bool clocks) {
      std::snprintf(buf, sizeof buf, "%-5s %9.2f %9.2f %+7.2f | %9.2f %9.2f %+7.2f | %8.1f %8.1f %+7.2f |", label.c_str(),
                    r["measured_time_s"].get<double>() * 1e3, r["simulated_time_s"].get<double>() * 1e3,
                    r["time_error_pct"].get<double>(), r["measured_energy_j"].get<double>(),
                    r["simulated_energy_j"].get<double>(), r["energy_error_pct"].get<double>(),
                    r["measured_mean_power_w"].get<double>(), r["simulated_mean_power_w"].get<double>(),
                    r["power_error_pct"].get<double>());
      os << buf;
      if (clocks) {
        std::snprintf(buf, sizeof buf, " %7.0f %7.0f", r["measured_mean_sm_mhz"].get<double>(),
                      r["simulated_mean_sm_mhz"].get<double>());
        os << buf;
      }
      os << "\n";
    };
    for (const Json& r : src["steps"]) line(std::to_string(r["step"].get<int>()), r, true);
    line("total", src["total"], false);
    std::snprintf(buf, sizeof buf, "MAPE over steps: time %.2f%%, energy %.2f%%, mean power %.2f%%\n",
                  src["mape"]["time_pct"].get<double>(), src["mape"]["energy_pct"].get<double>(),
                  src["mape"]["mean_power_pct"].get<double>());
    os << buf;
  }
  return os.str();
}

}  // namespace dvfs
