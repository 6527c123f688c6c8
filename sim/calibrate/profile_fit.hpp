#pragma once
// `dvfs-sim calibrate --profile`: fits a GPU model to a per-frequency stage profile.
//
// Power of instruction k at SM clock f:   P_k(f) = A + B_k * g(f),  g(f) = (V(f)/V(f_max))^2 f/f_max,
// V(f) = v_floor below the knee, rising linearly to 1 at the highest clock (the voltage floor and knee
// are found by a grid search; A and B_k by weighted least squares on the relative error, using only
// rows below the cap). The cap's regulation target is chosen among "none" and 0.97-1.05 x the highest
// measured power, by the smallest in-sample prediction error. The time share b that scales with
// 1/f_effective is pooled over every series (least squares through the anchor). A, B_k map onto the
// model's idle power (kept from the base model), its SM-clock share and one computation per
// instruction. Everything is rounded, written, re-loaded and scored with the same code
// `dvfs-sim validate --models` uses.
#include "sim/core/json_util.hpp"
#include "sim/validate/profile_check.hpp"
#include "traces/src/stage_profile.hpp"

#include <string>

namespace dvfs {

struct ProfileCalibration {
  Json model;       // the calibrated model file
  ProfileError fit_error;  // in-sample, from the written model
  Json table;       // candidates and chosen parameters, for the printed fit table
};

// `base` is a complete model file (path) supplying what a stage profile cannot measure: clock
// tables, idle power, cap, specs, kernel classes, governor and switch latency. `command` and `date`
// are recorded in the provenance block.
ProfileCalibration calibrate_from_profile(const std::string& profile_path, const std::string& base_path,
                                          const std::string& command, const std::string& date);

std::string format_profile_calibration(const ProfileCalibration& c);

}  // namespace dvfs
