#include "sim/calibrate/profile_fit.hpp"

#include "models/src/stage_model.hpp"
#include "sim/calibrate/calibration_date.hpp"
#include "sim/calibrate/rounding.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/progress.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>

namespace dvfs {

namespace {


constexpr double kMaxProfileTargetFraction = 2.0;  // models/src/gpu_model.cpp: native_governor.target_fraction in (0, 2]

struct Shape {
  double v_floor = 1, knee_mhz = 0, fmax = 1;
  double g(double f) const {
    const double v = f <= knee_mhz ? v_floor : v_floor + (1.0 - v_floor) * (f - knee_mhz) / (fmax - knee_mhz);
    return v * v * f / fmax;
  }
};

struct PowerFit {
  Shape shape;
  double a = 0;
  std::vector<double> b;  // per instruction
  double score = std::numeric_limits<double>::infinity();  // mean squared relative error
};

// Solves the small dense system M x = y (Gaussian elimination with partial pivoting).
bool solve(std::vector<std::vector<double>> m, std::vector<double> y, std::vector<double>& x) {
  const std::size_t n = y.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[piv][c])) piv = r;
    if (std::fabs(m[piv][c]) < 1e-300) return false;
    std::swap(m[c], m[piv]);
    std::swap(y[c], y[piv]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double k = m[r][c] / m[c][c];
      for (std::size_t j = c; j < n; ++j) m[r][j] -= k * m[c][j];
      y[r] -= k * y[c];
    }
  }
  x.assign(n, 0);
  for (std::size_t c = n; c-- > 0;) {
    double s = y[c];
    for (std::size_t j = c + 1; j < n; ++j) s -= m[c][j] * x[j];
    x[c] = s / m[c][c];
  }
  return true;
}

struct Row {
  std::size_t instr;
  double f, p;
};

PowerFit fit_power(const std::vector<Row>& rows, std::size_t n_instr, double fmin, double fmax) {
  PowerFit best;
  for (int vi = 50; vi <= 100; ++vi) {
    for (double knee = std::floor(fmin / 15) * 15; knee <= fmax - 45; knee += 15) {
      Shape sh{vi / 100.0, knee, fmax};
      const std::size_t n = n_instr + 1;
      std::vector<std::vector<double>> m(n, std::vector<double>(n, 0));
      std::vector<double> y(n, 0);
      for (const Row& r : rows) {  // weights 1/P^2: least squares on the relative error
        std::vector<double> x(n, 0);
        x[0] = 1;
        x[1 + r.instr] = sh.g(r.f);
        const double w = 1.0 / (r.p * r.p);
        for (std::size_t i = 0; i < n; ++i) {
          y[i] += w * x[i] * r.p;
          for (std::size_t j = 0; j < n; ++j) m[i][j] += w * x[i] * x[j];
        }
      }
      std::vector<double> c;
      if (!solve(m, y, c)) continue;
      double err = 0;
      for (const Row& r : rows) {
        const double e = (c[0] + c[1 + r.instr] * sh.g(r.f)) / r.p - 1.0;
        err += e * e;
      }
      err /= static_cast<double>(rows.size());
      if (err < best.score) {
        best.score = err;
        best.shape = sh;
        best.a = c[0];
        best.b.assign(c.begin() + 1, c.end());
      }
    }
  }
  return best;
}

