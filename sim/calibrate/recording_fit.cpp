#include "sim/calibrate/recording_fit.hpp"

#include "models/src/gpu_model.hpp"
#include "sim/calibrate/calibration_date.hpp"
#include "sim/calibrate/rounding.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/progress.hpp"
#include "sim/validate/validate.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <tuple>

namespace dvfs {

namespace {

constexpr std::size_t kMinGroupSize = 8;
constexpr double kMinClockSpread = 1.05;
constexpr std::size_t kMinClassKernels = 30;
constexpr double kMaxShareError = 0.15;
constexpr double kMaxGroupError = 0.2;
constexpr std::size_t kMinKernelSamples = 24;  // per-kernel shares: at least this many launches
constexpr double kMaxKernelError = 0.05;        // and a standard error this small


struct Sample {
  double x, y;  // f_max / f, d / mean(d)
};

struct Group {
  KernelClass cls;
  std::string name;
  std::vector<double> d, f;
  double mean_d = 0, fmin = 0, fmax = 0;
};

struct ClassFit {
  std::size_t kernels = 0, groups = 0;
  double beta = 0, share = 0, se = 1, mean_x = 1, fmin = 0, fmax = 0;
  bool used = false;
};

// One group: least squares of y = d / mean(d) on x = f_max / f; share b and its standard error.
ClassFit fit_group(const Group& g, double f_top) {
  ClassFit c;
  c.kernels = g.d.size();
  c.groups = 1;
  c.fmin = g.fmin;
  c.fmax = g.fmax;
  const double n = static_cast<double>(g.d.size());
  double xm = 0;
  for (double f : g.f) xm += f_top / f;
  xm /= n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < g.d.size(); ++i) {
    const double x = f_top / g.f[i] - xm, y = g.d[i] / g.mean_d - 1.0;
    sxy += x * y;
    sxx += x * x;
  }
  if (sxx <= 0 || g.d.size() < 3) return c;
  c.beta = sxy / sxx;
  double rss = 0;
  for (std::size_t i = 0; i < g.d.size(); ++i) {
    const double r = (g.d[i] / g.mean_d - 1.0) - c.beta * (f_top / g.f[i] - xm);
    rss += r * r;
  }
  const double se_beta = std::sqrt(rss / (n - 2) / sxx);
  c.mean_x = xm;
  // y = (b x + 1 - b) / (b xm + 1 - b): slope beta = b / (1 + b (xm - 1)), so b = beta / (1 - beta (xm - 1)).
  const double denom = 1.0 - c.beta * (xm - 1.0);
  c.share = c.beta / denom;
  c.se = std::max(se_beta / (denom * denom), 1e-6);
  return c;
}

// Class share: the mean of its groups' shares weighted by their total recorded time (the share
// that matters for predicting the class's time), over groups fit to a standard error <= 0.2.
ClassFit fit_class(const std::vector<const Group*>& groups, double f_top) {
  ClassFit c;
  c.fmin = 1e30;
  double w_sum = 0, wb = 0, w2se2 = 0;
  for (const Group* g : groups) {
    const ClassFit gf = fit_group(*g, f_top);
    c.kernels += gf.kernels;
    c.fmin = std::min(c.fmin, g->fmin);
    c.fmax = std::max(c.fmax, g->fmax);
    if (!(gf.se <= kMaxGroupError) || !std::isfinite(gf.share)) continue;
    const double w = g->mean_d * static_cast<double>(g->d.size());
    w_sum += w;
    wb += w * gf.share;
    w2se2 += w * w * gf.se * gf.se;
    ++c.groups;
  }
  if (w_sum <= 0) return c;
  c.share = wb / w_sum;
  c.se = std::sqrt(w2se2) / w_sum;
  return c;
}

// The base's clock table must cover the clocks the recording ran at.
void check_recorded_clocks(const Recording& rec, const GpuModel& base) {
  const double f_top = base.max_sm_mhz();
  for (const Rank& r : rec.workload.ranks)
    for (const Kernel& k : r.kernels)
      if (k.recorded_sm_mhz > 0 && (k.recorded_sm_mhz > f_top + 1e-6 || k.recorded_sm_mhz < base.sm_clocks_mhz().front() - 1e-6)) {
        std::ostringstream os;
        os << "the recording ran at " << k.recorded_sm_mhz << " MHz, outside the base model " << base.name() << "'s "
           << base.describe_sm_clocks() << ": calibrate with a base model of the recorded GPU";
        throw InputError(rec.telemetry.file(), "sm_mhz", os.str());
      }
}

using GroupKey = std::tuple<std::uint32_t, std::string>;

// Kernel groups: same name, same launch shape, same class; each launch's duration and recorded clock.
std::map<GroupKey, Group> kernel_groups(const Workload& wl) {
  std::map<GroupKey, Group> groups;
  for (const Rank& r : wl.ranks) {
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
      const Kernel& k = r.kernels[i];
      if (k.kind != ActivityKind::kernel || !(k.recorded_sm_mhz > 0) || !(k.duration_s > 0)) continue;
      std::string shape;
      if (i < r.shapes.size()) {
        const LaunchShape& s = r.shapes[i];
        std::ostringstream os;
        os << s.grid[0] << "," << s.grid[1] << "," << s.grid[2] << "/" << s.block[0] << "," << s.block[1] << "," << s.block[2];
        shape = os.str();
      }
      Group& g = groups[{k.name_id, shape}];
      g.cls = k.cls;
      g.name = wl.names[k.name_id];
      g.d.push_back(k.duration_s);
      g.f.push_back(k.recorded_sm_mhz);
    }
  }
  return groups;
}

