#include "traces/src/recording.hpp"

#include "sim/core/csv.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace dvfs {

Telemetry Telemetry::load_csv(const std::string& path) {
  require_regular_file(path, "a telemetry CSV file (telemetry.csv)");
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open telemetry file (expected telemetry.csv)");
  Telemetry t;
  t.file_ = path;
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, "header", "empty file (expected a CSV header)");
  strip_bom(line);
  auto header = split_csv_line(line);
  auto col = [&](const char* name) {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  };
  const int c_t = col("t_ns"), c_sm = col("sm_mhz"), c_mem = col("mem_mhz"), c_e = col("energy_mj"),
            c_p = col("power_mw"), c_pi = col("power_instant_mw");
  for (auto [c, n] : {std::pair{c_t, "t_ns"}, {c_sm, "sm_mhz"}, {c_mem, "mem_mhz"}})
    if (c < 0) throw InputError(path, "header", std::string("missing column \"") + n + "\" (expected t_ns, sm_mhz, mem_mhz, and optionally energy_mj, power_mw, power_instant_mw)");
  t.has_energy_ = c_e >= 0;
  std::size_t row = 1;
  while (std::getline(in, line)) {
    ++row;
    if (blank_line(line)) continue;
    auto cells = split_csv_line(line);
    if (cells.size() > header.size())  // a shifted row would read its values under the wrong columns
      throw InputError(path, "row " + std::to_string(row), "expected at most " + std::to_string(header.size()) +
                                                             " values as in the header, got " + std::to_string(cells.size()));
    auto num = [&](int c, const char* n, double hi = INFINITY) {
      if (c < 0) return -1.0;
      if (c >= static_cast<int>(cells.size()) || cells[c].empty())
        throw InputError(path, "row " + std::to_string(row) + ", column " + n, "missing value (expected a number)");
      try {
        std::size_t used = 0;
        double v = std::stod(cells[c], &used);
        if (used != cells[c].size()) throw std::invalid_argument("trailing");
        if (!(v >= 0 && v <= hi) || !std::isfinite(v)) throw std::out_of_range("a reading below 0, nan, inf or beyond hi");
        return v;
      } catch (const std::exception&) {
        // every column is a time stamp, a clock, a counter or a power: a reading >= 0 (a negative one would also pass
        // for the "column absent" mark below); clocks and powers no GPU reaches are typos
        std::ostringstream bound;
        if (std::isfinite(hi)) bound << " and <= " << hi;
        throw InputError(path, "row " + std::to_string(row) + ", column " + n,
                         "expected a finite number >= 0" + bound.str() + ", got \"" + cells[c] + "\"");
      }
    };
    TelemetrySample s;
    s.t_ns = num(c_t, "t_ns");
    s.sm_mhz = num(c_sm, "sm_mhz", kMaxTelemetryMhz);
    s.mem_mhz = num(c_mem, "mem_mhz", kMaxTelemetryMhz);
    s.energy_mj = num(c_e, "energy_mj");
    s.power_w = c_p >= 0 ? num(c_p, "power_mw", kMaxTelemetryMw) / 1000.0 : -1;
    s.power_instant_w = c_pi >= 0 ? num(c_pi, "power_instant_mw", kMaxTelemetryMw) / 1000.0 : -1;
    if (!t.samples_.empty() && s.t_ns < t.samples_.back().t_ns)
      throw InputError(path, "row " + std::to_string(row) + ", column t_ns", "timestamps must not decrease");
    t.samples_.push_back(s);
  }
  if (t.samples_.size() < 2) throw InputError(path, "", "expected at least two telemetry samples");
  t.check_counter();
  if (t.has_energy_) {
    // The counter advances in steps; the instant of a step lies between the sample that first shows
    // it and the one before, so take the midpoint.
    const auto& sm = t.samples_;
    t.counter_points_.emplace_back(sm[0].t_ns, sm[0].energy_mj / 1000.0);
    for (std::size_t i = 1; i < sm.size(); ++i)
      if (sm[i].energy_mj != sm[i - 1].energy_mj)
        t.counter_points_.emplace_back(0.5 * (sm[i].t_ns + sm[i - 1].t_ns), sm[i].energy_mj / 1000.0);
    std::vector<double> gaps;  // between advances (the first point is the first sample, not an advance)
    for (std::size_t i = 2; i < t.counter_points_.size(); ++i)
      gaps.push_back((t.counter_points_[i].first - t.counter_points_[i - 1].first) * 1e-9);
    if (gaps.size() >= 2) {
      std::sort(gaps.begin(), gaps.end());
      const std::size_t h = gaps.size() / 2;
      t.update_interval_s_ = gaps.size() % 2 ? gaps[h] : 0.5 * (gaps[h - 1] + gaps[h]);
    }
  }
  return t;
}

