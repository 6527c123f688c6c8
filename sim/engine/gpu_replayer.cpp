#include "sim/engine/gpu_replayer.hpp"

#include "sim/policies/native_governor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dvfs {

GpuReplayer::GpuReplayer(const Rank& rank, const GpuModel& model, Policy& policy, const ReplayOptions& opts,
                         EnergyMeter& meter)
    : rank_(rank), model_(model), policy_(policy), opts_(opts), meter_(meter) {
  SwitchLatency latency = model.switch_latency();  // the model's, with the scenario's overrides
  opts.sm_latency.apply_to(latency.sm);
  opts.mem_latency.apply_to(latency.mem);
  if (opts.firmware_latency_s) latency.firmware_s = *opts.firmware_latency_s;
  ceiling_idx_ = static_cast<int>(model.sm_clocks_mhz().size()) - 1;
  fw_cap_w_ = opts.firmware_cap_w > 0 ? opts.firmware_cap_w : model.power_cap_w();
  apply(policy.initial_clocks());
  actuator_ = ClockActuator(latency, policy.actuator(), latency_seed(opts.seed, rank.id), policy_clocks_);
  if (opts.firmware_power_cap) {
    const NativeGovernorParams& g = model.governor();
    fw_period_ = g.control_period_s;
    next_fw_tick_ = fw_period_;
    fw_window_ = EnergyWindow(fw_period_, g.window_s, model.idle_power_w(sm_idx_));
  }
  period_ = policy.tick_period_s();
  if (period_ > 0) {
    next_tick_ = period_;
    // Before the replay the GPU idled at its initial clocks.
    window_ = EnergyWindow(period_, policy.telemetry_window_s(), model.idle_power_w(sm_idx_));
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
  sm_idx_ = std::min(policy_sm_idx_, ceiling_idx_);
  clocks_ = {model_.sm_clocks_mhz()[static_cast<std::size_t>(sm_idx_)], policy_clocks_.mem_mhz};
}

void GpuReplayer::firmware_tick() {
  // The native governor's loop (power_limit_step, sim/policies/native_governor.hpp), acting on a
  // ceiling over whatever the policy asked for; its changes take effect at once (firmware latency is
  // below the tick period).
  const NativeGovernorParams& g = model_.governor();
  fw_window_.push(fw_tick_energy_j_);
  fw_tick_energy_j_ = 0;
  next_fw_tick_ += fw_period_;
  const double power = fw_window_.mean_power_w();
  const int top = static_cast<int>(model_.sm_clocks_mhz().size()) - 1;
  ceiling_idx_ = power_limit_step(g, fw_cap_w_, power, std::min(ceiling_idx_, policy_sm_idx_), ceiling_idx_, top);
  const int before = sm_idx_;
  set_effective();
  if (sm_idx_ != before) ++stats_.firmware_throttle_changes;
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
  t.window_power_w = window_.empty() ? 0.0 : window_.mean_power_w();
  t.last_tick_power_w = last_tick_power_w_;
  return t;
}

}  // namespace dvfs
