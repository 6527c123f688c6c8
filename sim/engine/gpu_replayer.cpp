#include "sim/engine/gpu_replayer.hpp"

#include "sim/policies/native_governor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dvfs {

GpuReplayer::GpuReplayer(const Rank& rank, const GpuModel& model, Policy& policy, const ReplayOptions& opts,
                         EnergyMeter& meter)
    : rank_(rank), model_(model), policy_(policy), opts_(opts), meter_(meter) {
  latency_ = model.switch_latency();
  opts.sm_latency.apply_to(latency_.sm);
  opts.mem_latency.apply_to(latency_.mem);
  if (opts.firmware_latency_s) latency_.firmware_s = *opts.firmware_latency_s;
  sm_draw_ = LognormalLatency(latency_.sm.mean_s, latency_.sm.spread_s);
  mem_draw_ = LognormalLatency(latency_.mem.mean_s, latency_.mem.spread_s);
  rng_.seed(latency_seed(opts.seed, rank.id));
  ceiling_idx_ = static_cast<int>(model.sm_clocks_mhz().size()) - 1;
  fw_cap_w_ = opts.firmware_cap_w > 0 ? opts.firmware_cap_w : model.power_cap_w();
  apply(policy.initial_clocks());
  requested_ = policy_clocks_;
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

void GpuReplayer::take_effect(const ClockPair& c, double now) {
  // Transition energy (driver requests only): once for each clock domain whose clock in effect
  // actually changes now.
  if (c == policy_clocks_) return;  // e.g. a request back to the clocks in effect superseded a pending one
  double energy_j = 0;
  if (policy_.actuator() == Actuator::nvml) {
    if (c.sm_mhz != policy_clocks_.sm_mhz) energy_j += latency_.sm.energy_j;
    if (c.mem_mhz != policy_clocks_.mem_mhz) energy_j += latency_.mem.energy_j;
  }
  apply(c);
  ++stats_.switches_applied;
  if (energy_j > 0) {
    stats_.switch_energy_j += energy_j;
    meter_.add_energy(now, energy_j, step_);
  }
}

void GpuReplayer::request(const ClockPair& c, double now) {
  if (c == requested_) return;
  double latency = 0;
  if (policy_.actuator() == Actuator::firmware) {
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
  ++stats_.clock_switches;
  stats_.switch_latency_s += latency;
  if (latency <= 0) {
    pending_t_ = kNever;
    take_effect(c, now);
  } else {
    // A newer request supersedes one still in transition: the earlier target never takes effect
    // and costs no transition energy.
    pending_ = c;
    pending_t_ = now + latency;
  }
}

GpuTelemetry GpuReplayer::telemetry(double now) const {
  GpuTelemetry t;
  t.now_s = now;
  t.clocks = clocks_;
  t.requested = requested_;
  t.window_power_w = window_.empty() ? 0.0 : window_.mean_power_w();
  t.last_tick_power_w = last_tick_power_w_;
  return t;
}

}  // namespace dvfs
