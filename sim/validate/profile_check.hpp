#pragma once
// How well a GPU model predicts a per-frequency stage profile: every series is anchored at its
// measurement at the profile's highest clock, every other clock is predicted with the model's
// computation of the same instruction (models/src/stage_model.hpp) and compared with the measured
// time and energy. The anchor rows themselves are not counted.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/validate/stage_workloads.hpp"
#include "traces/src/stage_profile.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct SeriesError {
  int stage = 0;
  std::string instruction;
  std::size_t points = 0;
  double time_mape = 0, energy_mape = 0;  // fractions
  double time_max_ape = 0, energy_max_ape = 0;
  double time_bias = 0;  // mean signed relative time error (fraction; > 0: predicted slower)
};

struct ProfileError {
  std::string profile;  // file
  std::string model;
  std::size_t points = 0;
  double time_mape = 0, energy_mape = 0;  // over every predicted point (fractions)
  double time_max_ape = 0, energy_max_ape = 0;
  std::vector<SeriesError> series;
  Json to_json() const;
};

// The model must have a computation for every instruction of the profile (else InputError).
ProfileError check_profile(const GpuModel& model, const StageProfile& profile);

// A40-from-A100 style retargeting: each series of `target_profile` is predicted from the series of
// the same stage and instruction in `source_profile` (measured on `from`'s GPU at its highest clock),
// moved to `to` with retarget_computation, then predicted at every clock of the target profile.
ProfileError check_retarget(const GpuModel& from, const StageProfile& source_profile, const GpuModel& to,
                            const StageProfile& target_profile);

// The same with each computation's own split from its bytes (retarget_computation_by_work): the
// memory time of (stage, instruction) is workload[stage]'s bytes / (memory_efficiency x bandwidth).
ProfileError check_retarget_by_work(const GpuModel& from, const StageProfile& source_profile,
                                    const StageWorkload& workload, double memory_efficiency, const GpuModel& to,
                                    const StageProfile& target_profile);

// One memory efficiency from `from`'s own profiles only: every distinct series' top-clock row, its
// clock-insensitive time by `from`'s computation coefficients (sm_bound_time_s), its bytes by the
// workload (fit_memory_efficiency). Reads nothing of any other GPU.
struct SourceProfile {
  const StageProfile* profile = nullptr;
  const StageWorkload* workload = nullptr;
};
double fit_retarget_memory_efficiency(const GpuModel& from, const std::vector<SourceProfile>& sources);

}  // namespace dvfs