// The groups large enough and spread enough over the clocks to fit, by kernel class (their clock span and
// mean duration filled in); fails when there is none.
std::map<int, std::vector<const Group*>> usable_groups_by_class(std::map<GroupKey, Group>& groups, const std::string& dir) {
  std::map<int, std::vector<const Group*>> by_class;
  std::size_t usable = 0;
  for (auto& kv : groups) {
    Group& g = kv.second;
    if (g.d.size() < kMinGroupSize) continue;
    g.fmin = *std::min_element(g.f.begin(), g.f.end());
    g.fmax = *std::max_element(g.f.begin(), g.f.end());
    if (g.fmax / g.fmin < kMinClockSpread) continue;
    double s = 0;
    for (double d : g.d) s += d;
    g.mean_d = s / static_cast<double>(g.d.size());
    by_class[static_cast<int>(g.cls)].push_back(&g);
    usable += g.d.size();
  }
  if (usable == 0)
    throw InputError(dir, "telemetry.csv", "no kernel recurs at clocks 5 % apart: the recording holds no natural clock change to fit time scaling");
  return by_class;
}

// Per kernel class: the fitted time share written into `model` where the evidence is strong enough (the
// class's name in `fitted`), else the base's kept (in `kept`). Returns the per-class report.
Json fit_class_shares(Json& model, const std::map<int, std::vector<const Group*>>& by_class, double f_top,
                      std::vector<std::string>& fitted, std::vector<std::string>& kept) {
  Json classes_report = Json::object();
  for (int ci = 0; ci < kKernelClassCount; ++ci) {
    const char* cname = to_string(static_cast<KernelClass>(ci));
    ClassFit c;
    auto it = by_class.find(ci);
    if (it != by_class.end()) c = fit_class(it->second, f_top);
    Json& mc = model["classes"][cname];
    const double base_mem = mc.value("time_mem", 0.3);
    c.used = c.kernels >= kMinClassKernels && c.se <= kMaxShareError && std::isfinite(c.share);
    if (c.used) {
      const double b = round_to(std::clamp(c.share, 0.0, 1.0), 0.001);
      mc["time_sm"] = b;
      mc["time_mem"] = std::min(base_mem, round_to(1.0 - b, 0.001));  // unidentified: the memory clock did not move
      fitted.push_back(cname);
    } else {
      kept.push_back(cname);
    }
    classes_report[cname] = {{"kernels", c.kernels}, {"groups", c.groups}, {"sm_mhz_span", {c.kernels ? c.fmin : 0, c.fmax}},
                             {"time_sm_fit", c.share}, {"standard_error", c.se}, {"used", c.used},
                             {"time_sm", mc["time_sm"]}, {"time_mem", mc["time_mem"]}};
  }
  return classes_report;
}

