#pragma once
// `dvfs-sim validate`: replays a recording's profiled steps on a GPU model and compares energy per
// step, mean power and time per step with what was measured (NVML energy counter, step bounds).
// Two clock sources: the simulated `native` governor, and the clocks the telemetry `recorded` —
// so a power-model error can be told from a governor-model error.
#include "sim/core/json_util.hpp"

#include <string>

namespace dvfs {

Json validate_recording(const std::string& dir, const std::string& gpu);
std::string format_validation(const Json& report);

}  // namespace dvfs