// An energy counter that never advances (NVML energy unsupported or stuck) or that decreases measures
// nothing: it is set aside, with a note, and power samples integrated over time stand in when present.
void Telemetry::check_counter() {
  if (!has_energy_) return;
  const auto& sm = samples_;
  char note[256] = "";
  for (std::size_t i = 1; i < sm.size() && !note[0]; ++i)
    if (sm[i].energy_mj < sm[i - 1].energy_mj)
      std::snprintf(note, sizeof note, "energy_mj decreases (from %.0f to %.0f mJ at t_ns %.0f)", sm[i - 1].energy_mj,
                    sm[i].energy_mj, sm[i].t_ns);
  if (!note[0] && sm.back().energy_mj == sm.front().energy_mj)
    std::snprintf(note, sizeof note, "energy_mj never advances (%.0f mJ in all %zu samples)", sm.front().energy_mj, sm.size());
  if (!note[0]) return;
  has_energy_ = false;
  use_power_ = std::any_of(sm.begin(), sm.end(), [](const TelemetrySample& s) { return s.power_instant_w >= 0 || s.power_w >= 0; });
  energy_note_ = std::string(note) + (use_power_ ? ": the counter is not used; step energy is the integral of the power samples (" +
                                                       std::string(sm.front().power_instant_w >= 0 ? "power_instant_mw" : "power_mw") + ")"
                                                 : ": the counter is not used and there are no power samples");
}

double Telemetry::power_j_between(double t0_ns, double t1_ns) const {
  // Each sample's power holds until the next sample (the first one also before it).
  auto power = [](const TelemetrySample& s) { return s.power_instant_w >= 0 ? s.power_instant_w : s.power_w; };
  auto it = std::upper_bound(samples_.begin(), samples_.end(), t0_ns,
                             [](double v, const TelemetrySample& s) { return v < s.t_ns; });
  double p = power(it == samples_.begin() ? *it : *std::prev(it));
  double acc = 0, t = t0_ns;
  for (; it != samples_.end() && it->t_ns < t1_ns; ++it) {
    acc += p * (it->t_ns - t);
    t = it->t_ns;
    p = power(*it);
  }
  acc += p * (t1_ns - t);
  return acc * 1e-9;
}

const TelemetrySample& Telemetry::at(double t_ns) const {
  auto it = std::upper_bound(samples_.begin(), samples_.end(), t_ns,
                             [](double v, const TelemetrySample& s) { return v < s.t_ns; });
  return it == samples_.begin() ? *it : *std::prev(it);
}

double Telemetry::counter_j_at(double t_ns) const {
  const auto& p = counter_points_;
  if (t_ns <= p.front().first) return p.front().second;
  if (t_ns >= p.back().first) return p.back().second;
  auto it = std::upper_bound(p.begin(), p.end(), t_ns, [](double v, const auto& q) { return v < q.first; });
  const auto& hi = *it;
  const auto& lo = *std::prev(it);
  return lo.second + (hi.second - lo.second) * (t_ns - lo.first) / (hi.first - lo.first);
}

double Telemetry::energy_j_between(double t0_ns, double t1_ns) const {
  if (use_power_) return power_j_between(t0_ns, t1_ns);
  if (!has_energy_) return -1;
  return counter_j_at(t1_ns) - counter_j_at(t0_ns);
}

double Telemetry::interpolated_span_s(double t0_ns, double t1_ns) const {
  if (use_power_) {  // the gaps between samples that overlap [t0, t1], from the first sample after t0 on
    double longest = 0;
    auto it = std::upper_bound(samples_.begin(), samples_.end(), t0_ns, [](double v, const TelemetrySample& x) { return v < x.t_ns; });
    if (it == samples_.begin() && it != samples_.end()) ++it;
    for (; it != samples_.end() && std::prev(it)->t_ns < t1_ns; ++it) longest = std::max(longest, it->t_ns - std::prev(it)->t_ns);
    return longest * 1e-9;
  }
  if (!has_energy_) return 0;
  // the counter points bracketing t, or the samples bracketing it where they are further apart (an advance's instant
  // is only known to lie between two samples); after the last advance the counter is held flat, so the span from
  // that advance counts (a stall at the end)
  auto bracket = [&](double t_ns) {
    const auto& p = counter_points_;
    auto s = std::upper_bound(samples_.begin(), samples_.end(), t_ns, [](double v, const TelemetrySample& x) { return v < x.t_ns; });
    const double sample_gap = s == samples_.begin() || s == samples_.end() ? 0.0 : s->t_ns - std::prev(s)->t_ns;
    if (t_ns <= p.front().first) return sample_gap;
    if (t_ns >= p.back().first) return std::max(sample_gap, t_ns - p.back().first);
    auto it = std::upper_bound(p.begin(), p.end(), t_ns, [](double v, const auto& q) { return v < q.first; });
    return std::max(it->first - std::prev(it)->first, sample_gap);
  };
  return std::max(bracket(t0_ns), bracket(t1_ns)) * 1e-9;
}

