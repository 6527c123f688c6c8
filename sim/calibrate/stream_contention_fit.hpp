#pragma once
// Fits a contention model (models/src/stream_contention.hpp) on the two-stream pairs a split file lists under
// `fit` (the held-out pairs are not even loaded): a grid search over the overlap gain, the copy engine's SM
// share, the power-clock exponent and the cap factor, least squares on the time and energy errors of the
// together runs predicted from the alone runs. The clock-time share is not fit: it is the H200's measured GEMM
// share (design notes, "H200, natural clock changes").
#include "sim/core/json_util.hpp"

#include <string>

namespace dvfs {

struct ContentionCalibration {
  Json model;   // the contention file (models/contention/NAME.json)
  Json report;  // per fit pair: errors at the fitted parameters
};

ContentionCalibration calibrate_stream_contention(const std::string& pairs_dir, const std::string& split_file, const std::string& gpu,
                                                  const std::string& command, const std::string& date);
std::string format_contention_calibration(const ContentionCalibration& c);

}  // namespace dvfs
