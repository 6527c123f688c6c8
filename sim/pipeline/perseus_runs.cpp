#include "sim/pipeline/perseus_runs.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "traces/src/gzip_file.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace dvfs {

namespace {

// Numbers in [0, hi]: times at most a day (kMaxMeasuredStepS), energies what 10 kW draw in that day; beyond them a
// fit on the run divided by zero-width ranges and crashed.
std::vector<double> numbers(const JsonReader& r, const Json& j, const std::string& what, double hi, const char* unit) {
  if (!j.is_array()) r.fail(what.c_str(), "expected a list of numbers");
  std::vector<double> out;
  for (const Json& v : j) {
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= hi)) {
      std::ostringstream os;
      os << "expected numbers from 0 to " << hi << " " << unit << ", got " << v.dump();
      r.fail(what.c_str(), os.str());
    }
    out.push_back(v.get<double>());
  }
  return out;
}

constexpr double kMaxRunEnergyJ = 1e4 * kMaxMeasuredStepS;

}  // namespace

double PerseusMeasurement::iteration_time_s(std::size_t it) const {
  double m = 0;
  for (const auto& r : iteration_s) m = std::max(m, r[it]);
  return m;
}

double PerseusMeasurement::mean_iteration_s() const {
  const std::size_t its = iteration_s.front().size();
  double t = 0;
  for (std::size_t it = 1; it < its; ++it) t += iteration_time_s(it);
  return its > 1 ? t / static_cast<double>(its - 1) : 0.0;
}

double PerseusMeasurement::mean_energy_j() const {
  const std::size_t its = energy_j.front().size();
  double e = 0;
  for (std::size_t it = 1; it < its; ++it)
    for (const auto& r : energy_j) e += r[it];
  return its > 1 ? e / static_cast<double>(its - 1) : 0.0;
}

PerseusMeasurement load_perseus_measurement(const std::string& given) {
  // The shipped runs are gzip-compressed (N.prof.json.gz); either name is accepted.
  const std::string path = !file_exists(given) && file_exists(given + ".gz") ? given + ".gz" : given;
  const Json doc = read_json_maybe_gzip(path);
  if (!doc.is_array() || doc.empty()) throw InputError(path, "", "expected a list with one entry per rank");
  PerseusMeasurement m;
  m.file = path;
  m.stages = static_cast<int>(doc.size());
  for (std::size_t r = 0; r < doc.size(); ++r) {
    JsonReader rank(doc[r], path, "[" + std::to_string(r) + "]");
    if (rank.integer("rank") != static_cast<long>(r)) rank.fail("rank", "expected ranks in order 0, 1, ...");
    m.iteration_s.push_back(numbers(rank, rank.raw("iter_time"), "iter_time", kMaxMeasuredStepS, "s"));
    m.energy_j.push_back(numbers(rank, rank.raw("iter_energy"), "iter_energy", kMaxRunEnergyJ, "J"));
    const std::size_t its = m.iteration_s.back().size();
    if (its < 2) rank.fail("iter_time", "expected at least two iterations (the first is the warm-up)");
    if (m.energy_j.back().size() != its) rank.fail("iter_energy", "expected one energy per iteration");
    if (r > 0 && its != m.iteration_s.front().size()) rank.fail("iter_time", "expected as many iterations as rank 0");
    JsonReader tb = rank.child("time_breakdown");
    std::vector<std::vector<std::vector<std::vector<double>>>*> dst = {&m.forward_s, &m.backward_s, &m.load_s};
    const char* keys[] = {"forward", "backward", "load"};
    for (int k = 0; k < 3; ++k) {
      if (k == 2 && !tb.has("load")) {  // 3D run sets log no loads: none
        dst[2]->push_back(std::vector<std::vector<double>>(its));
        continue;
      }
      const Json& t = tb.raw(keys[k]);
      if (!t.is_array() || t.size() != its) tb.fail(keys[k], "expected one list of times per iteration");
      std::vector<std::vector<double>> per_it;
      for (std::size_t i = 0; i < its; ++i) per_it.push_back(numbers(tb, t[i], keys[k], kMaxMeasuredStepS, "s"));
      dst[static_cast<std::size_t>(k)]->push_back(std::move(per_it));
    }
  }
  // Micro-batches: the backward count of the iterations after the warm-up (the warm-up may hold one more).
  m.microbatches = static_cast<int>(m.backward_s.front()[1].size());
  if (m.microbatches < 1) throw InputError(path, "[0].time_breakdown.backward", "expected at least one micro-batch");
  for (int r = 0; r < m.stages; ++r)
    for (std::size_t it = 1; it < m.iteration_s.front().size(); ++it) {
      const std::string f = "[" + std::to_string(r) + "].time_breakdown";
      auto& fw = m.forward_s[static_cast<std::size_t>(r)][it];
      auto& bw = m.backward_s[static_cast<std::size_t>(r)][it];
      auto& ld = m.load_s[static_cast<std::size_t>(r)][it];
      if (static_cast<int>(fw.size()) != m.microbatches || static_cast<int>(bw.size()) != m.microbatches)
        throw InputError(path, f, "iteration " + std::to_string(it) + ": expected " + std::to_string(m.microbatches) +
                                      " forward and backward times");
      if (ld.empty()) ld.assign(static_cast<std::size_t>(m.microbatches), 0.0);
      if (ld.size() % static_cast<std::size_t>(m.microbatches) != 0)
        throw InputError(path, f + ".load", "iteration " + std::to_string(it) + ": expected a multiple of " +
                                                std::to_string(m.microbatches) + " load times");
      const std::size_t k = ld.size() / static_cast<std::size_t>(m.microbatches);
      std::vector<double> per_mb(static_cast<std::size_t>(m.microbatches), 0.0);
      for (std::size_t i = 0; i < ld.size(); ++i) per_mb[i / k] += ld[i];
      ld = std::move(per_mb);
    }
  return m;
}

