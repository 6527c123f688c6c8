#pragma once
// A GPU model: data (clock tables, voltage curve, power and time coefficients, governor and
// switch-latency parameters, each with provenance) loaded from models/gpus/<name>.json, plus pure
// functions giving a kernel's time and power at an (SM clock, memory clock) pair.
//
//   time(k, f, m)  = d_rec * shape(f, m) / shape(f_rec, m_rec)
//   shape(f, m)    = b_sm(c) * f_max / f + b_mem(c) * m_max / m + 1 - b_sm(c) - b_mem(c)
//   power(k, f, m) = idle(f) + fill(k) * k_dyn * D(c) * ( s(c) * g(f) + (1 - s(c)) * m / m_max )
//   g(f)           = (V(f) / V(f_max))^2 * f / f_max          (dynamic CMOS power ~ C V^2 f)
//   idle(f)        = P_idle * ( 1 - a + a * g(f) )
// with c the kernel class, d_rec and f_rec/m_rec its recorded duration and clocks, k_dyn a per-GPU
// scale of dynamic power fit on real training (power.dynamic_scale). See models/README.md.
#include "models/src/switch_latency.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"

#include <array>
#include <string>
#include <vector>

namespace dvfs {

struct ClockPair {
  double sm_mhz = 0;
  double mem_mhz = 0;
  bool operator==(const ClockPair& o) const { return sm_mhz == o.sm_mhz && mem_mhz == o.mem_mhz; }
  bool operator!=(const ClockPair& o) const { return !(*this == o); }
};

// Who asks for a clock change decides how long it takes to take effect: a driver call (NVML,
// what user-level DVFS policies use) or the GPU's own firmware (boost and power-cap governor).
enum class Actuator { nvml, firmware };

struct NativeGovernorParams {
  double control_period_s = 0.005;  // how often the firmware re-evaluates the clock
  double window_s = 0.05;           // boxcar window of the power it compares with the cap
  double target_fraction = 0.98;    // regulates windowed power to cap * target_fraction
  double down_gain_steps_per_w = 0.05;  // clock steps lowered per watt above target, per period
  double up_steps_per_period = 1;       // clock steps raised per period while below target
  double up_margin_w = 10;              // raise only when this far below the target
};

// A class prior of its own for kernels whose name says what the class cannot: a kernel of class `cls` whose name
// contains any of `name_contains` is priced at `scale` x its class's dynamic power (model key class_prior_by_name;
// e.g. CUDA-core fp32 GEMMs beside the tensor-core GEMMs the gemm prior was set on).
struct NamedPrior {
  KernelClass cls = KernelClass::other;
  std::vector<std::string> name_contains;
  double scale = 1;
};

// The class priors' regime (model key class_prior_regime; split rules shapeless_regime_prepass, shapeless_regime_binary):
// the priors were set on kernels run throttled at the power cap; a workload whose kernels run mostly below it draws
// `below_cap_scale[c]` of class c's prior. Which regime a workload is in comes from a pre-pass
// (models/src/prior_regime.hpp): the share of its kernel time in windows that, priced at the top clocks with the at-cap
// priors, draw at least cap_fraction x the power cap. The regime is the workload's, whole: at least
// kAtCapShareForCapPriors of its kernel time at the cap -> the at-cap priors exactly (a blend moved the at-cap jobs and
// the default per-kernel answer: shapeless_regime_prepass's outcome). No shipped model has the key: neither form passed
// its keep test (shapeless_regime_binary's outcome); it serves a user's own model and the fit script shapeless_regime.py.
constexpr double kAtCapShareForCapPriors = 0.5;
struct PriorRegime {
  bool present = false;
  double cap_fraction = 0.9;  // split shapeless_regime_prepass, threshold_why (also the pre-pass's without the key)
  std::array<double, kKernelClassCount> below_cap_scale{1, 1, 1, 1, 1, 1, 1, 1, 1};
  // Below the cap, ATen elementwise kernels sized from their launch (WorkSource::launch_elementwise) are priced by the
  // activity model from that size instead of their prior (key price_launch_sized_elementwise; split
  // shapeless_sized_regime). At the cap they keep the prior, so an at-cap workload prices exactly as without the key.
  bool price_launch_sized_elementwise = false;
};

struct ClassCoefficients {
  double time_sm = 0.5;    // share of the recorded duration that scales with 1/f_sm
  double time_mem = 0.3;   // share that scales with 1/f_mem
  double dynamic_w = 0;    // power above idle at max clocks with every SM busy
  double sm_share = 0.5;   // share of dynamic_w that scales with g(f_sm); the rest with f_mem
};

// The activity power model (models/README.md): what a kernel's own work costs, for kernels whose trace says
// what they compute (Kernel::work != unknown). Energies per operation are at the top clock's voltage and scale
// with (V/V_max)^2; DRAM energy per byte does not move with the SM clock.
struct ActivityPower {
  bool present = false;
  double busy_w = 0;                                // SMs resident with work at fill 1, at the top clock (x g(f))
  double tensor_pj[kTensorPrecisionCount] = {0, 0, 0, 0, 0};  // per tensor-core FLOP, by TensorPrecision
  double mma_sync_extra_pj = 0;                     // added per tensor FLOP a kernel issues with mma.sync (Kernel::tensor_issue)
  double fma_pj = 0;                                // per CUDA-core fp32 FLOP (GEMM / convolution)
  double alu_pj = 0;                                // per elementwise operation
  double unvectorised_pj_per_byte = 0;              // per byte the non-vectorised elementwise loop moves, beyond memory
  double memory_pj_per_byte = 0;                    // per byte read or written in DRAM
  double memory_fill_pj_per_byte = 0;               // per byte a fill or memset writes (one repeated value)
  double copy_engine_w = 0;                         // a copy-engine transfer's own power, beside its bytes
  double copy_engine_pj_per_byte = 0;               // per non-fill byte a copy engine moves (= memory_pj_per_byte if not given)
  // A kernel of duration t draws its dynamic power over t / (t + ramp_s) of it: SMs filling and draining at its
  // start and end, which dominates kernels of a few microseconds.
  double ramp_s = 0;
};

// Datasheet figures used to retarget work between GPUs (0 = not given).
struct GpuSpecs {
  double bf16_dense_tflops = 0;
  double mem_bandwidth_gbs = 0;
  double memory_gb = 0;         // device memory (whether a parallel layout fits)
  double interconnect_gbs = 0;  // to the other GPUs of a node, per direction (NVLink, or PCIe)
  double nic_gbs = 0;           // network per GPU in a typical deployment, per direction
};

class GpuModel {
 public:
  static GpuModel load(const std::string& path);
  // `path` names the document in error messages.
  static GpuModel from_json(const Json& doc, const std::string& path);

