#pragma once
// Statistics of measured power over windows, as a power budget is judged (pure functions): samples
// taken every `sample_s` are averaged over consecutive non-overlapping windows of `window_s` (0.5 s,
// 30 s, 5 min in the study); a window violates a budget when its mean exceeds it.
#include <vector>

namespace dvfs {

// Means over consecutive windows of round(window_s / sample_s) samples (at least 1); a last partial
// window is dropped. Throws std::invalid_argument when window_s < sample_s.
std::vector<double> window_means(const std::vector<double>& samples, double sample_s, double window_s);

// Share of windows whose mean exceeds budget_w (0 when there is none).
double violation_rate(const std::vector<double>& window_means, double budget_w);

struct WindowSummary {
  double window_s = 0;
  std::size_t windows = 0;
  double mean_w = 0, peak_w = 0;
  double violation_rate = 0;        // of the budget given
  double peak_share = 0;            // peak window mean / nameplate
};
WindowSummary summarize_windows(const std::vector<double>& samples, double sample_s, double window_s, double budget_w,
                                double nameplate_w);

// The lowest budget whose violation rate is at most `rate` (in [0, 1)): the (floor(rate x n) + 1)-th
// largest window mean. With rate 0 it is the peak.
double budget_at_violation_rate(const std::vector<double>& window_means, double rate);

// How far a budget could be oversubscribed: nameplate / budget_at_violation_rate, i.e. how many times
// the GPUs' nameplate power could exceed the provisioned power while the windows exceed it at most
// `rate` of the time. With rate 0 it is 1 / peak share.
double sustainable_oversubscription(const std::vector<double>& window_means, double nameplate_w, double rate);

}  // namespace dvfs
