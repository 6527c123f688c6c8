#pragma once
// Power as an operator's poller sees it through NVML, computed from a simulated GPU's true power
// timeline (pure functions). The true timeline is mean power per fixed bin (EnergyMeter's timeline).
//
//  - average: nvmlDeviceGetPowerUsage on Ampere (non-GA100) and newer returns the mean over the trailing
//    1 s (NVML documentation; measured behaviour in Yang, Adamek, Armour, SC'24, arXiv 2312.02741).
//  - instant: NVML_FI_DEV_POWER_INSTANT on A100/H100 is refreshed every 100 ms with the mean of a 25 ms
//    window, so it sees only a quarter of the runtime (Yang et al.); each GPU's refresh has its own phase.
//  - energy counter: nvmlDeviceGetTotalEnergyConsumption advances about every 100 ms (seen on the
//    project's H200 recordings); a poller reads the total up to its last advance.
// A poller reads every `sample_s` (the controller's interval, 0.5 s in the study); sample k is taken
// at t = (k + 1) x sample_s, so sample k describes the interval ending there.
#include <cstdint>
#include <string>
#include <vector>

namespace dvfs {

// Mean power per bin of `bin_s` seconds, the first bin starting at t = 0.
struct PowerSeries {
  double bin_s = 0.025;
  std::vector<double> power_w;
  double duration_s() const { return bin_s * static_cast<double>(power_w.size()); }
  // Mean power over [t0, t1] (bins partly covered count in proportion; outside the series: 0 W).
  double mean_w(double t0, double t1) const;
  double energy_j(double t0, double t1) const;
};

// Element-wise sum of series on the same grid (a node's, a rack's or the fleet's power); shorter
// series count as 0 W past their end. Throws std::invalid_argument on different bins.
PowerSeries sum_series(const std::vector<const PowerSeries*>& parts);

enum class NvmlField { average, instant, energy_counter, exact };
const char* to_string(NvmlField f);
// "average" | "instant" | "energy-counter" | "exact"; false if unknown.
bool nvml_field_from_string(const std::string& s, NvmlField& out);

struct NvmlSpec {
  double average_window_s = 1.0;   // nvmlDeviceGetPowerUsage
  double instant_period_s = 0.1;   // NVML_FI_DEV_POWER_INSTANT refresh
  double instant_window_s = 0.025; // ... averaged over this much before each refresh
  double counter_period_s = 0.1;   // energy counter advance
  double phase_s = 0;              // this GPU's refresh phase, in [0, instant_period_s)
};

// Samples of one field every `sample_s` from t = sample_s to the end of the series (whole samples
// only). For the counter the sample is the mean power between the counter's last advance before the
// previous sample and its last advance before this one (what a poller differentiating the counter
// gets; 0 W when the counter did not advance); `exact` is the true mean over the sample's interval.
std::vector<double> nvml_samples(const PowerSeries& true_power, NvmlField field, double sample_s, const NvmlSpec& spec = {});
// One such sample, taken at time t (the series must cover [0, t]).
double nvml_sample_at(const PowerSeries& true_power, NvmlField field, double t, double sample_s, const NvmlSpec& spec = {});

}  // namespace dvfs
