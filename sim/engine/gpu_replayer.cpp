#include "sim/engine/gpu_replayer.hpp"

#include <algorithm>
#include <stdexcept>

namespace dvfs {

GpuReplayer::GpuReplayer(const Rank& rank, const GpuModel& model, Policy& policy, const ReplayOptions& opts,
                         EnergyMeter& meter)
    : rank_(rank), model_(model), policy_(policy), opts_(opts), meter_(meter),
      firmware_(model, opts.firmware_cap_w > 0 ? opts.firmware_cap_w : model.power_cap_w()) {
  SwitchLatency latency = model.switch_latency();  // the model's, with the scenario's overrides
  opts.sm_latency.apply_to(latency.sm);
  opts.mem_latency.apply_to(latency.mem);
  if (opts.firmware_latency_s) latency.firmware_s = *opts.firmware_latency_s;
  if (opts.record_activities) meter.record_activities(true);
  apply(policy.initial_clocks());
  actuator_ = ClockActuator(latency, policy.actuator(), latency_seed(opts.seed, rank.id), policy_clocks_);
  // Before the replay the GPU idled at its initial clocks.
  if (opts.firmware_power_cap) firmware_.start(model.idle_power_w(sm_idx_));
  const double period_s = policy.tick_period_s();
  if (period_s > 0) {
    policy_window_ = TickedWindow(period_s, policy.telemetry_window_s(), model.idle_power_w(sm_idx_));
    last_tick_power_w_ = model.idle_power_w(sm_idx_);
  }
}

void GpuReplayer::set_variation(double factor, double jitter_cv, std::uint64_t seed) {
  time_scale_ = factor;
  jitter_ = LognormalLatency(1.0, jitter_cv);  // mean one; no draw without a spread
  jitter_rng_.seed(seed);
}

void GpuReplayer::apply(const ClockPair& c) {
  const int si = model_.sm_index(c.sm_mhz), mi = model_.mem_index(c.mem_mhz);
  if (si < 0 || mi < 0)
    throw std::logic_error("policy " + policy_.name() + " asked for clocks the model does not support (" +
                           std::to_string(c.sm_mhz) + ", " + std::to_string(c.mem_mhz) + " MHz)");
  policy_sm_idx_ = si;
  mem_idx_ = mi;
  policy_clocks_ = c;
  set_effective();
}

void GpuReplayer::set_effective() {
  sm_idx_ = std::min(policy_sm_idx_, firmware_.ceiling());
  clocks_ = {model_.sm_clocks_mhz()[static_cast<std::size_t>(sm_idx_)], policy_clocks_.mem_mhz};
}

void GpuReplayer::firmware_tick() {
  firmware_.tick(policy_sm_idx_);
  const int before = sm_idx_;
  set_effective();
  if (sm_idx_ != before) ++stats_.firmware_throttle_changes;
}

void GpuReplayer::policy_tick(double now) {
  ++stats_.ticks;
  last_tick_power_w_ = policy_window_.tick();
  if (auto c = policy_.on_tick(telemetry(now))) request(*c, now);
}

void GpuReplayer::take_effect(const ClockTransition& t, double now) {
  apply(t.clocks);
  if (t.energy_j > 0) meter_.add_energy(now, t.energy_j, step_);
}

void GpuReplayer::request(const ClockPair& c, double now) {
  if (auto t = actuator_.request(c, now)) take_effect(*t, now);
  read_actuator_counters();
}

void GpuReplayer::read_actuator_counters() {
  const ActuatorCounters& a = actuator_.counters();
  stats_.clock_switches = a.requests;
  stats_.switch_latency_s = a.latency_s;
  stats_.switches_applied = a.applied;
  stats_.switch_energy_j = a.transition_energy_j;
}

GpuTelemetry GpuReplayer::telemetry(double now) const {
  GpuTelemetry t;
  t.now_s = now;
  t.clocks = clocks_;
  t.requested = actuator_.requested();
  t.window_power_w = policy_window_.empty() ? 0.0 : policy_window_.mean_power_w();
  t.last_tick_power_w = last_tick_power_w_;
  return t;
}

}  // namespace dvfs
