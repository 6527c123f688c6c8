#include "sim/critical_path/computation_curve.hpp"

#include "sim/core/errors.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dvfs {

int ComputationCurve::option_at_sm_mhz(double sm_mhz) const {
  for (std::size_t i = 0; i < options.size(); ++i)
    if (options[i].variant < 0 && options[i].clocks.sm_mhz == sm_mhz) return static_cast<int>(i);
  return -1;
}

ComputationCurve make_curve(std::vector<CurveOption> options, double pb, double min_sm_mhz) {
  if (options.empty()) throw InputError("computation curve", "options", "expected at least one way to run the computation");
  for (const CurveOption& o : options)
    if (!(o.time_s > 0) || !std::isfinite(o.time_s) || !std::isfinite(o.energy_j))
      throw InputError("computation curve", "options", "expected finite times > 0 s and finite energies");
  ComputationCurve c;
  c.options = std::move(options);
  std::vector<int> order(c.options.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const double ta = c.options[static_cast<std::size_t>(a)].time_s, tb = c.options[static_cast<std::size_t>(b)].time_s;
    if (ta != tb) return ta < tb;
    return c.effective_j(a, pb) < c.effective_j(b, pb);
  });
  // Fastest first; an option stays only if it is cheaper (effective) than every faster one.
  double best = INFINITY;
  for (int i : order) {
    const CurveOption& o = c.options[static_cast<std::size_t>(i)];
    if (o.variant < 0 && o.clocks.sm_mhz < min_sm_mhz) continue;
    const double e = c.effective_j(i, pb);
    if (c.pareto.empty() || e < best - 1e-12 * std::max(1.0, std::fabs(best))) {
      if (!c.pareto.empty() && c.options[static_cast<std::size_t>(c.pareto.back())].time_s == c.options[static_cast<std::size_t>(i)].time_s)
        c.pareto.back() = i;  // same time, cheaper (cannot happen after the sort; kept for safety)
      else
        c.pareto.push_back(i);
      best = e;
    }
  }
  if (c.pareto.empty()) throw InputError("computation curve", "options", "expected an option at or above " + std::to_string(min_sm_mhz) + " MHz");
  return c;
}

std::vector<int> lower_hull(const ComputationCurve& c, double pb) {
  std::vector<int> h;
  for (int i : c.pareto) {
    const double t = c.options[static_cast<std::size_t>(i)].time_s, e = c.effective_j(i, pb);
    while (h.size() >= 2) {
      const int a = h[h.size() - 2], b = h.back();
      const double ta = c.options[static_cast<std::size_t>(a)].time_s, ea = c.effective_j(a, pb);
      const double tb = c.options[static_cast<std::size_t>(b)].time_s, eb = c.effective_j(b, pb);
      // b lies on or above the segment a-i: not on the lower hull.
      if ((eb - ea) * (t - ta) >= (e - ea) * (tb - ta)) h.pop_back();
      else break;
    }
    h.push_back(i);
  }
  return h;
}

StagePrediction anchored_prediction(const GpuModel& m, const ClassCoefficients& cc, const StageMeasurement& a,
                                    double sm_mhz, double cap_clock_mhz) {
  const ClockPair target{sm_mhz, a.clocks.mem_mhz};
  if (cap_clock_mhz <= 0) return predict_computation(m, cc, a, target);
  // The same equations as predict_computation with the board's clock ceiling in place of the model's cap.
  const double fa = std::min(a.clocks.sm_mhz, cap_clock_mhz), fe = std::min(sm_mhz, cap_clock_mhz);
  StagePrediction p;
  p.effective_sm_mhz = fe;
  p.time_s = a.time_s * m.time_shape(cc, fe, target.mem_mhz) / m.time_shape(cc, fa, a.clocks.mem_mhz);
  const double s = m.sm_independent_power_w(cc, a.clocks.mem_mhz);
  p.power_w = s + (a.energy_j / a.time_s - s) * m.g_at(fe) / m.g_at(fa);
  p.energy_j = p.power_w * p.time_s;
  return p;
}

ComputationCurve stage_model_curve(const GpuModel& m, const ClassCoefficients& cc, const StageMeasurement& anchor,
                                   double pb, double cap_clock_mhz, double min_sm_mhz) {
  std::vector<CurveOption> opts;
  for (double f : m.sm_clocks_mhz()) {
    const StagePrediction p = anchored_prediction(m, cc, anchor, f, cap_clock_mhz);
    opts.push_back({{f, anchor.clocks.mem_mhz}, p.time_s, p.energy_j, -1});
  }
  return make_curve(std::move(opts), pb, min_sm_mhz);
}

}  // namespace dvfs
