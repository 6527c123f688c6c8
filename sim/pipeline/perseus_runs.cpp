#include "sim/pipeline/perseus_runs.hpp"

#include "sim/core/errors.hpp"
#include "traces/src/gzip_file.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace dvfs {

PerseusRun load_perseus_run(const std::string& given) {
  // The shipped runs are gzip-compressed (N.prof.json.gz); either name is accepted.
  const std::string path = !file_exists(given) && file_exists(given + ".gz") ? given + ".gz" : given;
  Json doc;
  try {
    doc = Json::parse(read_maybe_gzip(path));
  } catch (const Json::parse_error& e) {
    throw InputError(path, "", std::string("malformed JSON (") + e.what() + ")");
  }
  if (!doc.is_array() || doc.empty()) throw InputError(path, "", "expected a list with one entry per rank");
  PerseusRun run;
  run.file = path;
  run.stages = static_cast<int>(doc.size());
  for (std::size_t r = 0; r < doc.size(); ++r) {
    JsonReader rank(doc[r], path, "[" + std::to_string(r) + "]");
    if (rank.integer("rank") != static_cast<long>(r)) rank.fail("rank", "expected ranks in order 0, 1, ...");
    const Json& it = rank.raw("iter_time");
    const Json& en = rank.raw("iter_energy");
    JsonReader tb = rank.child("time_breakdown");
    if (!it.is_array() || it.empty()) rank.fail("iter_time", "expected a list of iteration times");
    if (r == 0) {
      for (const auto& v : it) run.iteration_s.push_back(v.get<double>());
      if (en.is_array())
        for (const auto& v : en) run.iteration_energy_j.push_back(v.get<double>());
      run.load_s.resize(it.size());
      run.forward_s.resize(it.size());
      run.backward_s.resize(it.size());
    } else {
      // Every rank reports the same iteration time (the pipeline's): keep the longest.
      for (std::size_t i = 0; i < it.size() && i < run.iteration_s.size(); ++i)
        run.iteration_s[i] = std::max(run.iteration_s[i], it[i].get<double>());
      if (en.is_array())
        for (std::size_t i = 0; i < en.size() && i < run.iteration_energy_j.size(); ++i)
          run.iteration_energy_j[i] += en[i].get<double>();
    }
    for (const char* key : {"load", "forward", "backward"}) {
      const Json& t = tb.raw(key);
      if (!t.is_array() || t.size() != run.iteration_s.size())
        tb.fail(key, "expected one list of micro-batch times per iteration");
      auto& dst = key[0] == 'l' ? run.load_s : key[0] == 'f' ? run.forward_s : run.backward_s;
      for (std::size_t i = 0; i < t.size(); ++i) {
        std::vector<double> row;
        for (const auto& v : t[i]) row.push_back(v.get<double>());
        dst[i].push_back(row);
      }
    }
  }
  run.microbatches = static_cast<int>(run.backward_s.back().front().size());
  return run;
}

PipelineWorkload perseus_pipeline(const PerseusRun& run, std::size_t it, double p2p_latency_s) {
  PipelineWorkload wl;
  wl.stages = run.stages;
  wl.microbatches = run.microbatches;
  wl.p2p_latency_s = p2p_latency_s;
  for (int s = 0; s < run.stages; ++s) {
    const auto& f = run.forward_s[it][static_cast<std::size_t>(s)];
    const auto& b = run.backward_s[it][static_cast<std::size_t>(s)];
    const auto& l = run.load_s[it][static_cast<std::size_t>(s)];
    if (static_cast<int>(f.size()) != run.microbatches || static_cast<int>(b.size()) != run.microbatches)
      throw InputError(run.file, "time_breakdown", "iteration " + std::to_string(it) + " of stage " + std::to_string(s) +
                                                       " does not hold one time per micro-batch");
    std::vector<double> fw(f);
    for (std::size_t m = 0; m < fw.size() && m < l.size(); ++m) fw[m] += l[m];
    wl.forward_s.push_back(fw);
    wl.backward_s.push_back(b);
  }
  return wl;
}

Json validate_perseus_runs(const std::string& dir, const std::vector<int>& plans, double p2p_latency_s) {
  Json rows = Json::array();
  double ape_sum = 0;
  int n = 0;
  for (int plan : plans) {
    const PerseusRun run = load_perseus_run(join_path(dir, std::to_string(plan) + ".prof.json"));
    for (std::size_t it = 1; it < run.iteration_s.size(); ++it) {  // iteration 0 is the warm-up
      const PipelineResult r = simulate_pipeline(perseus_pipeline(run, it, p2p_latency_s), run.file);
      const double meas = run.iteration_s[it];
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
