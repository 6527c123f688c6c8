#pragma once
// `dvfs-sim calibrate --recording`: fits a GPU model's kernel-class time scaling and its dynamic
// power scale from one recording (Kineto trace + NVML telemetry + measured steps), using the clock
// changes the GPU made by itself under its power cap.
//
// Time: the same kernel (name and launch shape) recurs across layers and steps at different recorded
// SM clocks. Per class, a fixed-effects regression of d / mean(d) on f_max / f over every kernel
// group that recurs at least 8 times across >= 5 % of clock spread gives the slope beta, weighted by
// the group's mean duration; with d(f) = d_ref (b f_max/f + 1 - b) the class share is
// b = beta / (1 - beta (mean(f_max/f) - 1)). Classes with too little evidence (fewer than 30
// kernels, or a standard error of b above 0.15) keep the base model's share. The memory share keeps
// the base model's split of the rest (the memory clock did not move).
// Power: power.dynamic_scale makes the replay at the recorded clocks meet the counter energy.
#include "sim/core/json_util.hpp"

#include <string>

namespace dvfs {

struct RecordingCalibration {
  Json model;
  Json report;  // per class: kernels, groups, clock span, beta, b, standard error, used or not; per kernel
};

RecordingCalibration calibrate_from_recording(const std::string& dir, const std::string& base_path,
                                              const std::string& command, const std::string& date);
std::string format_recording_calibration(const RecordingCalibration& c);

}  // namespace dvfs