  const std::string& name() const { return name_; }
  const std::string& display_name() const { return display_name_; }
  const std::string& status() const { return status_; }
  const std::string& source_file() const { return source_file_; }
  const Json& provenance() const { return provenance_; }
  // Calibrated model this one was scaled from ("" when none); shown by `dvfs-sim models`.
  const std::string& derived_from() const { return derived_from_; }
  const GpuSpecs& specs() const { return specs_; }
  int sm_count() const { return sm_count_; }

  // Clock tables, ascending.
  const std::vector<double>& sm_clocks_mhz() const { return sm_clocks_; }
  const std::vector<double>& mem_clocks_mhz() const { return mem_clocks_; }
  double max_sm_mhz() const { return sm_clocks_.back(); }
  double max_mem_mhz() const { return mem_clocks_.back(); }
  ClockPair max_clocks() const { return {max_sm_mhz(), max_mem_mhz()}; }
  ClockPair default_clocks() const { return default_clocks_; }

  // Index of an exactly supported clock, or -1.
  int sm_index(double mhz) const;
  int mem_index(double mhz) const;
  // The same, or InputError(file, field, ...) naming the supported clocks.
  int sm_index_or_throw(double mhz, const std::string& file, const std::string& field) const;
  int mem_index_or_throw(double mhz, const std::string& file, const std::string& field) const;
  // Throws InputError(file, field + ".sm_mhz" / ".mem_mhz", ...) when the pair is not supported.
  void check_supported(const ClockPair& c, const std::string& file, const std::string& field) const;
  std::string describe_sm_clocks() const;

