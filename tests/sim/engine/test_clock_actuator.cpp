// The clock actuator (sim/engine/clock_actuator.hpp) on its own: latency applied, newer requests
// superseding pending ones, requests for the current level ignored, transition energy.
#include "sim/engine/clock_actuator.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;

namespace {

const ClockPair kTop{1980, 3201}, kLow{990, 3201}, kMid{1410, 3201}, kLowMem{1980, 2201}, kBothLow{990, 2201};

// Deterministic latencies (spread 0): SM 10 ms, memory 30 ms, firmware 2 ms; energies 0.5 J and 2 J.
SwitchLatency fixed_latency() {
  SwitchLatency l;
  l.sm.mean_s = 0.010;
  l.sm.energy_j = 0.5;
  l.mem.mean_s = 0.030;
  l.mem.energy_j = 2.0;
  l.firmware_s = 0.002;
  return l;
}

}  // namespace

TEST_CASE("actuator: a driver request takes effect after its domain's latency", "[sim][actuator]") {
  ClockActuator a(fixed_latency(), Actuator::nvml, 1, kTop);
  CHECK_FALSE(a.request(kLow, 1.0));
  CHECK(a.requested() == kLow);
  CHECK(a.in_effect() == kTop);  // the old clocks run until the switch is done
  CHECK(a.pending_at_s() == Approx(1.010).epsilon(1e-12));
  const auto t = a.complete_pending();
  REQUIRE(t);
  CHECK(t->clocks == kLow);
  CHECK(t->energy_j == 0.5);
  CHECK(a.in_effect() == kLow);
  CHECK(a.pending_at_s() == ClockActuator::kNever);
  CHECK(a.counters().requests == 1);
  CHECK(a.counters().applied == 1);
  CHECK(a.counters().latency_s == Approx(0.010).epsilon(1e-12));
  CHECK(a.counters().transition_energy_j == 0.5);
}

TEST_CASE("actuator: both domains changing wait for the slower one and pay both energies", "[sim][actuator]") {
  ClockActuator a(fixed_latency(), Actuator::nvml, 1, kTop);
  a.request(kBothLow, 0.0);
  CHECK(a.pending_at_s() == Approx(0.030).epsilon(1e-12));
  const auto t = a.complete_pending();
  REQUIRE(t);
  CHECK(t->energy_j == 2.5);
  // Memory only: its own latency.
  ClockActuator m(fixed_latency(), Actuator::nvml, 1, kTop);
  m.request(kLowMem, 0.0);
  CHECK(m.pending_at_s() == Approx(0.030).epsilon(1e-12));
}

TEST_CASE("actuator: the target clock scales the latency", "[sim][actuator]") {
  SwitchLatency l = fixed_latency();
  l.sm.target_scaling = {{990, 3.0}, {1980, 1.0}};
  ClockActuator a(l, Actuator::nvml, 1, kTop);
  a.request(kLow, 0.0);
  CHECK(a.pending_at_s() == Approx(0.030).epsilon(1e-12));
}

TEST_CASE("actuator: the GPU's own governor switches after the firmware latency, at no energy", "[sim][actuator]") {
  ClockActuator a(fixed_latency(), Actuator::firmware, 1, kTop);
  a.request(kBothLow, 2.0);
  CHECK(a.pending_at_s() == Approx(2.002).epsilon(1e-12));
  const auto t = a.complete_pending();
  REQUIRE(t);
  CHECK(t->energy_j == 0);
  CHECK(a.counters().transition_energy_j == 0);
}

TEST_CASE("actuator: no latency, the change takes effect at once", "[sim][actuator]") {
  ClockActuator a(SwitchLatency{}, Actuator::nvml, 1, kTop);
  const auto t = a.request(kLow, 0.5);
  REQUIRE(t);
  CHECK(t->clocks == kLow);
  CHECK(a.in_effect() == kLow);
  CHECK(a.pending_at_s() == ClockActuator::kNever);
  CHECK(a.counters().applied == 1);
}

TEST_CASE("actuator: a newer request supersedes the pending one", "[sim][actuator]") {
  ClockActuator a(fixed_latency(), Actuator::nvml, 1, kTop);
  a.request(kLow, 0.0);
  CHECK(a.pending_at_s() == Approx(0.010).epsilon(1e-12));
  a.request(kMid, 0.005);  // before the first one took effect
  CHECK(a.requested() == kMid);
  CHECK(a.pending_at_s() == Approx(0.015).epsilon(1e-12));  // its own latency, from when it was made
  const auto t = a.complete_pending();
  REQUIRE(t);
  CHECK(t->clocks == kMid);  // the earlier target never took effect
  CHECK(a.counters().requests == 2);
  CHECK(a.counters().latency_s == Approx(0.020).epsilon(1e-12));
  CHECK(a.counters().applied == 1);
  CHECK(a.counters().transition_energy_j == 0.5);  // one transition, not two
}

TEST_CASE("actuator: superseded back to the clocks in effect, nothing takes effect", "[sim][actuator]") {
  ClockActuator a(fixed_latency(), Actuator::nvml, 1, kTop);
  a.request(kLow, 0.0);
  a.request(kTop, 0.001);  // not ignored: kLow was the last request
  CHECK(a.counters().requests == 2);
  CHECK_FALSE(a.complete_pending());
  CHECK(a.in_effect() == kTop);
  CHECK(a.counters().applied == 0);
  CHECK(a.counters().transition_energy_j == 0);
}

TEST_CASE("actuator: a request for the current level is ignored", "[sim][actuator]") {
  ClockActuator a(fixed_latency(), Actuator::nvml, 1, kTop);
  CHECK_FALSE(a.request(kTop, 0.0));  // the clocks in effect and requested
  CHECK(a.counters().requests == 0);
  CHECK(a.pending_at_s() == ClockActuator::kNever);
  a.request(kLow, 0.0);
  const double at = a.pending_at_s();
  CHECK_FALSE(a.request(kLow, 0.004));  // the level already requested: the pending one keeps its time
  CHECK(a.pending_at_s() == at);
  CHECK(a.counters().requests == 1);
  CHECK(a.counters().latency_s == Approx(0.010).epsilon(1e-12));
}

TEST_CASE("actuator: the same seed gives the same latency draws", "[sim][actuator]") {
  SwitchLatency l = fixed_latency();
  l.sm.spread_s = 0.004;
  ClockActuator a(l, Actuator::nvml, 42, kTop), b(l, Actuator::nvml, 42, kTop), c(l, Actuator::nvml, 43, kTop);
  for (ClockActuator* x : {&a, &b, &c}) x->request(kLow, 0.0);
  CHECK(a.pending_at_s() == b.pending_at_s());
  CHECK(a.pending_at_s() != c.pending_at_s());
  CHECK(a.pending_at_s() > 0);
}
