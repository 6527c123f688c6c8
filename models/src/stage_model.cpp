#include "models/src/stage_model.hpp"

#include "sim/core/errors.hpp"

#include <algorithm>
#include <stdexcept>

namespace dvfs {

double capped_sm_mhz(const GpuModel& m, const ClassCoefficients& cc, double f_set, double mem_mhz) {
  const double target = m.power_cap_w() * m.governor().target_fraction;
  if (m.coefficient_power_at(cc, f_set, mem_mhz) <= target) return f_set;
  double lo = m.sm_clocks_mhz().front(), hi = f_set;
  if (m.coefficient_power_at(cc, lo, mem_mhz) > target) return lo;
  for (int i = 0; i < 60; ++i) {  // power rises with the clock: bisect to 1e-18 of the range
    const double mid = 0.5 * (lo + hi);
    (m.coefficient_power_at(cc, mid, mem_mhz) <= target ? lo : hi) = mid;
  }
  return lo;
}

StagePrediction predict_computation(const GpuModel& m, const ClassCoefficients& cc, const StageMeasurement& a,
                                    const ClockPair& target) {
  const double fa = capped_sm_mhz(m, cc, a.clocks.sm_mhz, a.clocks.mem_mhz);
  const double fe = capped_sm_mhz(m, cc, target.sm_mhz, target.mem_mhz);
  StagePrediction p;
  p.effective_sm_mhz = fe;
  p.time_s = a.time_s * m.time_shape(cc, fe, target.mem_mhz) / m.time_shape(cc, fa, a.clocks.mem_mhz);
  const double pa = a.energy_j / a.time_s;
  const double sa = m.sm_independent_power_w(cc, a.clocks.mem_mhz);
  p.power_w = m.sm_independent_power_w(cc, target.mem_mhz) + (pa - sa) * m.g_at(fe) / m.g_at(fa);
  p.energy_j = p.power_w * p.time_s;
  return p;
}

namespace {

void require_specs(const GpuModel& m) {
  if (m.specs().bf16_dense_tflops <= 0 || m.specs().mem_bandwidth_gbs <= 0)
    throw InputError(m.source_file(), "specs", "retargeting needs bf16_dense_tflops and mem_bandwidth_gbs");
}

// The measured time split into t_sm (SM-bound, at the clock it ran at) and t_rest, moved to `to`:
// t_sm by the dense tensor throughput (measured clock vs the target's top clock), t_rest_to given.
Retargeted move_split(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& a, double t_sm,
                      double t_rest_to, const GpuModel& to) {
  const GpuSpecs &fs = from.specs(), &ts = to.specs();
  const double fa = capped_sm_mhz(from, cc, a.clocks.sm_mhz, a.clocks.mem_mhz);
  const double compute_ratio = (fs.bf16_dense_tflops * fa / from.max_sm_mhz()) / ts.bf16_dense_tflops;
  const double t_sm_to = t_sm * compute_ratio;  // at the target's top clock
  Retargeted r;
  r.coefficients = cc;
  r.coefficients.time_sm = t_sm_to / (t_sm_to + t_rest_to);  // the share moves with the GPU's balance
  r.coefficients.time_mem = 0;
  r.anchor.clocks = to.max_clocks();
  const double headroom = (to.power_cap_w() - to.idle_w()) / (from.power_cap_w() - from.idle_w());
  r.coefficients.dynamic_w = cc.dynamic_w * from.dynamic_scale() * headroom / to.dynamic_scale();
  // The target may not reach its top clock under its own cap.
  const double ft = capped_sm_mhz(to, r.coefficients, to.max_sm_mhz(), to.max_mem_mhz());
  r.anchor.time_s = t_sm_to * to.max_sm_mhz() / ft + t_rest_to;
  // Power there: the target's own SM-independent power plus the source's SM-dependent power, rescaled.
  const double pa = a.energy_j / a.time_s - from.sm_independent_power_w(cc, a.clocks.mem_mhz);
  const double p_to = to.sm_independent_power_w(r.coefficients, r.anchor.clocks.mem_mhz) +
                      pa * headroom * to.g_at(ft) / from.g_at(fa);
  r.anchor.energy_j = p_to * r.anchor.time_s;
  return r;
}

}  // namespace

double sm_bound_time_s(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& a) {
  const double fa = capped_sm_mhz(from, cc, a.clocks.sm_mhz, a.clocks.mem_mhz);
  return a.time_s * cc.time_sm * from.max_sm_mhz() / fa / from.time_shape(cc, fa, a.clocks.mem_mhz);
}

Retargeted retarget_computation(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& a,
                                const GpuModel& to) {
  require_specs(from);
  require_specs(to);
  const double t_sm = sm_bound_time_s(from, cc, a);
  const double memory_ratio = from.specs().mem_bandwidth_gbs / to.specs().mem_bandwidth_gbs;
  return move_split(from, cc, a, t_sm, (a.time_s - t_sm) * memory_ratio, to);
}

Retargeted retarget_computation_by_work(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& a,
                                        double bytes, double memory_efficiency, const GpuModel& to) {
  require_specs(from);
  require_specs(to);
  if (bytes < 0) throw std::invalid_argument("retarget by work: bytes must be >= 0");
  if (memory_efficiency <= 0) throw std::invalid_argument("retarget by work: memory_efficiency must be > 0");
  // GB/s -> bytes/s; the memory time cannot exceed the measurement.
  const double t_mem = std::min(a.time_s, bytes / (memory_efficiency * from.specs().mem_bandwidth_gbs * 1e9));
  const double t_mem_to = t_mem * from.specs().mem_bandwidth_gbs / to.specs().mem_bandwidth_gbs;
  return move_split(from, cc, a, a.time_s - t_mem, t_mem_to, to);
}

double fit_memory_efficiency(const std::vector<MemoryTimeSample>& samples) {
  double xx = 0, xy = 0;
  for (const auto& s : samples) {
    if (s.bandwidth_gbs <= 0) throw std::invalid_argument("memory efficiency fit: bandwidth_gbs must be > 0");
    const double x = s.bytes / (s.bandwidth_gbs * 1e9);
    xx += x * x;
    xy += x * s.clock_insensitive_s;
  }
  if (xx <= 0 || xy <= 0)
    throw std::invalid_argument("memory efficiency fit: needs a sample with bytes > 0 and clock-insensitive time > 0");
  return xx / xy;  // t = x / eta
}

}  // namespace dvfs
