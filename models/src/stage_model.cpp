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
  p.time_s = a.time_s * m.time_shape(cc, fe, target.mem_mhz) / m.time_shape(cc, fa, a.clocks.mem_mhz);
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
  // The measured time splits into an SM-bound part and the rest at the clocks it ran at.
  const double t_sm = a.time_s * cc.time_sm * from.max_sm_mhz() / fa / from.time_shape(cc, fa, a.clocks.mem_mhz);
  const double t_rest = a.time_s - t_sm;
  // Tensor throughput at the measured clock vs the target's at its highest clock; memory bandwidth.
  const double compute_ratio = (fs.bf16_dense_tflops * fa / from.max_sm_mhz()) / ts.bf16_dense_tflops;
  const double memory_ratio = fs.mem_bandwidth_gbs / ts.mem_bandwidth_gbs;
  const double t_sm_to = t_sm * compute_ratio, t_rest_to = t_rest * memory_ratio;  // at the target's top clock
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

}  // namespace dvfs