double Telemetry::mean_sm_mhz(double t0_ns, double t1_ns) const {
  if (t1_ns <= t0_ns) return at(t0_ns).sm_mhz;
  double acc = 0, t = t0_ns;
  auto it = std::upper_bound(samples_.begin(), samples_.end(), t0_ns,
                             [](double v, const TelemetrySample& s) { return v < s.t_ns; });
  double f = (it == samples_.begin() ? *it : *std::prev(it)).sm_mhz;
  for (; it != samples_.end() && it->t_ns < t1_ns; ++it) {
    acc += f * (it->t_ns - t);
    t = it->t_ns;
    f = it->sm_mhz;
  }
  acc += f * (t1_ns - t);
  return acc / (t1_ns - t0_ns);
}

void attach_recorded_clocks(Workload& wl, const Telemetry& tel, const std::string& trace_file) {
  for (Rank& r : wl.ranks) {
    if (r.origin_epoch_ns <= 0)
      throw InputError(trace_file, "baseTimeNanoseconds",
                       "missing or 0: needed to align the trace with " + tel.file() + " (expected the trace clock's epoch in nanoseconds)");
    const double first = r.origin_epoch_ns;
    const double last = r.origin_epoch_ns + (r.recorded_start_s.back() + r.kernels.back().duration_s) * 1e9;
    if (last < tel.begin_ns() || first > tel.end_ns())
      throw InputError(tel.file(), "t_ns",
                       "telemetry does not overlap the trace " + trace_file + " (expected samples covering its kernels)");
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
      const TelemetrySample& s = tel.at(r.origin_epoch_ns + r.recorded_start_s[i] * 1e9);
      r.kernels[i].recorded_sm_mhz = static_cast<float>(s.sm_mhz);
      r.kernels[i].recorded_mem_mhz = static_cast<float>(s.mem_mhz);
    }
  }
}

std::string find_trace_file(const std::string& dir) {
  for (const char* n : {"trace.json.gz", "trace.json"})
    if (file_exists(dir + "/" + n)) return dir + "/" + n;
  throw InputError(dir, "trace.json.gz", "missing: expected a Kineto trace (trace.json.gz or trace.json) in the recording directory");
}