// The largest groups' own shares (time-weighted order), for the report.
Json largest_groups_report(const std::vector<const Group*>& all, double f_top) {
  Json kernels = Json::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(12, all.size()); ++i) {
    ClassFit c = fit_group(*all[i], f_top);
    kernels.push_back({{"name", all[i]->name.substr(0, 80)}, {"class", to_string(all[i]->cls)}, {"kernels", c.kernels},
                       {"mean_us", all[i]->mean_d * 1e6}, {"sm_mhz_span", {c.fmin, c.fmax}},
                       {"time_sm_fit", c.share}, {"standard_error", c.se}});
  }
  return kernels;
}

// Per kernel name (over its launch shapes): a share of its own where the evidence is strong.
Json per_kernel_shares(const Json& model, const std::vector<const Group*>& all, double f_top) {
  std::map<std::string, std::vector<const Group*>> by_name;
  for (const Group* g : all) by_name[g->name].push_back(g);
  Json per_kernel = Json::object();
  for (const auto& kv : by_name) {
    const ClassFit c = fit_class(kv.second, f_top);
    if (c.groups == 0 || c.kernels < kMinKernelSamples || c.se > kMaxKernelError || !std::isfinite(c.share)) continue;
    const Json& cls = model["classes"][to_string(kv.second.front()->cls)];
    const double b = round_to(std::clamp(c.share, 0.0, 1.0), 0.001);
    per_kernel[kv.first] = {{"time_sm", b}, {"time_mem", std::min(cls["time_mem"].get<double>(), round_to(1.0 - b, 0.001))}};
  }
  return per_kernel;
}

struct DynamicScaleFit {
  double scale = 1, t_sim = 0, e_sim = 0, e_meas = 0, e_idle = 0;
};

// Dynamic power scale: replay at the recorded clocks; E = idle energy + scale * dynamic energy. Writes
// power.dynamic_scale into `model`.
DynamicScaleFit fit_dynamic_scale(Json& model, const Recording& rec, const std::string& base_path, const std::string& dir,
                                  Progress& progress) {
  DynamicScaleFit f;
  progress.advance(1, "replay at the recorded clocks");
  model["power"]["dynamic_scale"] = 1.0;
  const Json first = validate_recording(rec, GpuModel::from_json(model, base_path));
  const Json& rec_total = first["clock_sources"][1]["total"];
  f.t_sim = rec_total["simulated_time_s"].get<double>();
  f.e_sim = rec_total["simulated_energy_j"].get<double>(), f.e_meas = rec_total["measured_energy_j"].get<double>();
  // Idle share of the simulated energy: replay with zero dynamic power.
  progress.advance(1, "replay with idle power only");
  Json idle_only = model;
  idle_only["power"]["dynamic_scale"] = 1e-9;
  f.e_idle = validate_recording(rec, GpuModel::from_json(idle_only, base_path))["clock_sources"][1]["total"]["simulated_energy_j"].get<double>();
  f.scale = round_to((f.e_meas - f.e_idle) / (f.e_sim - f.e_idle), 0.001);
  if (!std::isfinite(f.scale) || !(f.scale > 0))
    throw InputError(dir, "run.profiled_steps",
                     "cannot fit power.dynamic_scale: the measured energy is below the base model's idle energy, or the "
                     "base model has no dynamic power (classes.*.dynamic_w all 0)");
  model["power"]["dynamic_scale"] = f.scale;
  return f;
}