PerseusMeasurement fold_to_stages(const PerseusMeasurement& m, int stages) {
  if (stages <= 0 || stages == m.stages) return m;
  if (m.stages % stages != 0)
    throw InputError(m.file, "", "expected a multiple of " + std::to_string(stages) + " ranks (pipeline stages), got " + std::to_string(m.stages));
  PerseusMeasurement f = m;
  f.stages = stages;
  f.iteration_s.resize(static_cast<std::size_t>(stages));
  f.energy_j.resize(static_cast<std::size_t>(stages));
  f.forward_s.resize(static_cast<std::size_t>(stages));
  f.backward_s.resize(static_cast<std::size_t>(stages));
  f.load_s.resize(static_cast<std::size_t>(stages));
  for (std::size_t r = static_cast<std::size_t>(stages); r < m.iteration_s.size(); ++r) {
    const std::size_t s = r % static_cast<std::size_t>(stages);
    for (std::size_t it = 0; it < m.iteration_s[r].size(); ++it) {
      f.iteration_s[s][it] = std::max(f.iteration_s[s][it], m.iteration_s[r][it]);
      f.energy_j[s][it] += m.energy_j[r][it];
    }
  }
  f.gpus_per_stage = m.stages / stages;
  return f;
}

PipelineWorkload perseus_pipeline(const PerseusMeasurement& run, std::size_t it, double p2p_latency_s) {
  PipelineWorkload wl;
  wl.stages = run.stages;
  wl.microbatches = run.microbatches;
  wl.p2p_latency_s = p2p_latency_s;
  for (std::size_t s = 0; s < static_cast<std::size_t>(run.stages); ++s) {
    std::vector<double> fw = run.forward_s[s][it];
    const auto& l = run.load_s[s][it];  // one per micro-batch (the loader checked)
    for (std::size_t m = 0; m < fw.size(); ++m) fw[m] += l[m];
    wl.forward_s.push_back(fw);
    wl.backward_s.push_back(run.backward_s[s][it]);
  }
  return wl;
}

Json validate_perseus_runs(const std::string& dir, const std::vector<int>& plans, double p2p_latency_s) {
  Json rows = Json::array();
  double ape_sum = 0;
  int n = 0, stages = 0, microbatches = 0;
  for (int plan : plans) {
    const PerseusMeasurement run = load_perseus_measurement(join_path(dir, std::to_string(plan) + ".prof.json"));
    // Plans of one run set share one pipeline: a file cut to fewer ranks was simulated as a shorter pipeline.
    if (stages == 0) stages = run.stages, microbatches = run.microbatches;
    if (run.stages != stages || run.microbatches != microbatches)
      throw InputError(run.file, "", "expected the ranks and micro-batches of plan " + std::to_string(plans.front()) + " (" +
                                         std::to_string(stages) + " ranks, " + std::to_string(microbatches) + " micro-batches), got " +
                                         std::to_string(run.stages) + " ranks, " + std::to_string(run.microbatches) + " micro-batches");
    for (std::size_t it = 1; it < run.iteration_s.front().size(); ++it) {  // iteration 0 is the warm-up
      const PipelineResult r = simulate_pipeline(perseus_pipeline(run, it, p2p_latency_s), run.file);
      const double meas = run.iteration_time_s(it);
      const double err = 100.0 * (r.iteration_s - meas) / meas;
      double busiest = 0;
      for (double b : r.stage_busy_s) busiest = std::max(busiest, b);
      rows.push_back({{"plan", plan}, {"iteration", it}, {"stages", run.stages}, {"microbatches", run.microbatches},
                      {"measured_iteration_s", meas}, {"predicted_iteration_s", r.iteration_s},
                      {"error_pct", err}, {"busiest_stage_compute_s", busiest}});
      ape_sum += std::fabs(err);
      ++n;
    }
  }
  return {{"runs", dir}, {"p2p_latency_s", p2p_latency_s}, {"rows", rows}, {"mape_pct", n ? ape_sum / n : 0.0},
          {"method", "1F1B pipeline on SimGrid from the measured per-micro-batch load+forward and backward times of each "
                     "stage; the measured iteration time is the longest any rank reported"}};
}

std::string format_perseus_validation(const Json& rep) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3);
  os << "Perseus runs " << rep["runs"].get<std::string>() << " (p2p latency " << rep["p2p_latency_s"].get<double>() * 1e3
     << " ms)\n" << rep["method"].get<std::string>() << "\n";
  os << "plan  iter  stages  micro-batches  measured s  predicted s   error %   busiest stage compute s\n";
  for (const auto& r : rep["rows"])
    os << std::setw(4) << r["plan"].get<int>() << std::setw(6) << r["iteration"].get<int>() << std::setw(8)
       << r["stages"].get<int>() << std::setw(15) << r["microbatches"].get<int>() << std::setw(12)
       << r["measured_iteration_s"].get<double>() << std::setw(13) << r["predicted_iteration_s"].get<double>()
       << std::setw(10) << std::setprecision(2) << r["error_pct"].get<double>() << std::setprecision(3) << std::setw(26)
       << r["busiest_stage_compute_s"].get<double>() << "\n";
  os << "MAPE " << std::setprecision(2) << rep["mape_pct"].get<double>() << " %\n";
  return os.str();
}

}  // namespace dvfs
