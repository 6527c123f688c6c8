#include "sim/engine/gpu_replayer.hpp"

#include <cmath>
#include <stdexcept>

namespace dvfs {

GpuReplayer::GpuReplayer(const Rank& rank, const GpuModel& model, Policy& policy, const ReplayOptions& opts,
                         EnergyMeter& meter)
    : rank_(rank), model_(model), policy_(policy), opts_(opts), meter_(meter) {
  const SwitchLatency& lat = model.switch_latency();
  latency_nvml_ = opts.nvml_latency_s.value_or(lat.nvml_s);
  latency_firmware_ = opts.firmware_latency_s.value_or(lat.firmware_s);
  latency_mem_ = opts.mem_latency_s.value_or(lat.mem_nvml_s);
  apply(policy.initial_clocks());
  requested_ = clocks_;
  period_ = policy.tick_period_s();
  if (period_ > 0) {
    next_tick_ = period_;
    const auto n = static_cast<std::size_t>(std::max(1.0, std::round(policy.telemetry_window_s() / period_)));
    // Before the replay the GPU idled at its initial clocks.
    window_.assign(n, model.idle_power_w(sm_idx_) * period_);
    window_sum_j_ = window_.front() * static_cast<double>(n);
    last_tick_power_w_ = model.idle_power_w(sm_idx_);
  }
}

void GpuReplayer::apply(const ClockPair& c) {
  const int si = model_.sm_index(c.sm_mhz), mi = model_.mem_index(c.mem_mhz);
  if (si < 0 || mi < 0)
    throw std::logic_error("policy " + policy_.name() + " asked for clocks the model does not support (" +
                           std::to_string(c.sm_mhz) + ", " + std::to_string(c.mem_mhz) + " MHz)");
  sm_idx_ = si;
  mem_idx_ = mi;
  clocks_ = c;
}

void GpuReplayer::request(const ClockPair& c, double now) {
  if (c == requested_) return;
  double latency;
  if (policy_.actuator() == Actuator::firmware) {
    latency = latency_firmware_;
  } else {
    latency = 0;
    if (c.sm_mhz != requested_.sm_mhz) latency = latency_nvml_;
    if (c.mem_mhz != requested_.mem_mhz) latency = std::max(latency, latency_mem_);
  }
  requested_ = c;
  ++stats_.clock_switches;
  stats_.switch_latency_s += latency;
  if (latency <= 0) {
    apply(c);
    pending_t_ = kNever;
  } else {
    // A newer request supersedes one still in transition.
    pending_ = c;
    pending_t_ = now + latency;
  }
}

GpuTelemetry GpuReplayer::telemetry(double now) const {
  GpuTelemetry t;
  t.now_s = now;
  t.clocks = clocks_;
  t.requested = requested_;
  t.window_power_w = window_.empty() ? 0.0 : window_sum_j_ / (period_ * static_cast<double>(window_.size()));
  t.last_tick_power_w = last_tick_power_w_;
  return t;
}

}  // namespace dvfs