  double power_cap_w() const { return cap_w_; }
  // Why `cap_w` cannot be this GPU's power limit ("" when it can): at or below idle power it can never be met, above
  // the board's limit the board does not go. The one rule of the native policy's power_cap_w and a power-budget
  // scenario's min_w / max_w.
  std::string power_cap_problem(double cap_w) const;
  double idle_power_w(int sm_idx) const { return idle_w_tab_[sm_idx]; }
  const NativeGovernorParams& governor() const { return governor_; }
  const SwitchLatency& switch_latency() const { return latency_; }
  const ClassCoefficients& coefficients(KernelClass c) const { return classes_[static_cast<int>(c)]; }
  double relative_voltage(double sm_mhz) const;
  double idle_w() const { return idle_w_; }
  const ActivityPower& activity() const { return activity_; }
  double idle_sm_fraction() const { return idle_sm_fraction_; }
  double dynamic_scale() const { return dynamic_scale_; }

  // Relative duration at (f, m): b_sm f_max/f + b_mem m_max/m + 1 - b_sm - b_mem. The shares are those
  // at the highest clocks; a duration measured at (f_rec, m_rec) scales by shape(f, m) / shape(f_rec, m_rec).
  double time_shape(const ClassCoefficients& cc, double sm_mhz, double mem_mhz) const {
    return cc.time_sm * max_sm_mhz() / sm_mhz + cc.time_mem * max_mem_mhz() / mem_mhz + (1.0 - cc.time_sm - cc.time_mem);
  }

  // The same equations at any clock (not only table clocks), for whole computations and fitting.
  double g_at(double sm_mhz) const;          // (V(f)/V(f_max))^2 f/f_max
  double idle_power_at(double sm_mhz) const;
  // Power of a coefficient set that does not move with the SM clock: the clock-independent part of
  // idle power plus the memory-clock share of the dynamic power.
  double sm_independent_power_w(const ClassCoefficients& cc, double mem_mhz) const;
  // Power with every SM busy (fill 1) for a coefficient set.
  double coefficient_power_at(const ClassCoefficients& cc, double sm_mhz, double mem_mhz) const;

  // Aggregate coefficients of whole computations (e.g. a pipeline stage's "forward" and "backward"),
  // fit from per-frequency stage profiles; nullptr when the model has none of that name.
  const ClassCoefficients* computation(const std::string& name) const;
  const std::vector<std::pair<std::string, ClassCoefficients>>& computations() const { return computations_; }

  // Per-kernel time shares (`kernels.<name>`) fit where a recording held enough evidence. They apply
  // to a workload's kernels of that exact name once the model is bound to the workload's name table;
  // an unbound model uses class coefficients only. Power stays per class.
  const std::vector<std::pair<std::string, ClassCoefficients>>& kernel_overrides() const { return kernel_overrides_; }
  GpuModel bound_to(const std::vector<std::string>& workload_names) const;
  // This model with its class priors in the regime of a workload whose kernel time lies `at_cap_share` in at-cap windows
  // (prior_regime.hpp computes it): class c's prior x below_cap_scale[c] when at_cap_share < kAtCapShareForCapPriors,
  // else x 1; below it, launch-sized elementwise kernels priced from their size where the key says so. A model
  // without class_prior_regime is returned unchanged.
  GpuModel in_prior_regime(double at_cap_share) const;
  const PriorRegime& prior_regime() const { return prior_regime_; }
  // The share in_prior_regime was given (1, the at-cap priors, for a model not placed in a regime).
  double at_cap_share() const { return at_cap_share_; }
  bool below_cap_priors() const { return at_cap_share_ < kAtCapShareForCapPriors; }
  // The factor class c's prior is drawn at in this model's regime (1 outside any regime).
  double regime_scale(KernelClass c) const { return regime_scale_[static_cast<int>(c)]; }
  std::size_t bound_kernel_names() const;  // how many of the bound workload's names have an override

