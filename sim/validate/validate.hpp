#pragma once
// `dvfs-sim validate`: replays a recording's profiled steps on a GPU model and compares energy per
// step, mean power and time per step with what was measured (NVML energy counter, step bounds).
// Two clock sources: the simulated `native` governor, and the clocks the telemetry `recorded` —
// so a power-model error can be told from a governor-model error.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "traces/src/recording.hpp"

#include <string>

namespace dvfs {

Json validate_recording(const std::string& dir, const std::string& gpu);
// The same for a recording already loaded (with measured steps and an energy counter) and a model.
Recording load_validation_recording(const std::string& dir);
Json validate_recording(const Recording& rec, const GpuModel& model);
std::string format_validation(const Json& report);

}  // namespace dvfs
