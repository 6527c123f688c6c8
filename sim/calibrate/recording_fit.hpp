#pragma once
// `dvfs-sim calibrate --recording`: fits a GPU model's kernel-class time scaling and its dynamic
// power scale from one recording (Kineto trace + NVML telemetry + measured steps), using the clock
// changes the GPU made by itself under its power cap.
//
// Time: the same kernel (name and launch shape) recurs across layers and steps at different recorded
// SM clocks. For each such group recurring at least 8 times across >= 5 % of clock spread, least
// squares of d / mean(d) on f_max / f gives the slope beta; with d(f) ~ b f_max/f + 1 - b (b: the
// share at the highest clock, as the replay uses it) the group's share is
// b = beta / (1 - beta (mean(f_max/f) - 1)). A class's share is the mean of its groups' shares weighted
// by their recorded time, over groups with a standard error <= 0.2; classes with fewer than 30 such
// kernels or a standard error above 0.15 keep the base model's share. Kernel names recurring >= 24
// times with a share known to <= 0.05 keep their own (`kernels.<name>`). The memory share is not
// identified (the memory clock did not move): it keeps the base model's value, capped at 1 - b.
// The standard errors treat kernels as independent; kernels sharing one telemetry sample are not,
// so they are optimistic.
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