// Provenance of what the fit wrote, and the calibration block (with the check replay's errors).
void write_recording_provenance(Json& model, const std::string& dir, const std::vector<std::string>& fitted,
                                const std::vector<std::string>& kept, const Json& classes_report, const Json& check,
                                const std::string& command, const std::string& date) {
  Json& prov = model["provenance"];
  std::string trimmed = dir;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  const std::string rec_name = trimmed.substr(trimmed.find_last_of('/') + 1);
  std::string fitted_list, kept_list;
  for (const auto& n : fitted) fitted_list += (fitted_list.empty() ? "" : ", ") + n;
  for (const auto& n : kept) kept_list += (kept_list.empty() ? "" : ", ") + n;
  for (const auto& n : fitted) {
    set_provenance(prov, "/classes/" + n + "/time_sm", "fit",
                   "natural clock changes in " + rec_name + " (per kernel group, duration regressed on f_max/f; class = "
                   "time-weighted mean of groups; see calibration.classes)");
    set_provenance(prov, "/classes/" + n + "/time_mem", "estimate",
                   "base model's split of the part that does not scale with the SM clock (the memory clock did not move)");
  }
  if (model.contains("kernels"))
    set_provenance(prov, "/kernels", "fit",
                   "per kernel name, where >= 24 launches recur at clocks >= 5 % apart and the share's standard error "
                   "is <= 0.05: time-weighted share over its launch shapes, natural clock changes in " + rec_name +
                   "; time_mem keeps the class's split of the rest");
  set_provenance(prov, "/power/dynamic_scale", "fit",
                 "replay of " + rec_name + " at its recorded clocks meets the NVML counter energy of its profiled steps "
                 "(in-sample for that replay; the native-governor replay is not fit)");
  // The base's own summary, without what an earlier recording calibration appended to it.
  std::string summary = prov.value("summary", std::string());
  const std::size_t earlier = summary.find("; kernel-class time scaling (");
  if (earlier != std::string::npos) summary.erase(earlier);
  prov["summary"] = summary + "; kernel-class time scaling (" + fitted_list + ") and dynamic power scale fit on " + rec_name;
  prov["calibration"] = {{"command", command}, {"date", date}, {"data", rec_name},
                         {"time_sm_fitted", fitted_list}, {"time_sm_kept_from_base", kept_list},
                         {"classes", classes_report},
                         {"fit_error", {{"recorded_clocks_energy_error_pct", check["clock_sources"][1]["total"]["energy_error_pct"]},
                                        {"native_energy_mape_pct", check["clock_sources"][0]["mape"]["energy_pct"]},
                                        {"native_time_mape_pct", check["clock_sources"][0]["mape"]["time_pct"]}}}};
}

}  // namespace

