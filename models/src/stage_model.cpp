#include "models/src/stage_model.hpp"

#include "sim/core/errors.hpp"

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
  p.time_s = a.time_s * (cc.time_sm * fa / fe + cc.time_mem * a.clocks.mem_mhz / target.mem_mhz +
                         (1.0 - cc.time_sm - cc.time_mem));
  const double pa = a.energy_j / a.time_s;
  const double sa = m.sm_independent_power_w(cc, a.clocks.mem_mhz);
  p.power_w = m.sm_independent_power_w(cc, target.mem_mhz) + (pa - sa) * m.g_at(fe) / m.g_at(fa);
  p.energy_j = p.power_w * p.time_s;
  return p;
}

Retargeted retarget_computation(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& a,
                                const GpuModel& to) {
  const GpuSpecs &fs = from.specs(), &ts = to.specs();
  if (fs.bf16_dense_tflops <= 0 || fs.mem_bandwidth_gbs <= 0)
    throw InputError(from.source_file(), "specs", "retargeting needs bf16_dense_tflops and mem_bandwidth_gbs");
  if (ts.bf16_dense_tflops <= 0 || ts.mem_bandwidth_gbs <= 0)
    throw InputError(to.source_file(), "specs", "retargeting needs bf16_dense_tflops and mem_bandwidth_gbs");
  const double fa = capped_sm_mhz(from, cc, a.clocks.sm_mhz, a.clocks.mem_mhz);
  // Throughput per MHz at the measured clock vs the target's at its highest clock.
  const double compute_ratio = (fs.bf16_dense_tflops * fa / from.max_sm_mhz()) / ts.bf16_dense_tflops;
  const double memory_ratio = fs.mem_bandwidth_gbs / ts.mem_bandwidth_gbs;
  const double b = cc.time_sm, rest = 1.0 - cc.time_sm;
  Retargeted r;
  r.coefficients = cc;
  r.anchor.clocks = to.max_clocks();
  const double headroom = (to.power_cap_w() - to.idle_w()) / (from.power_cap_w() - from.idle_w());
  r.coefficients.dynamic_w = cc.dynamic_w * from.dynamic_scale() * headroom / to.dynamic_scale();
  // The target may not reach its top clock under its own cap.
  const double ft = capped_sm_mhz(to, r.coefficients, to.max_sm_mhz(), to.max_mem_mhz());
  r.anchor.time_s = a.time_s * (b * compute_ratio * to.max_sm_mhz() / ft + rest * memory_ratio);
  // Power there: the target's own SM-independent power plus the source's SM-dependent power, rescaled.
  const double pa = a.energy_j / a.time_s - from.sm_independent_power_w(cc, a.clocks.mem_mhz);
  const double p_to = to.sm_independent_power_w(r.coefficients, r.anchor.clocks.mem_mhz) +
                      pa * headroom * to.g_at(ft) / from.g_at(fa);
  r.anchor.energy_j = p_to * r.anchor.time_s;
  return r;
}

}  // namespace dvfs
