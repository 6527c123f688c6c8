#pragma once
// Frequency-switch latency model. A clock change requested through the driver (NVML) takes, per
// clock domain (SM, memory), a latency drawn from a lognormal distribution with a given mean and
// standard deviation (deterministic when the deviation is 0), both scaled by a factor that depends
// on the target clock, and may cost a fixed energy per transition. The GPU's own governor (firmware)
// switches after a fixed latency. See models/README.md, "Switch latency".
#include "sim/core/json_util.hpp"

#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

namespace dvfs {

// (target MHz, multiplier) points, MHz strictly increasing, multiplier > 0. Linear between points,
// held constant outside them; empty = 1 everywhere.
using TargetScaling = std::vector<std::pair<double, double>>;

struct DomainLatency {
  double mean_s = 0;    // mean latency at multiplier 1, >= 0
  double spread_s = 0;  // standard deviation at multiplier 1, >= 0 (0 = deterministic)
  TargetScaling target_scaling;
  double energy_j = 0;  // energy of one transition that takes effect, >= 0

  double multiplier(double target_mhz) const;
};

struct SwitchLatency {
  DomainLatency sm;        // SM clock change requested through the driver
  DomainLatency mem;       // memory clock change requested through the driver
  double firmware_s = 0;   // clock change made by the GPU's own governor
};

// A scenario's key-by-key override of one domain.
struct DomainLatencyOverride {
  std::optional<double> mean_s, spread_s, energy_j;
  std::optional<TargetScaling> target_scaling;
  void apply_to(DomainLatency& d) const;
  bool empty() const { return !mean_s && !spread_s && !energy_j && !target_scaling; }
};

// Reads one domain object ({mean_s, spread_s, target_scaling, energy_j}). In a model file mean_s is
// required; in a scenario override every key is optional.
DomainLatency read_domain_latency(const JsonReader& r);
DomainLatencyOverride read_domain_latency_override(const JsonReader& r);
Json to_json(const DomainLatency& d);
Json to_json(const SwitchLatency& l);

// Seed of one GPU's latency draws: the scenario seed combined with the rank index (splitmix64).
std::uint64_t latency_seed(std::uint64_t scenario_seed, int rank);

// Uniform double in [0, 1) from the top 53 bits of one 64-bit output.
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
// Standard normal by Box-Muller (cosine branch); consumes exactly two outputs of `rng`.
double standard_normal(std::mt19937_64& rng);

// Draws lognormal latencies with a given mean and standard deviation. Implemented on mt19937_64
// directly (not std::lognormal_distribution) so draws are the same with every standard library.
class LognormalLatency {
 public:
  LognormalLatency() = default;
  LognormalLatency(double mean_s, double spread_s);
  // mean_s when the spread is 0 (no draw); 0 when the mean is 0.
  double draw(std::mt19937_64& rng) const;
  bool random() const { return sigma_ > 0; }

 private:
  double mean_ = 0, mu_ = 0, sigma_ = 0;
};

}  // namespace dvfs