// Writes the power fit, the cap target and the time share into a copy of the base model file.
Json build_model(const Json& base, const StageProfile& prof, const PowerFit& pf, double target_fraction, double time_sm) {
  Json m = base;
  const double idle = m["power"]["idle_w"].get<double>();
  const double fmax = pf.shape.fmax;
  double a_frac = 0;
  const double a = pf.a;
  if (a <= idle) a_frac = round_to(1.0 - a / idle, 0.001);
  const double a_used = idle * (1.0 - a_frac);  // the static part after rounding
  m["status"] = "calibrated";
  m["voltage_curve"]["points"] = Json::array({Json::array({pf.shape.knee_mhz, pf.shape.v_floor}), Json::array({fmax, 1.0})});
  m["power"]["idle_sm_fraction"] = a_frac;
  m["power"]["dynamic_scale"] = 1.0;
  if (!m.contains("native_governor"))
    m["native_governor"] = {{"control_period_s", 0.005}, {"window_s", 0.05}, {"target_fraction", 0.98},
                            {"down_gain_steps_per_w", 0.05}, {"up_steps_per_period", 1}, {"up_margin_w", 10.0}};
  m["native_governor"]["target_fraction"] = target_fraction;
  Json comps = Json::object();
  const std::vector<std::string> instr = prof.instructions();
  double d_forward = 0, s_forward = 1;
  for (std::size_t k = 0; k < instr.size(); ++k) {
    // A + B_k g = idle (1 - a) + idle a g + D (s g + 1 - s)   at the highest memory clock
    const double extra = a - a_used;  // > 0 only when A exceeds idle: a memory-clock share
    const double d_sm = pf.b[k] - idle * a_frac;
    const double d = round_to(d_sm + std::max(0.0, extra), 0.1);
    const double s = d > 0 ? round_to(std::min(1.0, d_sm / d), 0.001) : 1.0;
    comps[instr[k]] = {{"time_sm", round_to(time_sm, 0.001)}, {"time_mem", 0.0}, {"dynamic_w", d}, {"sm_share", s}};
    if (instr[k] == "forward" || k == 0) d_forward = d, s_forward = s;
  }
  m["computations"] = comps;
  // Kernel classes: power rescaled so gemm equals the fitted forward pass, and the fitted SM share
  // (the profile cannot tell classes apart, but it does fix how power moves with the SM clock).
  const double base_gemm = m["classes"]["gemm"]["dynamic_w"].get<double>();
  const double r = base_gemm > 0 ? d_forward / base_gemm : 1.0;
  for (auto& c : m["classes"]) {
    c["dynamic_w"] = base_gemm > 0 ? round_to(c["dynamic_w"].get<double>() * r, 0.1) : d_forward;
    c["sm_share"] = s_forward;
  }
  return m;
}

double pooled_time_share(const GpuModel& model, const StageProfile& prof) {
  // t / t_a = shape(f_e) / shape(f_a) with shape(f) = b f_max / f + 1 - b: least squares over b in
  // [0, 1] across every distinct series (a grid, then a finer grid around the best point).
  struct Obs {
    double ra, re, y;  // f_max / f_a, f_max / f_e, t / t_a
  };
  std::vector<Obs> obs;
  const double mem = model.max_mem_mhz(), fmax = model.max_sm_mhz();
  for (const auto& s : prof.series) {
    if (s.duplicate_of >= 0) continue;
    const ClassCoefficients* cc = model.computation(s.instruction);
    const ProfilePoint* ref = s.at(prof.max_sm_mhz);
    const double fa = capped_sm_mhz(model, *cc, ref->sm_mhz, mem);
    for (const auto& p : s.points)
      obs.push_back({fmax / fa, fmax / capped_sm_mhz(model, *cc, p.sm_mhz, mem), p.time_s / ref->time_s});
  }
  auto sse = [&](double b) {
    double e = 0;
    for (const Obs& o : obs) {
      const double d = (b * o.re + 1 - b) / (b * o.ra + 1 - b) - o.y;
      e += d * d;
    }
    return e;
  };
  double best = 1.0, best_e = sse(1.0);
  for (int i = 0; i <= 1000; ++i) {
    const double b = i / 1000.0, e = sse(b);
    if (e < best_e) best = b, best_e = e;
  }
  const double lo = std::max(0.0, best - 0.001);
  for (int i = 0; i <= 200; ++i) {
    const double b = lo + i * 1e-5, e = b <= 1.0 ? sse(b) : best_e;
    if (e < best_e) best = b, best_e = e;
  }
  return best;
}

// The profile's clocks must lie in the base model's clock table.
void check_profile_range(const StageProfile& prof, const GpuModel& base_model, const std::string& profile_path) {
  const double fmax = base_model.max_sm_mhz();
  if (prof.max_sm_mhz > fmax + 1e-6 || prof.min_sm_mhz < base_model.sm_clocks_mhz().front() - 1e-6) {
    std::ostringstream os;
    os << "profile clocks " << prof.min_sm_mhz << "-" << prof.max_sm_mhz << " MHz lie outside the base model's "
       << base_model.describe_sm_clocks();
    throw InputError(profile_path, "frequency", os.str());
  }
}

