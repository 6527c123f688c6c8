#include "models/src/switch_latency.hpp"

#include "sim/core/limits.hpp"

#include <cmath>
#include <string>

namespace dvfs {

double DomainLatency::multiplier(double f) const {
  const auto& p = target_scaling;
  if (p.empty()) return 1.0;
  if (f <= p.front().first) return p.front().second;
  if (f >= p.back().first) return p.back().second;
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (f <= p[i].first) {
      const double t = (f - p[i - 1].first) / (p[i].first - p[i - 1].first);
      return p[i - 1].second + t * (p[i].second - p[i - 1].second);
    }
  }
  return p.back().second;
}

void DomainLatencyOverride::apply_to(DomainLatency& d) const {
  if (mean_s) d.mean_s = *mean_s;
  if (spread_s) d.spread_s = *spread_s;
  if (energy_j) d.energy_j = *energy_j;
  if (target_scaling) d.target_scaling = *target_scaling;
}

namespace {

TargetScaling read_target_scaling(const JsonReader& parent) {
  const Json& j = parent.raw("target_scaling");
  if (!j.is_array()) parent.fail("target_scaling", "expected a list of [target MHz, multiplier] pairs, got " + json_type_name(j));
  TargetScaling out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const Json& p = j[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number() || !(p[0].get<double>() > 0) ||
        !(p[1].get<double>() > 0))
      parent.fail("target_scaling", "expected [target MHz > 0, multiplier > 0] pairs (element " + std::to_string(i) + ")");
    out.emplace_back(p[0].get<double>(), p[1].get<double>());
    if (i > 0 && !(out[i].first > out[i - 1].first))
      parent.fail("target_scaling", "expected points in strictly increasing MHz order (element " + std::to_string(i) + ")");
  }
  if (out.empty()) parent.fail("target_scaling", "expected at least one [target MHz, multiplier] pair");
  return out;
}

}  // namespace

DomainLatencyOverride read_domain_latency_override(const JsonReader& r) {
  if (!r.is_object()) r.fail(nullptr, "expected an object {mean_s, spread_s, target_scaling, energy_j}");
  r.only_keys({"mean_s", "spread_s", "target_scaling", "energy_j"});
  DomainLatencyOverride o;
  if (r.has("mean_s")) o.mean_s = r.number_in("mean_s", 0, kMaxSwitchLatencyS, "s");
  if (r.has("spread_s")) o.spread_s = r.number_in("spread_s", 0, kMaxSwitchLatencyS, "s");
  if (r.has("target_scaling")) o.target_scaling = read_target_scaling(r);
  if (r.has("energy_j")) o.energy_j = r.number_in("energy_j", 0, kMaxSwitchEnergyJ, "J");
  if (o.mean_s && o.spread_s && *o.mean_s == 0 && *o.spread_s > 0)
    r.fail("spread_s", "a spread needs a positive mean_s (mean_s is 0)");
  if (o.mean_s && o.spread_s && *o.spread_s > kMaxSwitchSpreadRatio * *o.mean_s)  // sigma of the lognormal: inf, draws NaN
    r.fail("spread_s", "expected a spread of at most " + std::to_string(static_cast<int>(kMaxSwitchSpreadRatio)) + " x mean_s");
  return o;
}

DomainLatency read_domain_latency(const JsonReader& r) {
  if (!r.is_object()) r.fail(nullptr, "expected an object {mean_s, spread_s, target_scaling, energy_j}");
  if (!r.has("mean_s")) r.fail("mean_s", "missing required key");
  DomainLatency d;
  read_domain_latency_override(r).apply_to(d);
  return d;
}

Json to_json(const DomainLatency& d) {
  Json j = {{"mean_s", d.mean_s}, {"spread_s", d.spread_s}, {"energy_j", d.energy_j}};
  Json ts = Json::array();
  for (const auto& [f, m] : d.target_scaling) ts.push_back({f, m});
  j["target_scaling"] = ts;
  return j;
}

Json to_json(const SwitchLatency& l) {
  return {{"sm", to_json(l.sm)}, {"mem", to_json(l.mem)}, {"firmware_s", l.firmware_s}};
}

static std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t latency_seed(std::uint64_t scenario_seed, int rank) {
  return splitmix64(splitmix64(scenario_seed) ^ static_cast<std::uint64_t>(static_cast<std::int64_t>(rank)));
}

double standard_normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - uniform01(rng);  // (0, 1]: log is finite
  const double u2 = uniform01(rng);
  constexpr double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

LognormalLatency::LognormalLatency(double mean_s, double spread_s) : mean_(mean_s) {
  if (mean_s > 0 && spread_s > 0) {
    // X = exp(mu + sigma Z) has E[X] = mean and SD[X] = spread.
    const double cv = spread_s / mean_s;
    sigma_ = std::sqrt(std::log1p(cv * cv));
    mu_ = std::log(mean_s) - 0.5 * sigma_ * sigma_;
  }
}

double LognormalLatency::draw(std::mt19937_64& rng) const {
  if (!(sigma_ > 0)) return mean_;
  return std::exp(mu_ + sigma_ * standard_normal(rng));
}

}  // namespace dvfs
