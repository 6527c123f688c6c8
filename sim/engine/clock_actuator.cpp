#include "sim/engine/clock_actuator.hpp"

#include <algorithm>

namespace dvfs {

ClockActuator::ClockActuator(const SwitchLatency& latency, Actuator kind, std::uint64_t seed, const ClockPair& initial)
    : latency_(latency),
      kind_(kind),
      sm_draw_(latency.sm.mean_s, latency.sm.spread_s),
      mem_draw_(latency.mem.mean_s, latency.mem.spread_s),
      in_effect_(initial),
      requested_(initial) {
  rng_.seed(seed);
}

std::optional<ClockTransition> ClockActuator::request(const ClockPair& c, double now_s) {
  if (c == requested_) return std::nullopt;
  double latency = 0;
  if (kind_ == Actuator::firmware) {
    latency = latency_.firmware_s;
  } else {
    // Each clock domain that changes draws its own latency (SM first, then memory, so the sequence
    // of draws is fixed); the switch takes effect when the slower one is done.
    if (c.sm_mhz != requested_.sm_mhz) {
      latency = sm_draw_.draw(rng_) * latency_.sm.multiplier(c.sm_mhz);
    }
    if (c.mem_mhz != requested_.mem_mhz) {
      latency = std::max(latency, mem_draw_.draw(rng_) * latency_.mem.multiplier(c.mem_mhz));
    }
  }
  requested_ = c;
  ++counters_.requests;
  counters_.latency_s += latency;
  if (latency <= 0) {
    pending_at_s_ = kNever;
    return take_effect(c);
  }
  // A newer request supersedes one still in transition: the earlier target never takes effect.
  pending_ = c;
  pending_at_s_ = now_s + latency;
  return std::nullopt;
}

std::optional<ClockTransition> ClockActuator::complete_pending() {
  pending_at_s_ = kNever;
  return take_effect(pending_);
}

std::optional<ClockTransition> ClockActuator::take_effect(const ClockPair& c) {
  if (c == in_effect_) return std::nullopt;  // e.g. a request back to the clocks in effect superseded a pending one
  // Transition energy (driver requests only): once for each clock domain whose clock in effect
  // actually changes now.
  ClockTransition t{c, 0.0};
  if (kind_ == Actuator::nvml) {
    if (c.sm_mhz != in_effect_.sm_mhz) t.energy_j += latency_.sm.energy_j;
    if (c.mem_mhz != in_effect_.mem_mhz) t.energy_j += latency_.mem.energy_j;
  }
  in_effect_ = c;
  ++counters_.applied;
  if (t.energy_j > 0) counters_.transition_energy_j += t.energy_j;
  return t;
}

}  // namespace dvfs
