#include "sim/telemetry/window_stats.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace dvfs {

std::vector<double> window_means(const std::vector<double>& samples, double sample_s, double window_s) {
  if (!(sample_s > 0) || window_s < sample_s * (1 - 1e-9))
    throw std::invalid_argument("window_means: expected a window at least one sample long");
  const auto per = static_cast<std::size_t>(std::max(1.0, std::round(window_s / sample_s)));
  std::vector<double> out;
  out.reserve(samples.size() / per);
  for (std::size_t i = 0; i + per <= samples.size(); i += per) {
    double s = 0;
    for (std::size_t j = i; j < i + per; ++j) s += samples[j];
    out.push_back(s / static_cast<double>(per));
  }
  return out;
}

double violation_rate(const std::vector<double>& means, double budget_w) {
  if (means.empty()) return 0;
  const auto over = std::count_if(means.begin(), means.end(), [&](double m) { return m > budget_w; });
  return static_cast<double>(over) / static_cast<double>(means.size());
}

WindowSummary summarize_windows(const std::vector<double>& samples, double sample_s, double window_s, double budget_w,
                                double nameplate_w) {
  const std::vector<double> m = window_means(samples, sample_s, window_s);
  WindowSummary s;
  s.window_s = window_s;
  s.windows = m.size();
  if (m.empty()) return s;
  double sum = 0;
  for (double v : m) sum += v;
  s.mean_w = sum / static_cast<double>(m.size());
  s.peak_w = *std::max_element(m.begin(), m.end());
  s.violation_rate = violation_rate(m, budget_w);
  s.peak_share = nameplate_w > 0 ? s.peak_w / nameplate_w : 0.0;
  return s;
}

double budget_at_violation_rate(const std::vector<double>& means, double rate) {
  if (means.empty()) return 0;
  if (!(rate >= 0) || !(rate < 1)) throw std::invalid_argument("budget_at_violation_rate: expected a rate in [0, 1)");
  std::vector<double> d = means;
  std::sort(d.begin(), d.end(), std::greater<double>());
  // At most floor(rate n) windows may lie strictly above the budget; ties at the budget do not violate.
  const auto allowed = static_cast<std::size_t>(std::floor(rate * static_cast<double>(d.size()) + 1e-9));
  return d[std::min(allowed, d.size() - 1)];
}

double sustainable_oversubscription(const std::vector<double>& means, double nameplate_w, double rate) {
  const double b = budget_at_violation_rate(means, rate);
  return b > 0 ? nameplate_w / b : 0.0;
}

}  // namespace dvfs
