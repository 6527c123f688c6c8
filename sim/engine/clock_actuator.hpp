#pragma once
// The clock actuator of one GPU: it turns clock requests into clock changes that take effect after the
// switch latency, as gem5's DVFSHandler does for a voltage/frequency domain. It owns the latency model
// (per-domain lognormal draws for driver requests, a fixed delay for the GPU's own governor) and the
// transition energy; it knows nothing of policies, kernels or time keepers. The replayer asks it for
// clocks and tells it when the pending change's time has come.
//
// Rules (the replayer's results depend on each):
// - A request for the clocks last requested is ignored: no draw, no count, nothing pending changes.
// - A newer request supersedes a pending one: the earlier target never takes effect and costs no
//   transition energy; the new one takes its own latency from the time it is made.
// - A request with no latency takes effect at once.
// - A change back to the clocks already in effect (a request that superseded a pending one) takes
//   effect as nothing: it counts as no applied switch and costs no energy.
#include "models/src/gpu_model.hpp"
#include "models/src/switch_latency.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <random>

namespace dvfs {

// A clock change that takes effect: the clocks in effect from now, and the transition energy it costs
// (driver requests only: each domain whose clock changes charges its DomainLatency::energy_j).
struct ClockTransition {
  ClockPair clocks;
  double energy_j = 0;
};

// What the actuator did so far.
struct ActuatorCounters {
  std::uint64_t requests = 0;      // requests that were not ignored (superseded ones included)
  double latency_s = 0;            // summed latency of those requests
  std::uint64_t applied = 0;       // changes that took effect and changed the clocks in effect
  double transition_energy_j = 0;  // summed energy of the changes that took effect
};

class ClockActuator {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  ClockActuator() = default;
  // latency: the switch latency model (the GPU model's, with a scenario's overrides applied);
  //   sm/mem are used for driver requests, firmware_s for the GPU's own governor.
  // kind:    who switches the clocks: Actuator::nvml (driver requests: per-domain draws and
  //          transition energy) or Actuator::firmware (fixed latency, no transition energy).
  // seed:    seeds the latency draws (mt19937_64); the same seed gives the same draws.
  // initial: the clocks in effect at the start, also taken as the last request.
  ClockActuator(const SwitchLatency& latency, Actuator kind, std::uint64_t seed, const ClockPair& initial);

  // A request for clocks `c` at local time `now_s`. Returns the change when it takes effect at once
  // (no latency); nullopt when ignored, pending (see pending_at_s) or back to the clocks in effect.
  std::optional<ClockTransition> request(const ClockPair& c, double now_s);
  // When the pending request takes effect (kNever when none is pending).
  double pending_at_s() const { return pending_at_s_; }
  // Called when local time reaches pending_at_s(): the pending request takes effect. Returns the
  // change, or nullopt when it asks for the clocks already in effect.
  std::optional<ClockTransition> complete_pending();

  const ClockPair& requested() const { return requested_; }  // the last request not ignored
  const ClockPair& in_effect() const { return in_effect_; }  // the clocks the last change put in effect
  const ActuatorCounters& counters() const { return counters_; }

 private:
  std::optional<ClockTransition> take_effect(const ClockPair& c);

  SwitchLatency latency_;
  Actuator kind_ = Actuator::nvml;
  LognormalLatency sm_draw_, mem_draw_;
  std::mt19937_64 rng_;
  ClockPair in_effect_, requested_, pending_;
  double pending_at_s_ = kNever;
  ActuatorCounters counters_;
};

}  // namespace dvfs
