#include "sim/control/fleet.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/switch_latency.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "sim/telemetry/window_stats.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace dvfs {

namespace {

std::vector<double> numbers(const JsonReader& r, const char* key, std::vector<double> fallback, double lo, double hi) {
  if (!r.has(key)) return fallback;
  const Json& v = r.raw(key);
  if (!v.is_array() || v.empty()) r.fail(key, "expected a non-empty list of numbers");
  std::vector<double> out;
  for (const Json& x : v) {
    if (!x.is_number() || !(x.get<double>() >= lo) || !(x.get<double>() <= hi))
      r.fail(key, "expected numbers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out.push_back(x.get<double>());
  }
  return out;
}

// One job type simulated alone: the power of each of its physical GPUs (TP groups folded: one series per
// simulated GPU and its multiplicity).
struct JobTrace {
  std::vector<PowerSeries> units;
  std::vector<int> gpus_per_unit;
  int gpus = 0;
  double mean_w = 0;
};

JobTrace simulate_alone(const FleetScenario& fs, const GrpoJobSpec& job, std::uint64_t seed) {
  ControlScenario sc;
  sc.file = fs.file;
  sc.name = fs.name;
  sc.gpu = fs.gpu;
  sc.duration_s = fs.duration_s;
  sc.interval_s = fs.sample_s;
  sc.bin_s = fs.bin_s;
  sc.seed = seed;
  sc.jobs = {job};
  sc.jobs.front().start_offset_s = 0;
  sc.jobs.front().start_offset_spread_s = 0;
  ControllerSpec none;
  ControlSession s(make_session_setup(sc, none));
  s.run_to_end();
  JobTrace t;
  for (int g = 0; g < s.physical_gpus(); g += job.tp) {
    t.units.push_back(s.gpu_power(g));
    t.gpus_per_unit.push_back(job.tp);
  }
  t.gpus = s.physical_gpus();
  t.mean_w = s.energy_j() / std::max(1e-9, s.now_s()) / t.gpus;
  return t;
}

// The samples a window averages, or 0 if it is not a whole number of them.
long window_samples(double window_s, double sample_s) {
  const double k = window_s / sample_s;
  return std::abs(k - std::round(k)) <= 1e-9 * k ? static_cast<long>(std::llround(k)) : 0;
}

// A fleet's windows_s against its sample period and duration: a window that is no whole number of samples was labelled
// as given and computed over the rounded number; one longer than the samples of the run averaged none and its row was
// dropped without a word. `duration_field` names a duration given beside the file ("" for the file's own).
// samples_only: where the file is read, before --duration / Python's duration_s may lengthen the run.
void check_fleet_windows(const FleetScenario& fs, const std::string& duration_field, bool windows_given = true, bool samples_only = false) {
  const char* which = windows_given ? "" : " (windows_s not given: the default 0.5, 30 and 300 s)";
  const auto samples = static_cast<long>(std::floor(fs.duration_s / fs.sample_s + 1e-9));
  for (std::size_t i = 0; i < fs.windows_s.size(); ++i) {
    const double w = fs.windows_s[i];
    std::ostringstream os;
    const long k = window_samples(w, fs.sample_s);
    if (k == 0) {
      os << "expected windows of a whole number of samples (sample_s " << fs.sample_s << " s), got " << w << " s";
      throw InputError(fs.file, "fleet.windows_s[" + std::to_string(i) + "]", os.str());
    }
    if (k <= samples || samples_only) continue;
    if (duration_field.empty()) {
      os << "expected windows at most the simulated duration (duration_s " << fs.duration_s << " s: " << samples << " samples of "
         << fs.sample_s << " s), got " << w << " s" << which;
      throw InputError(fs.file, "fleet.windows_s[" + std::to_string(i) + "]", os.str());
    }
    os << "expected a duration of at least the longest window (" << fs.file << " fleet.windows_s[" << i << "]: " << w << " s), got "
       << fs.duration_s << " s";
    throw InputError(duration_field, "", os.str());
  }
}

// A fleet of `gpus` in which no job of the mix fits ran as an all-idle fleet ("jobs 0") and reported its power.
void check_fleet_size(const FleetScenario& fs, int gpus, const std::string& field) {
  int smallest = 0;
  for (const FleetMixEntry& m : fs.mix)
    if (!m.idle && (smallest == 0 || m.job.gpus() < smallest)) smallest = m.job.gpus();
  if (smallest == 0) throw InputError(fs.file, "fleet.mix", "expected at least one job (every entry is idle: the fleet would run nothing)");
  if (gpus >= smallest) return;
  throw InputError(fs.file, field, "expected a fleet size in which a job of the mix fits (the smallest needs " + std::to_string(smallest) +
                                       " GPUs), got " + std::to_string(gpus) + " GPUs: the fleet would be all idle");
}

}  // namespace

bool is_fleet_scenario(const std::string& path) { return is_json_object_with_key(path, "fleet"); }

FleetScenario load_fleet_scenario(const std::string& path) { return parse_fleet_scenario(read_json_file(path), path); }

FleetScenario parse_fleet_scenario(const Json& doc, const std::string& path) {
  JsonReader top(doc, path, "");
  top.only_keys({"name", "description", "gpu", "fleet"});
  FleetScenario fs;
  fs.file = path;
  fs.name = top.string_or("name", "fleet");
  fs.description = top.string_or("description", "");
  fs.gpu = top.string_or("gpu", fs.gpu);
  const JsonReader f = top.child("fleet");
  f.only_keys({"sizes", "duration_s", "seed", "variants", "field", "sample_s", "bin_s", "windows_s", "violation_rates", "budget_fracs", "mix"});
  if (f.has("sizes")) {
    fs.sizes.clear();
    for (double v : numbers(f, "sizes", {}, 1, 1e6)) {
      if (v != std::floor(v)) f.fail("sizes", "expected whole numbers of GPUs");
      fs.sizes.push_back(static_cast<int>(v));
    }
  }
  if (f.has("duration_s")) fs.duration_s = f.positive("duration_s");
  if (f.has("seed")) {
    const long s = f.integer("seed");
    if (s < 0) f.fail("seed", "expected an integer >= 0");
    fs.seed = static_cast<std::uint64_t>(s);
  }
  if (f.has("variants")) {
    const long v = f.integer("variants");
    if (v < 1 || v > 100) f.fail("variants", "expected 1 to 100 simulated variants per job type");
    fs.variants = static_cast<int>(v);
  }
  const std::string field = f.string_or("field", "average");
  if (field == "exact") fs.field = NvmlField::exact;
  else if (field != "average")
    f.fail("field", "expected average or exact (the instant field and the counter refresh on per-GPU phases), got \"" + field + "\"");
  if (f.has("sample_s")) fs.sample_s = f.positive("sample_s");
  if (f.has("bin_s")) fs.bin_s = f.positive("bin_s");
  fs.windows_s = numbers(f, "windows_s", fs.windows_s, fs.sample_s, 1e6);
  fs.violation_rates = numbers(f, "violation_rates", fs.violation_rates, 0, 0.999);
  fs.budget_fracs = numbers(f, "budget_fracs", fs.budget_fracs, 0.01, 10);
  if (fs.duration_s < fs.sample_s * 2) f.fail("duration_s", "expected at least two samples");
  check_control_timing(fs.gpu, fs.sample_s, fs.bin_s, fs.duration_s, path, "fleet.sample_s", "fleet.bin_s", "fleet.duration_s");
  check_fleet_windows(fs, "", f.has("windows_s"), true);  // against the duration once any override is in (run_fleet_study)
  const JsonReader mix = f.child("mix");
  if (!mix.is_array() || mix.size() == 0) f.fail("mix", "expected a list of {share, job} or {share, idle: true}");
  double total = 0;
  for (std::size_t i = 0; i < mix.size(); ++i) {
    const JsonReader e = mix.at(i);
    e.only_keys({"share", "job", "idle"});
    FleetMixEntry m;
    m.share = e.positive("share");
    total += m.share;
    m.idle = e.has("idle") && e.raw("idle").is_boolean() && e.raw("idle").get<bool>();
    if (m.idle == e.has("job")) e.fail("job", "expected either a job or idle: true");
    if (!m.idle) {
      const JsonReader j = e.child("job");
      // simulate_alone runs every job from t = 0 and the fleet shifts each instance by a uniform draw: a start offset
      // changed nothing
      for (const char* key : {"start_offset_s", "start_offset_spread_s"})
        if (j.has(key))
          j.fail(key, "expected no start offset in a fleet's job (each job instance is shifted in time by a uniform draw over the run)");
      m.job = read_control_job(j, i);
    }
    fs.mix.push_back(std::move(m));
  }
  for (FleetMixEntry& m : fs.mix) m.share /= total;
  return fs;  // sizes are checked by run_fleet_study, after --sizes / Python's sizes may have replaced them
}

void set_fleet_duration(FleetScenario& fs, double duration_s, const std::string& field) {
  if (!(duration_s >= 2 * fs.sample_s)) throw InputError(field, "", "expected at least two samples (" + std::to_string(2 * fs.sample_s) + " s)");
  fs.duration_s = duration_s;
  check_control_timing(fs.gpu, fs.sample_s, fs.bin_s, fs.duration_s, fs.file, "fleet.sample_s", "fleet.bin_s", field);
  check_fleet_windows(fs, field);
}

Json run_fleet_study(const FleetScenario& fs, bool with_samples) {
  const auto t0 = std::chrono::steady_clock::now();
  const GpuModel model = load_gpu_model(fs.gpu, fs.file, "gpu");
  const double tdp = model.power_cap_w(), idle_w = model.idle_power_w(static_cast<int>(model.sm_clocks_mhz().size()) - 1);
  const auto bins = static_cast<std::size_t>(std::llround(fs.duration_s / fs.bin_s));
  // sizes and windows as run: the file's, or those given beside it (--sizes, --duration, Python's sizes, duration_s)
  for (std::size_t i = 0; i < fs.sizes.size(); ++i)
    check_fleet_size(fs, fs.sizes[i], "fleet.sizes[" + std::to_string(i) + "] (or the sizes given beside the file)");
  check_fleet_windows(fs, "");
  // Every job type alone, in a few variants.
  std::vector<std::vector<JobTrace>> traces(fs.mix.size());
  Json types = Json::array();
  for (std::size_t i = 0; i < fs.mix.size(); ++i) {
    const FleetMixEntry& m = fs.mix[i];
    if (m.idle) {
      types.push_back({{"type", "idle"}, {"share", m.share}, {"mean_w_per_gpu", idle_w}});
      continue;
    }
    double mean = 0, peak = 0;
    for (int v = 0; v < fs.variants; ++v) {
      traces[i].push_back(simulate_alone(fs, m.job, fs.seed * 1000 + static_cast<std::uint64_t>(v)));
      const JobTrace& t = traces[i].back();
      mean += t.mean_w / fs.variants;
      PowerSeries sum;
      sum.bin_s = fs.bin_s;
      sum.power_w.assign(bins, 0.0);
      for (std::size_t u = 0; u < t.units.size(); ++u)
        for (std::size_t b = 0; b < bins && b < t.units[u].power_w.size(); ++b) sum.power_w[b] += t.units[u].power_w[b] * t.gpus_per_unit[u];
      const auto s = nvml_samples(sum, fs.field, fs.sample_s);
      if (!s.empty()) peak = std::max(peak, *std::max_element(s.begin(), s.end()) / (tdp * t.gpus));
    }
    types.push_back({{"type", m.job.name}, {"model", m.job.model}, {"share", m.share}, {"gpus_per_job", m.job.gpus()},
                     {"mean_w_per_gpu", mean}, {"mean_share_of_tdp", mean / tdp}, {"peak_share_0.5s", peak}});
  }
  Json fleets = Json::array();
  for (int size : fs.sizes) {
    std::mt19937_64 rng(latency_seed(fs.seed, size));
    PowerSeries fleet;
    fleet.bin_s = fs.bin_s;
    fleet.power_w.assign(bins, 0.0);
    int placed = 0, jobs = 0, idle = 0;
    Json counts = Json::object();
    while (placed < size) {
      // A job type by GPU share.
      double u = uniform01(rng), acc = 0;
      std::size_t pick = fs.mix.size() - 1;
      for (std::size_t i = 0; i < fs.mix.size(); ++i)
        if ((acc += fs.mix[i].share) > u) {
          pick = i;
          break;
        }
      const FleetMixEntry& m = fs.mix[pick];
      const int need = m.idle ? 1 : m.job.gpus();
      if (m.idle || placed + need > size) {  // idle GPUs, and GPUs left over when a job does not fit
        for (double& p : fleet.power_w) p += idle_w;  // one GPU
        ++placed;
        ++idle;
        continue;
      }
      const JobTrace& t = traces[pick][static_cast<std::size_t>(rng() % traces[pick].size())];
      const auto shift = static_cast<std::size_t>(uniform01(rng) * static_cast<double>(bins));
      for (std::size_t un = 0; un < t.units.size(); ++un) {
        const std::vector<double>& p = t.units[un].power_w;
        const double k = t.gpus_per_unit[un];
        for (std::size_t b = 0; b < bins; ++b) fleet.power_w[b] += k * p[(b + shift) % std::min(bins, p.size())];
      }
      placed += need;
      ++jobs;
      counts[m.job.name] = counts.value(m.job.name, 0) + 1;
    }
    const double nameplate = tdp * size;
    const std::vector<double> samples = nvml_samples(fleet, fs.field, fs.sample_s);
    Json windows = Json::array();
    for (double w : fs.windows_s) {
      const std::vector<double> means = window_means(samples, fs.sample_s, w);
      if (means.empty()) throw std::logic_error("fleet: a window longer than the run passed check_fleet_windows");
      Json viol = Json::object(), over = Json::object();
      for (double f : fs.budget_fracs) viol[std::to_string(f).substr(0, 4)] = violation_rate(means, f * nameplate);
      for (double v : fs.violation_rates) over[std::to_string(v).substr(0, 5)] = sustainable_oversubscription(means, nameplate, v);
      const double mean = std::accumulate(means.begin(), means.end(), 0.0) / static_cast<double>(means.size());
      windows.push_back({{"window_s", w}, {"windows", means.size()},
                         {"peak_share", *std::max_element(means.begin(), means.end()) / nameplate}, {"mean_share", mean / nameplate},
                         {"violation_rate_at_budget_frac", viol}, {"oversubscription_at_violation_rate", over}});
    }
    fleets.push_back({{"gpus", size}, {"jobs", jobs}, {"idle_gpus", idle}, {"job_counts", counts}, {"nameplate_w", nameplate}, {"windows", windows}});
    if (with_samples) fleets.back()["samples_w"] = samples;
  }
  return {{"scenario", fs.name}, {"file", fs.file}, {"gpu", model.name()}, {"tdp_w", tdp}, {"duration_s", fs.duration_s},
          {"field", to_string(fs.field)}, {"sample_s", fs.sample_s}, {"seed", fs.seed}, {"variants", fs.variants}, {"types", types},
          {"fleets", fleets}, {"wall_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
          {"model_output", "dvfs-sim model output (GPU model " + model.name() + "); the fleet is a sum of simulated jobs of the mix, shifted in time"}};
}

std::string format_fleet_study(const Json& j) {
  std::ostringstream os;
  char buf[400];
  os << printf_text("fleet %s: %s GPUs, %.0f s simulated per job type (%d variants), NVML %s every %.1f s (model output)\n",
                    j["scenario"].get<std::string>().c_str(), j["gpu"].get<std::string>().c_str(), j["duration_s"].get<double>(),
                    j["variants"].get<int>(), j["field"].get<std::string>().c_str(), j["sample_s"].get<double>())
     << "  job types alone:";
  for (const Json& t : j["types"]) {
    const std::string peak =
        t.contains("peak_share_0.5s")
            ? " (peak " + std::to_string(static_cast<int>(std::lround(100 * t["peak_share_0.5s"].get<double>()))) + " %)"
            : "";
    os << printf_text(" %s %.0f W/GPU%s;", t["type"].get<std::string>().c_str(), t["mean_w_per_gpu"].get<double>(), peak.c_str());
  }
  os << "\n   GPUs  jobs  window   peak/nameplate  mean/nameplate  violations at budget (fraction of nameplate)   oversubscription at violation rate\n";
  for (const Json& f : j["fleets"]) {
    for (const Json& w : f["windows"]) {
      std::string v, o;
      for (auto it = w["violation_rate_at_budget_frac"].begin(); it != w["violation_rate_at_budget_frac"].end(); ++it) {
        std::snprintf(buf, sizeof buf, " %s:%.1f%%", it.key().c_str(), 100 * it.value().get<double>());
        v += buf;
      }
      for (auto it = w["oversubscription_at_violation_rate"].begin(); it != w["oversubscription_at_violation_rate"].end(); ++it) {
        std::snprintf(buf, sizeof buf, " %s:%.2fx", it.key().c_str(), it.value().get<double>());
        o += buf;
      }
      os << printf_text("  %5d %5d %6gs %12.1f %% %13.1f %%  %-45s %s\n", f["gpus"].get<int>(), f["jobs"].get<int>(),
                        w["window_s"].get<double>(), 100 * w["peak_share"].get<double>(), 100 * w["mean_share"].get<double>(),
                        v.c_str(), o.c_str());
    }
  }
  std::snprintf(buf, sizeof buf, "  wall %.1f s\n", j["wall_s"].get<double>());
  os << buf;
  return os.str();
}

}  // namespace dvfs