// Every row's mean power, each checked against the base model (a clock of its table, a plausible power);
// duplicate series add no rows. `p_max` is the largest power kept, on the profile's line `p_max_line`.
std::vector<Row> power_rows(const StageProfile& prof, const std::vector<std::string>& instr, const GpuModel& base_model,
                            const std::string& profile_path, double& p_max, long& p_max_line) {
  p_max = 0;
  p_max_line = 0;
  std::vector<Row> all;
  for (const auto& s : prof.series) {
    const std::size_t k = std::find(instr.begin(), instr.end(), s.instruction) - instr.begin();
    for (const auto& p : s.points) {
      if (base_model.sm_index(p.sm_mhz) < 0) {
        std::ostringstream os;
        os << "frequency " << p.sm_mhz << " MHz is not a clock of the base model " << base_model.name() << " ("
           << base_model.describe_sm_clocks() << ")";
        throw InputError(profile_path, "row " + std::to_string(p.line) + " (frequency)", os.str());
      }
      const double w = p.energy_j / p.time_s;
      if (w > 2 * base_model.power_cap_w() || w < 0.2 * base_model.idle_w()) {
        std::ostringstream os;
        os << "energy / time = " << w << " W is implausible for " << base_model.name() << " (cap "
           << base_model.power_cap_w() << " W, idle " << base_model.idle_w() << " W): expected s and J";
        throw InputError(profile_path, "row " + std::to_string(p.line), os.str());
      }
      if (s.duplicate_of >= 0) continue;  // copies add no evidence
      all.push_back({k, p.sm_mhz, w});
      if (w > p_max) p_max = w, p_max_line = static_cast<long>(p.line);
    }
  }
  return all;
}

// One cap-target candidate: the model written with it, its in-sample error and its row of the fit table.
struct ProfileCandidate {
  Json model;
  ProfileError err;
  Json row;
};

// Fits the power model on the rows the cap at `tf` x cap cannot have touched; nothing when too few rows
// remain or the fit is not physically meaningful.
std::optional<ProfileCandidate> fit_cap_target(double tf, const std::vector<Row>& all, std::size_t instructions, const StageProfile& prof,
                                               const std::string& profile_path, const Json& base, const std::string& base_path, double cap,
                                               double fmax) {
  std::vector<Row> below;  // rows the cap cannot have touched
  for (const Row& r : all)
    if (r.p < 0.97 * tf * cap) below.push_back(r);
  if (below.size() < 3 * (instructions + 1)) return std::nullopt;
  PowerFit pf = fit_power(below, instructions, prof.min_sm_mhz, fmax);
  if (!std::isfinite(pf.score)) return std::nullopt;
  // Physically meaningful only with non-negative static power and power rising with the clock.
  if (!(pf.a >= 0) || std::any_of(pf.b.begin(), pf.b.end(), [](double b) { return !(b > 0); })) return std::nullopt;
  pf.shape.v_floor = round_to(pf.shape.v_floor, 0.01);
  // Time share: fit through the model with a provisional share, then write the final one.
  // The base was read without error, so a model file error here is the fitted values': it is the profile's, and the
  // message names the profile (it named the base file and a field that is valid there).
  const auto fitted_model = [&](const Json& j) {
    try {
      return GpuModel::from_json(j, base_path);
    } catch (const InputError& e) {
      if (e.file() != base_path) throw;
      throw InputError(profile_path, "time, energy",
                       "the power fit on this profile gives an impossible model (" + e.field() + ": " + e.problem() +
                           "): expected times in s and energies in J of one stage at each clock");
    }
  };
  Json provisional = build_model(base, prof, pf, tf, 1.0);
  const double b = pooled_time_share(fitted_model(provisional), prof);
  Json model_json = build_model(base, prof, pf, tf, b);
  bool negative = false;
  for (const auto& c : model_json["computations"]) negative = negative || c["dynamic_w"].get<double>() < 0;
  if (negative) return std::nullopt;
  const GpuModel model = fitted_model(model_json);
  ProfileError err = check_profile(model, prof);
  Json row = {{"target_fraction", tf}, {"cap_target_w", tf * cap}, {"v_floor", pf.shape.v_floor},
              {"knee_mhz", pf.shape.knee_mhz}, {"static_w", pf.a}, {"time_sm", round_to(b, 0.001)},
              {"power_fit_rms_pct", 100 * std::sqrt(pf.score)},
              {"time_mape_pct", 100 * err.time_mape}, {"energy_mape_pct", 100 * err.energy_mape}};
  return ProfileCandidate{std::move(model_json), err, std::move(row)};
}

