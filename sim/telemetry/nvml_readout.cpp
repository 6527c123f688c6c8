#include "sim/telemetry/nvml_readout.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dvfs {

double PowerSeries::energy_j(double t0, double t1) const {
  if (!(t1 > t0) || power_w.empty()) return 0;
  t0 = std::max(0.0, t0);
  t1 = std::min(duration_s(), t1);
  if (t1 <= t0) return 0;
  auto first = static_cast<std::size_t>(std::floor(t0 / bin_s));
  double e = 0;
  for (std::size_t b = first; b < power_w.size(); ++b) {
    const double lo = std::max(t0, static_cast<double>(b) * bin_s), hi = std::min(t1, static_cast<double>(b + 1) * bin_s);
    if (hi <= lo) {
      if (static_cast<double>(b) * bin_s >= t1) break;
      continue;
    }
    e += power_w[b] * (hi - lo);
  }
  return e;
}

double PowerSeries::mean_w(double t0, double t1) const { return t1 > t0 ? energy_j(t0, t1) / (t1 - t0) : 0.0; }

PowerSeries sum_series(const std::vector<const PowerSeries*>& parts) {
  PowerSeries out;
  if (parts.empty()) return out;
  out.bin_s = parts.front()->bin_s;
  std::size_t n = 0;
  for (const PowerSeries* p : parts) {
    if (std::fabs(p->bin_s - out.bin_s) > 1e-12 * out.bin_s) throw std::invalid_argument("sum_series: series on different bins");
    n = std::max(n, p->power_w.size());
  }
  out.power_w.assign(n, 0.0);
  for (const PowerSeries* p : parts)
    for (std::size_t i = 0; i < p->power_w.size(); ++i) out.power_w[i] += p->power_w[i];
  return out;
}

const char* to_string(NvmlField f) {
  switch (f) {
    case NvmlField::average: return "average";
    case NvmlField::instant: return "instant";
    case NvmlField::energy_counter: return "energy-counter";
    case NvmlField::exact: return "exact";
  }
  return "?";
}

bool nvml_field_from_string(const std::string& s, NvmlField& out) {
  for (NvmlField f : {NvmlField::average, NvmlField::instant, NvmlField::energy_counter, NvmlField::exact})
    if (s == to_string(f)) {
      out = f;
      return true;
    }
  return false;
}

double nvml_sample_at(const PowerSeries& p, NvmlField field, double t, double sample_s, const NvmlSpec& spec) {
  // The last refresh (or counter advance) of a period-`period` clock with phase `phase` at or before t.
  auto last_update = [](double at, double period, double phase) { return std::floor((at - phase) / period + 1e-9) * period + phase; };
  switch (field) {
    case NvmlField::exact: return p.mean_w(t - sample_s, t);
    case NvmlField::average: return p.mean_w(std::max(0.0, t - spec.average_window_s), t);
    case NvmlField::instant: {
      const double u = last_update(t, spec.instant_period_s, spec.phase_s);
      return u > 0 ? p.mean_w(std::max(0.0, u - spec.instant_window_s), u) : 0.0;
    }
    case NvmlField::energy_counter: {
      const double u1 = std::max(0.0, last_update(t, spec.counter_period_s, spec.phase_s));
      const double u0 = std::max(0.0, last_update(t - sample_s, spec.counter_period_s, spec.phase_s));
      return u1 > u0 ? p.energy_j(u0, u1) / sample_s : 0.0;
    }
  }
  return 0;
}

std::vector<double> nvml_samples(const PowerSeries& p, NvmlField field, double sample_s, const NvmlSpec& spec) {
  if (!(sample_s > 0)) throw std::invalid_argument("nvml_samples: sample period must be > 0");
  const auto n = static_cast<std::size_t>(std::floor(p.duration_s() / sample_s + 1e-9));
  std::vector<double> out(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) out[k] = nvml_sample_at(p, field, static_cast<double>(k + 1) * sample_s, sample_s, spec);
  return out;
}

}  // namespace dvfs
