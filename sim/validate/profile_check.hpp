#pragma once
// How well a GPU model predicts a per-frequency stage profile: every series is anchored at its
// measurement at the profile's highest clock, every other clock is predicted with the model's
// computation of the same instruction (models/src/stage_model.hpp) and compared with the measured
// time and energy. The anchor rows themselves are not counted.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
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

}  // namespace dvfs