// Provenance of what the fit wrote, in the chosen model's provenance block.
void write_profile_provenance(ProfileCalibration& best, const StageProfile& prof, const GpuModel& base_model,
                              const std::string& profile_path, const std::string& command, const std::string& date) {
  Json& prov = best.model["provenance"];
  const std::string name = profile_path.substr(profile_path.find_last_of('/') + 1);
  const std::string ref = "fit on the stage profile " + name + " by `dvfs-sim calibrate --profile`";
  set_provenance(prov, "/voltage_curve", "fit", "voltage floor and knee: grid search minimising the relative power error, " + ref);
  const double static_w = best.table["static_w"].get<double>(), idle_w = base_model.idle_w();
  if (static_w <= idle_w)
    set_provenance(prov, "/power/idle_sm_fraction", "fit", "1 - (fitted static power A) / idle_w, " + ref);
  else
    set_provenance(prov, "/power/idle_sm_fraction", "fit",
                   "0: the fitted static power A exceeds idle_w; the excess A - idle_w is each computation's "
                   "power that does not scale with the SM clock (sm_share < 1), " + ref);
  set_provenance(prov, "/power/dynamic_scale", "fit", "1: the fitted dynamic power is absolute, " + ref);
  set_provenance(prov, "/native_governor/target_fraction", "fit",
                 "cap regulation target chosen by the smallest in-sample prediction error, " + ref);
  set_provenance(prov, "/computations", "fit",
                 "time_sm pooled over every series; dynamic_w and sm_share per instruction; time_mem 0 because the "
                 "profile holds the memory clock fixed, " + ref);
  for (auto it = best.model["classes"].begin(); it != best.model["classes"].end(); ++it) {
    set_provenance(prov, "/classes/" + it.key() + "/dynamic_w", "estimate",
                   "base model value rescaled so gemm equals the fitted forward computation (a stage profile cannot "
                   "separate kernel classes), " + ref);
    set_provenance(prov, "/classes/" + it.key() + "/sm_share", "fit", "the fitted forward computation's sm_share, " + ref);
  }
  {
    std::ostringstream os;
    os << std::fixed << std::setprecision(2) << "calibrated on the stage profile " << name
       << " (V-f floor and knee, power per computation, cap target, time share; in-sample time MAPE "
       << 100 * best.fit_error.time_mape << " %, energy " << 100 * best.fit_error.energy_mape
       << " %); kernel classes estimated; `dvfs-sim validate --models` gives held-out errors";
    prov["summary"] = os.str();
  }
  prov["generated_by"] = "models/calibration/regenerate.sh";
  prov["calibration"] = {{"command", command}, {"date", date}, {"data", name}, {"rows", prof.rows},
                         {"series", prof.series.size()},
                         {"fit_error_in_sample", {{"time_mape_pct", 100 * best.fit_error.time_mape},
                                                  {"energy_mape_pct", 100 * best.fit_error.energy_mape},
                                                  {"time_max_ape_pct", 100 * best.fit_error.time_max_ape},
                                                  {"energy_max_ape_pct", 100 * best.fit_error.energy_max_ape}}},
                         {"chosen", best.table}};
}

}  // namespace