RecordingCalibration calibrate_from_recording(const std::string& dir, const std::string& base_path,
                                              const std::string& command, const std::string& date) {
  check_calibration_date(date);
  // Four stages: load and fit the time shares, then three replays of the recording.
  Progress progress("calibrate from " + dir, 4);
  progress.note("loading the recording");
  const Recording rec = load_validation_recording(dir);
  Json model = read_json_file(base_path);
  const GpuModel base = GpuModel::from_json(model, base_path);
  const double f_top = base.max_sm_mhz();
  check_recorded_clocks(rec, base);

  std::map<GroupKey, Group> groups = kernel_groups(rec.workload);
  const std::map<int, std::vector<const Group*>> by_class = usable_groups_by_class(groups, dir);
  std::vector<std::string> fitted, kept;
  const Json classes_report = fit_class_shares(model, by_class, f_top, fitted, kept);
  std::vector<const Group*> all;
  for (const auto& kv : by_class) all.insert(all.end(), kv.second.begin(), kv.second.end());
  std::sort(all.begin(), all.end(), [](const Group* a, const Group* b) { return a->mean_d * static_cast<double>(a->d.size()) > b->mean_d * static_cast<double>(b->d.size()); });
  const Json kernels = largest_groups_report(all, f_top);
  const Json per_kernel = per_kernel_shares(model, all, f_top);
  if (!per_kernel.empty()) model["kernels"] = per_kernel;
  else model.erase("kernels");

  const DynamicScaleFit dyn = fit_dynamic_scale(model, rec, base_path, dir, progress);
  progress.advance(1, "checking the fitted model");
  const GpuModel final_model = GpuModel::from_json(model, base_path);
  const Json check = validate_recording(rec, final_model);
  progress.advance();
  progress.finish();
  model["status"] = "calibrated";
  write_recording_provenance(model, dir, fitted, kept, classes_report, check, command, date);
  RecordingCalibration out;
  out.report = {{"recording", dir}, {"classes", classes_report}, {"kernels", kernels},
                {"kernels_with_own_share", per_kernel.size()}, {"dynamic_scale", dyn.scale},
                {"energy_before_scale_j", dyn.e_sim}, {"measured_energy_j", dyn.e_meas}, {"idle_energy_j", dyn.e_idle},
                {"replayed_time_s", dyn.t_sim}, {"validation", check}};
  out.model = model;
  return out;
}

std::string format_recording_calibration(const RecordingCalibration& c) {
  std::ostringstream os;
  os << std::fixed;
  os << "calibrated " << c.model.value("name", "") << " on " << c.report["recording"].get<std::string>() << "\n";
  os << "class          kernels groups  SM MHz span   time_sm fit   std err  used  time_sm time_mem\n";
  for (auto it = c.report["classes"].begin(); it != c.report["classes"].end(); ++it) {
    const Json& k = *it;
    os << std::left << std::setw(14) << it.key() << std::right << std::setw(8) << k["kernels"].get<std::size_t>()
       << std::setw(7) << k["groups"].get<std::size_t>() << std::setprecision(0) << std::setw(7)
       << k["sm_mhz_span"][0].get<double>() << "-" << std::setw(5) << k["sm_mhz_span"][1].get<double>()
       << std::setprecision(3) << std::setw(13) << k["time_sm_fit"].get<double>() << std::setw(10)
       << k["standard_error"].get<double>() << std::setw(6) << (k["used"].get<bool>() ? "yes" : "no") << std::setw(9)
       << k["time_sm"].get<double>() << std::setw(9) << k["time_mem"].get<double>() << "\n";
  }
  os << "largest recurring kernels (own fit; " << c.report["kernels_with_own_share"].get<std::size_t>()
     << " kernel names with >= 24 launches and standard error <= 0.05 keep their own share in `kernels`):\n";
  for (const auto& k : c.report["kernels"])
    os << "  " << std::left << std::setw(13) << k["class"].get<std::string>() << std::right << std::setw(5)
       << k["kernels"].get<std::size_t>() << " x " << std::setprecision(1) << std::setw(8) << k["mean_us"].get<double>()
       << " us  time_sm " << std::setprecision(3) << std::setw(6) << k["time_sm_fit"].get<double>() << " +- "
       << k["standard_error"].get<double>() << "  " << k["name"].get<std::string>().substr(0, 60) << "\n";
  os << std::setprecision(3) << "power.dynamic_scale " << c.report["dynamic_scale"].get<double>()
     << " (recorded-clock replay " << std::setprecision(1) << c.report["energy_before_scale_j"].get<double>()
     << " J before scaling, measured " << c.report["measured_energy_j"].get<double>() << " J)\n";
  const Json& v = c.report["validation"]["clock_sources"];
  os << std::setprecision(2) << "after calibration: native governor per-step energy MAPE " << v[0]["mape"]["energy_pct"].get<double>()
     << " %, time MAPE " << v[0]["mape"]["time_pct"].get<double>() << " %; recorded clocks total energy "
     << v[1]["total"]["energy_error_pct"].get<double>() << " %\n";
  return os.str();
}

}  // namespace dvfs
