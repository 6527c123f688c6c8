#pragma once
// `dvfs-sim validate`: replays a recording's profiled steps on a GPU model and compares energy per
// step, mean power and time per step with what was measured (NVML energy counter, step bounds).
// Two clock sources: the simulated `native` governor, and the clocks the telemetry `recorded` —
// so a power-model error can be told from a governor-model error.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/network/cluster.hpp"
#include "traces/src/recording.hpp"

#include <string>

namespace dvfs {

// `out_dir` (not ""): also writes there each clock source's replay as a trace (<source>.trace.json.gz,
// sim/results/trace_export.hpp) and timeline (<source>.timeline.csv), the measured telemetry on the
// replay's time axis (measured.csv: t_s,power_w,sm_mhz,mem_mhz) and the report (validate.json), for
// `dvfs-sim report`.
// shapes_withheld: the recording imported as a trace without operator shapes would be (withhold_operator_work).
Json validate_recording(const std::string& dir, const std::string& gpu, const std::string& out_dir = "", bool shapes_withheld = false);
// A replay of recording `dir` on `model` with the clocks of `source`: the native governor's ("native"), or those
// the telemetry recorded ("recorded").
Scenario validation_scenario(const std::string& dir, const GpuModel& model, const char* source);
// The same for a recording already loaded (with measured steps and an energy counter) and a model.
Recording load_validation_recording(const std::string& dir);
Json validate_recording(const Recording& rec, const GpuModel& model, const std::string& out_dir = "");
std::string format_validation(const Json& report);

// A multi-GPU recording: a directory of rank<N>/ recordings of one job (each with its own trace,
// telemetry and steps). Their ranks are replayed together, collectives matched across them and run on
// `cluster` (bandwidths < 0: the GPU model's), and for each rank and profiled step the simulated time and
// energy are compared with the measured ones, plus each rank's time in communication kernels and the
// iteration time (the slowest rank's step).
bool is_multi_rank_recording(const std::string& dir);
Json validate_multi_rank(const std::string& dir, const std::string& gpu, const ClusterSpec& cluster);
std::string format_multi_rank_validation(const Json& report);

}  // namespace dvfs