  // Pure model functions (indices from sm_index/mem_index).
  double kernel_time_s(const Kernel& k, int sm_idx, int mem_idx) const {
    const int o = k.name_id < name_override_.size() ? name_override_[k.name_id] : -1;
    const ClassCoefficients& cc = o < 0 ? classes_[static_cast<int>(k.cls)] : kernel_overrides_[o].second;
    const double f_rec = k.recorded_sm_mhz > 0 ? k.recorded_sm_mhz : default_clocks_.sm_mhz;
    const double m_rec = k.recorded_mem_mhz > 0 ? k.recorded_mem_mhz : default_clocks_.mem_mhz;
    const double rest = 1.0 - cc.time_sm - cc.time_mem;
    const double at_new = cc.time_sm * sm_ratio_[sm_idx] + cc.time_mem * mem_ratio_[mem_idx] + rest;
    return k.duration_s * at_new / time_shape(cc, f_rec, m_rec);
  }
  double kernel_power_w(const Kernel& k, int sm_idx, int mem_idx) const {
    if (activity_.present && (counted_work(k) || (k.work == WorkSource::launch_elementwise && price_launch_elementwise_)))
      return activity_power_w(k, sm_idx, mem_idx);
    const double class_w = k.sm_fill * named_prior_scale(k) * regime_scale_[static_cast<int>(k.cls)] *
                           dyn_tab_[(static_cast<std::size_t>(k.cls) * sm_clocks_.size() + sm_idx) * mem_clocks_.size() + mem_idx];
    return idle_w_tab_[sm_idx] + (activity_.present ? prior_ramp(k, sm_idx, mem_idx) : 1.0) * class_w;
  }
  // The scale of a kernel's class prior its name selects (class_prior_by_name; 1 when none, or the model is unbound).
  double named_prior_scale(const Kernel& k) const {
    const int p = k.name_id < name_prior_.size() ? name_prior_[k.name_id] : -1;
    return p >= 0 && named_priors_[p].cls == k.cls ? named_priors_[p].scale : 1.0;
  }
  // A class-prior kernel of an activity model ramps as a counted one does: t / (t + ramp_s) for a kernel that runs t
  // (h200-power-split.json, unsized_prior_ramp); 1 for a kernel without a duration and for a collective, whose
  // duration is the network model's in a multi-GPU replay, not kernel_time_s.
  double prior_ramp(const Kernel& k, int sm_idx, int mem_idx) const {
    if (k.collective != 0) return 1.0;
    const double t = k.duration_s > 0 ? kernel_time_s(k, sm_idx, mem_idx) : 0.0;
    return t > 0 ? ramp_weight(t) : 1.0;
  }
  // A collective the replay runs `seconds` (its recorded time, or the network's with the wait for its peers): an NCCL
  // transfer priced by its bytes spreads their energy over that time, so a wait beyond the transfer draws idle power
  // (energy = idle x seconds + copy_engine_pj_per_byte x bytes; split nccl_transfers_by_bytes); any other kernel as
  // kernel_power_w.
  double collective_power_w(const Kernel& k, int sm_idx, int mem_idx, double seconds) const {
    if (k.work != WorkSource::transfer_bytes || !activity_.present || !(seconds > 0)) return kernel_power_w(k, sm_idx, mem_idx);
    return copy_path_w(k, sm_idx, k.duration_s / seconds, ramp_weight(seconds));
  }
  // The share of a kernel that runs t (> 0) drawn at full dynamic power: SMs fill and drain around it.
  double ramp_weight(double t) const { return t / (t + activity_.ramp_s); }
  // The share of `counted_tbps` counted bytes per second priced as DRAM traffic: bytes beyond the datasheet bandwidth
  // are not DRAM traffic (L2 serves re-read data) and the model has no L2 energy (h200-power-split.json,
  // dram_bytes_capped); 1 for a model without the datasheet figure.
  double dram_share(double counted_tbps) const {
    const double peak_tbps = specs_.mem_bandwidth_gbs / 1000.0;
    return peak_tbps > 0 && counted_tbps > peak_tbps ? peak_tbps / counted_tbps : 1.0;
  }
  // The activity model: idle(f) + ramp x [fill busy_w g(f) + (V/V_max)^2 (sum of pJ x work rates) + DRAM pJ/B x
  // bytes/s + fill pJ/B x bytes/s a fill writes], the rates those recorded at (f_rec, m_rec) scaled by how much longer the kernel runs at (f, m), and
  // ramp = t / (t + ramp_s) for a kernel that runs t.
  double activity_power_w(const Kernel& k, int sm_idx, int mem_idx) const {
    double rate_scale = 1.0, ramp = 1.0;
    if (k.duration_s > 0) {
      const double t = kernel_time_s(k, sm_idx, mem_idx);
      if (t > 0) rate_scale = k.duration_s / t, ramp = ramp_weight(t);
    }
    if (priced_as_copy(k)) return copy_path_w(k, sm_idx, rate_scale, ramp);
    const double byte_scale = rate_scale * dram_share(k.memory_tbps * rate_scale);
    const double memory_w = (activity_.memory_pj_per_byte * (k.memory_tbps - k.memory_fill_tbps) +
                             activity_.memory_fill_pj_per_byte * k.memory_fill_tbps) * byte_scale;
    const double tensor_pj = activity_.tensor_pj[static_cast<int>(k.tensor_precision)] +
                             (k.tensor_issue == TensorIssue::warp ? activity_.mma_sync_extra_pj : 0.0);
    const double ops_w = tensor_pj * k.tensor_tflops +
                         activity_.fma_pj * k.fma_tflops + activity_.alu_pj * k.alu_tops +
                         activity_.unvectorised_pj_per_byte * k.unvectorised_tbps;
    return idle_w_tab_[sm_idx] +
           ramp * (k.sm_fill * activity_.busy_w * g_tab_[sm_idx] + v2_tab_[sm_idx] * ops_w * rate_scale + memory_w);
  }