ProfileCalibration calibrate_from_profile(const std::string& profile_path, const std::string& base_path,
                                          const std::string& command, const std::string& date) {
  check_calibration_date(date);
  const StageProfile prof = load_stage_profile(profile_path);
  const Json base = read_json_file(base_path);
  const GpuModel base_model = GpuModel::from_json(base, base_path);
  const double fmax = base_model.max_sm_mhz();
  check_profile_range(prof, base_model, profile_path);
  const std::vector<std::string> instr = prof.instructions();
  double p_max = 0;
  long p_max_line = 0;
  const std::vector<Row> all = power_rows(prof, instr, base_model, profile_path, p_max, p_max_line);
  const double cap = base_model.power_cap_w();
  std::vector<double> targets = {base_model.governor().target_fraction};
  for (int i = 0; i <= 8; ++i) targets.push_back(round_to(p_max * (0.97 + 0.01 * i) / cap, 0.001));
  // The cap targets reach p_max x 1.05; a model's target_fraction is at most 2 (x cap). A row this far above the cap
  // (a time too short for its energy, e.g. halved) made the fit fail on the base file's target_fraction, a valid 0.98.
  if (targets.back() > kMaxProfileTargetFraction) {
    std::ostringstream os;
    os << "energy / time = " << p_max << " W is " << std::setprecision(3) << p_max / cap << " x the power cap of " << base_model.name()
       << " (" << cap << " W): no cap target fits it (a model's native_governor.target_fraction is at most 2, and the fit tries up "
       << "to 1.05 x the highest row power); expected at most " << std::setprecision(4) << kMaxProfileTargetFraction / 1.05 * cap
       << " W (s and J of one stage at this clock)";
    throw InputError(profile_path, "row " + std::to_string(p_max_line), os.str());
  }

  // The cap target with the smallest in-sample time + energy error.
  ProfileCalibration best;
  double best_score = std::numeric_limits<double>::infinity();
  Json candidates = Json::array();
  Progress progress("calibrate " + base_model.name() + ": cap targets", targets.size());
  for (double tf : targets) {
    std::optional<ProfileCandidate> c = fit_cap_target(tf, all, instr.size(), prof, profile_path, base, base_path, cap, fmax);
    progress.advance();
    if (!c) continue;
    const double score = c->err.time_mape + c->err.energy_mape;
    candidates.push_back(c->row);
    if (score < best_score) {
      best_score = score;
      best.model = std::move(c->model);
      best.fit_error = c->err;
      best.table = candidates.back();
    }
  }
  progress.finish();
  if (!std::isfinite(best_score))
    throw InputError(profile_path, "energy",
                     "no physically meaningful power fit: too few distinct rows below the power cap, a clock range "
                     "under 60 MHz, or power that does not rise with the SM clock");
  write_profile_provenance(best, prof, base_model, profile_path, command, date);
  best.table = {{"chosen", best.table}, {"candidates", candidates}, {"profile", profile_path}};
  return best;
}

std::string format_profile_calibration(const ProfileCalibration& c) {
  std::ostringstream os;
  os << std::fixed;
  os << "calibrated " << c.model.value("name", "") << " on " << c.table["profile"].get<std::string>() << "\n";
  os << "cap target candidates (W)   V floor  knee MHz  static W  time_sm  power rms %  time MAPE %  energy MAPE %\n";
  for (const auto& k : c.table["candidates"]) {
    const bool chosen = k == c.table["chosen"];
    os << (chosen ? "* " : "  ") << std::setw(24) << std::setprecision(1) << k["cap_target_w"].get<double>()
       << std::setw(11) << std::setprecision(2) << k["v_floor"].get<double>() << std::setw(10) << std::setprecision(0)
       << k["knee_mhz"].get<double>() << std::setw(10) << std::setprecision(1) << k["static_w"].get<double>()
       << std::setw(9) << std::setprecision(3) << k["time_sm"].get<double>() << std::setw(13) << std::setprecision(2)
       << k["power_fit_rms_pct"].get<double>() << std::setw(13) << k["time_mape_pct"].get<double>() << std::setw(15)
       << k["energy_mape_pct"].get<double>() << "\n";
  }
  os << "computations:\n";
  for (auto it = c.model["computations"].begin(); it != c.model["computations"].end(); ++it)
    os << "  " << std::setw(9) << std::left << it.key() << std::right << " time_sm " << std::setprecision(3)
       << (*it)["time_sm"].get<double>() << "  dynamic_w " << std::setprecision(1) << (*it)["dynamic_w"].get<double>()
       << "  sm_share " << std::setprecision(3) << (*it)["sm_share"].get<double>() << "\n";
  os << "per series (in-sample, anchor row excluded):\n";
  for (const auto& s : c.fit_error.series)
    os << "  stage " << s.stage << " " << std::setw(9) << std::left << s.instruction << std::right << " time MAPE "
       << std::setprecision(2) << std::setw(5) << 100 * s.time_mape << " %  energy MAPE " << std::setw(5)
       << 100 * s.energy_mape << " %\n";
  return os.str();
}

}  // namespace dvfs