Recording load_recording(const std::string& dir, const Classifier& classifier) {
  if (!is_directory(dir)) throw InputError(dir, "", "not a directory (expected a recording with trace.json.gz, telemetry.csv, run.json)");
  Recording rec;
  rec.dir = dir;
  const std::string trace = find_trace_file(dir);
  rec.workload = import_kineto(trace, classifier, &rec.import_report);
  rec.telemetry = Telemetry::load_csv(dir + "/telemetry.csv");
  attach_recorded_clocks(rec.workload, rec.telemetry, trace);

  const std::string run_path = dir + "/run.json";
  rec.run = read_json_file(run_path);
  Rank& rank = rec.workload.ranks.front();
  if (!rec.run.contains("run") || !rec.run["run"].contains("profiled_steps")) return rec;
  const Json& ps = rec.run["run"]["profiled_steps"];
  if (!ps.is_array()) throw InputError(run_path, "run.profiled_steps", "expected a list of {t0_ns, t1_ns, energy_mj}");
  if (ps.size() != rank.steps.size())
    throw InputError(run_path, "run.profiled_steps",
                     "lists " + std::to_string(ps.size()) + " steps but the trace " + trace + " has " +
                         std::to_string(rank.steps.size()) + " (expected one entry per traced step)");
  for (std::size_t i = 0; i < ps.size(); ++i) {
    JsonReader r(ps[i], run_path, "run.profiled_steps[" + std::to_string(i) + "]");
    r.only_keys({"t0_ns", "t1_ns", "energy_mj"});  // a misspelt "energy_mJ" read as no counter reading
    MeasuredStep m;
    m.t0_ns = r.number("t0_ns");
    m.t1_ns = r.number("t1_ns");
    if (m.t1_ns <= m.t0_ns) r.fail("t1_ns", "expected t1_ns > t0_ns");
    if ((m.t1_ns - m.t0_ns) * 1e-9 > kMaxMeasuredStepS) {  // its idle lead and tail are replayed: 1e9 s ran for hours
      std::ostringstream os;
      os << "expected a step of at most " << kMaxMeasuredStepS << " s (t1_ns - t0_ns; README \"Limits and bad input\"), got "
         << (m.t1_ns - m.t0_ns) * 1e-9 << " s";
      r.fail("t1_ns", os.str());
    }
    if (i > 0 && m.t0_ns < rec.steps.back().t0_ns)
      r.fail("t0_ns", "expected steps in time order (this step starts before the previous one)");
    if (i > 0 && m.t0_ns < rec.steps.back().t1_ns)  // its overlap would be measured twice
      r.fail("t0_ns", "expected steps that do not overlap (this step starts " +
                          std::to_string((rec.steps.back().t1_ns - m.t0_ns) * 1e-6) + " ms before the previous one ends)");
    if (m.t0_ns < rec.telemetry.begin_ns() || m.t1_ns > rec.telemetry.end_ns()) {  // energy beyond the samples is no measurement
      std::ostringstream os;
      os << std::fixed << std::setprecision(0) << "expected the step within the telemetry's samples (" << dir
         << "/telemetry.csv runs from t_ns " << rec.telemetry.begin_ns() << " to " << rec.telemetry.end_ns() << "), got " << m.t0_ns
         << " to " << m.t1_ns;
      r.fail(m.t0_ns < rec.telemetry.begin_ns() ? "t0_ns" : "t1_ns", os.str());
    }
    m.counter_energy_j = r.has("energy_mj") ? r.non_negative("energy_mj") / 1000.0 : -1;  // a negative one passed for "absent"
    m.energy_j = rec.telemetry.energy_j_between(m.t0_ns, m.t1_ns);
    m.energy_resolved = counter_resolves((m.t1_ns - m.t0_ns) * 1e-9, rec.telemetry.counter_update_interval_s());
    m.mean_sm_mhz = rec.telemetry.mean_sm_mhz(m.t0_ns, m.t1_ns);
    m.interpolated_span_s = rec.telemetry.interpolated_span_s(m.t0_ns, m.t1_ns);
    rec.steps.push_back(m);
  }
  // Once every step's bounds are read (so an order or overlap problem is named before a bound that follows from it):
  // the measured bounds are the better step boundaries, and the host lead and tail come from them.
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const MeasuredStep& m = rec.steps[i];
    const JsonReader r(ps[i], run_path, "run.profiled_steps[" + std::to_string(i) + "]");
    Step& st = rank.steps[i];
    const double first_ns = rank.origin_epoch_ns + rank.recorded_start_s[st.first_kernel] * 1e9;
    const double last_ns = rank.origin_epoch_ns +
                           (rank.recorded_start_s[st.last_kernel] + rank.kernels[st.last_kernel].duration_s) * 1e9;
    // the trace's kernels of this step must lie within its measured bounds, up to the clocks' misalignment (Kineto
    // against NVML's epoch: a few ms): a shifted run.json or baseTimeNanoseconds replayed idle leads of the shift
    const double slack_ns = std::max(kStepBoundSlackS * 1e9, 0.5 * (m.t1_ns - m.t0_ns));
    if (first_ns < m.t0_ns - slack_ns || last_ns > m.t1_ns + slack_ns) {
      std::ostringstream os;
      os << std::fixed << std::setprecision(1) << "expected the step to hold its traced kernels (" << trace << " puts them from "
         << (first_ns - m.t0_ns) * 1e-6 << " ms to " << (last_ns - m.t0_ns) * 1e-6 << " ms after t0_ns, the step lasts "
         << (m.t1_ns - m.t0_ns) * 1e-6 << " ms): run.json's bounds and the trace's clock (baseTimeNanoseconds) disagree";
      r.fail(first_ns < m.t0_ns - slack_ns ? "t0_ns" : "t1_ns", os.str());
    }
    st.lead_s = bounded_step_lead(rank, st, (first_ns - m.t0_ns) * 1e-9);
    st.tail_s = std::max(0.0, (m.t1_ns - last_ns) * 1e-9);
  }
  return rec;
}

}  // namespace dvfs