 private:
  // A copy engine's bytes take their own path (copy engine, L2, DRAM; no SM): their own energy per byte, no fill x
  // busy_w term, no voltage scaling; an NCCL transfer's bytes are priced so too (split nccl_transfers_by_bytes). Its
  // recorded rates x rate_scale (the same bytes in the time it runs), ramp weight `ramp`.
  double copy_path_w(const Kernel& k, int sm_idx, double rate_scale, double ramp) const {
    const double byte_scale = rate_scale * dram_share(k.memory_tbps * rate_scale);
    const double copy_w = (activity_.copy_engine_pj_per_byte * (k.memory_tbps - k.memory_fill_tbps) +
                           activity_.memory_fill_pj_per_byte * k.memory_fill_tbps) * byte_scale;
    return idle_w_tab_[sm_idx] + ramp * (activity_.copy_engine_w + copy_w);
  }
  void build_tables();

  std::string name_, display_name_, status_, source_file_, derived_from_;
  GpuSpecs specs_;
  std::vector<std::pair<std::string, ClassCoefficients>> computations_, kernel_overrides_;
  std::vector<int> name_override_;  // per workload name id: index into kernel_overrides_, or -1
  std::vector<NamedPrior> named_priors_;
  std::vector<int> name_prior_;  // per workload name id: index into named_priors_, or -1
  PriorRegime prior_regime_;
  double at_cap_share_ = 1;
  std::array<double, kKernelClassCount> regime_scale_{1, 1, 1, 1, 1, 1, 1, 1, 1};
  bool price_launch_elementwise_ = false;  // in a below-cap regime whose key says so
  int sm_count_ = 0;
  std::vector<double> sm_clocks_, mem_clocks_;
  ClockPair default_clocks_;
  std::vector<std::pair<double, double>> voltage_points_;  // (MHz, relative V), ascending
  double idle_w_ = 0, idle_sm_fraction_ = 0, cap_w_ = 0, dynamic_scale_ = 1;
  std::array<ClassCoefficients, kKernelClassCount> classes_{};
  NativeGovernorParams governor_;
  SwitchLatency latency_;
  Json provenance_;
  ActivityPower activity_;
  std::vector<double> g_tab_, v2_tab_, idle_w_tab_, dyn_tab_;
  std::vector<double> sm_ratio_, mem_ratio_;  // f_max / f and m_max / m per table clock
};

}  // namespace dvfs
