#pragma once
// Time and energy of a whole computation (a pipeline stage's forward or backward pass) at any clock,
// from one measurement of it at a reference clock: the stage-level counterpart of kernel replay. It
// is what a per-frequency stage profile (Perseus) is predicted with, and what lets a computation
// measured on one GPU be replayed on another. Pure functions of a GpuModel; see models/README.md.
//
//   f_e(f)   = f if P_c(f) <= cap * target_fraction, else the clock where P_c(f_e) = cap * target
//   time(f)  = t_a * shape(f_e(f), m) / shape(f_e(f_a), m_a)     (GpuModel::time_shape)
//   power(f) = S(m) + ( P_a - S(m_a) ) * g(f_e(f)) / g(f_e(f_a))       P_a = e_a / t_a
// with P_c the model power of the coefficient set at fill 1 and S its SM-clock-independent part.
#include "models/src/gpu_model.hpp"

#include <vector>

namespace dvfs {

struct StageMeasurement {
  double time_s = 0;
  double energy_j = 0;
  ClockPair clocks;  // the clocks that were set (requested) when it was measured
};

struct StagePrediction {
  double time_s = 0;
  double energy_j = 0;
  double power_w = 0;
  double effective_sm_mhz = 0;  // after the power cap
};

// Highest SM clock <= f_set at which the coefficient set draws at most cap * target_fraction.
double capped_sm_mhz(const GpuModel& m, const ClassCoefficients& cc, double f_set, double mem_mhz);

StagePrediction predict_computation(const GpuModel& m, const ClassCoefficients& cc, const StageMeasurement& anchor,
                                    const ClockPair& target);

// Moves a measurement at `from`'s clocks to the same computation on another GPU at `to`'s highest
// clocks: the SM-bound part of the time scales with the dense tensor throughput (specs
// bf16_dense_tflops, at the measured clock vs the target's top clock), the rest with memory bandwidth
// (specs mem_bandwidth_gbs), so the SM share itself moves with the target's balance; the
// SM-dependent power scales with the boards' dynamic headroom (cap - idle). Returns the target-GPU
// measurement and the coefficients to predict it with.
struct Retargeted {
  StageMeasurement anchor;
  ClassCoefficients coefficients;
};
Retargeted retarget_computation(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& anchor,
                                const GpuModel& to);

// The part of a measured computation's time that moves with the SM clock, by `from`'s coefficient
// set (time_sm), at the clock it ran at; the rest of anchor.time_s does not.
double sm_bound_time_s(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& anchor);

// Retargeting by the computation's own work (issue 16): its memory time on `from` is
// bytes / (memory_efficiency * from's mem_bandwidth_gbs), the rest of the measured time is
// SM-bound and its FLOPs run at the efficiency that measurement implies (carried to `to` unchanged);
// on `to` the memory time is bytes / (memory_efficiency * to's bandwidth). So each computation gets
// its own split from its bytes per FLOP instead of one share per coefficient set. Power as in
// retarget_computation. Throws InputError when a GPU lacks the specs, std::invalid_argument for
// bytes < 0 or memory_efficiency <= 0.
Retargeted retarget_computation_by_work(const GpuModel& from, const ClassCoefficients& cc, const StageMeasurement& anchor,
                                        double bytes, double memory_efficiency, const GpuModel& to);

// One constant for the achieved fraction of datasheet bandwidth: least squares through the origin
// of each sample's clock-insensitive time against bytes / bandwidth. Needs at least one sample with
// bytes > 0 and clock-insensitive time > 0 (else std::invalid_argument).
struct MemoryTimeSample {
  double clock_insensitive_s = 0;
  double bytes = 0;
  double bandwidth_gbs = 0;
};
double fit_memory_efficiency(const std::vector<MemoryTimeSample>& samples);

}  // namespace dvfs
