#pragma once
// The simulated run as a Chrome trace-event JSON in Kineto's layout (docs/trace-export.md), for Perfetto /
// chrome://tracing / Holistic Trace Analysis beside the recorded trace, and for our own importer:
//   - one process per simulated GPU (pid = the rank), one thread per CUDA stream;
//   - every device activity as a complete event of cat "kernel" / "gpu_memcpy" / "gpu_memset" at its
//     simulated start and duration, with Kineto's args (device, stream, correlation, grid, block, ...) and
//     the simulation's: "sm clock (MHz)", "mem clock (MHz)" (time-weighted over the activity), "energy (J)",
//     "power (W)", "recorded dur (us)", "kernel class", "phase", and "work" (the work rates the power model
//     priced, per second of the simulated duration; traces/src/simulated_args.hpp reads them back);
//   - steps (ProfilerStep#N) and the workload's annotations as gpu_user_annotation ranges, phases as ranges
//     of cat "dvfs_phase" on a track of their own;
//   - counter tracks per GPU from the meter's timeline: power (W), SM clock (MHz), memory clock (MHz),
//     energy (J, cumulative).
// Needs the activity records of the replay (ReplayOptions::record_activities). Output is deterministic.
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"
#include "sim/engine/engine.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace dvfs {

struct ExportedGpu {
  const Rank* program = nullptr;          // the activities it ran (indices of the meter's records)
  const RankOutcome* outcome = nullptr;   // its meter: activity records, steps, timeline
  int pid = 0;                            // its process (and device id) in the trace
  std::string label;                      // the process name shown, e.g. "GPU 0 (h200, native)"
};

struct TraceExport {
  const Workload* workload = nullptr;  // names, annotations and their phases, process groups
  // The collective calls the activities refer to (Kernel::collective - 1); null = the workload's.
  const std::vector<CollectiveCall>* collectives = nullptr;
  std::vector<ExportedGpu> gpus;
  std::string device_name;  // deviceProperties name, e.g. "NVIDIA H200 (simulated: h200)"
  int sm_count = 0;
  int repeat = 1;           // the replay's repeat (steps of later repeats are labelled step#N)
  Json metadata = Json::object();  // written under "dvfs_sim": scenario, policy, GPU model, ...
  std::vector<int> only_gpus;      // write only these GPUs (pids; empty: all): a Perfetto-sized slice of a large run
};

struct TraceExportStats {
  std::size_t events = 0;            // trace events written (metadata, activities, ranges, counters)
  std::size_t activities = 0;        // of which device activities
  std::size_t bytes = 0;             // JSON text
  std::size_t file_bytes = 0;        // on disk (gzip when the path ends in .gz)
  double wall_s = 0;                 // writing it, wall clock
  double cpu_s = 0;                  // writing it, CPU time of the process (text and compression threads)
  double compress_cpu_s = 0;         // of which the compression thread's (gzip only)
};

// Writes the trace to `path` (gzip when it ends in ".gz"); an InputError names the path when it cannot.
TraceExportStats write_trace_export(const TraceExport& t, const std::string& path);
// The JSON text (tests, Python).
std::string trace_export_text(const TraceExport& t, TraceExportStats* stats = nullptr);

// "0-7,64,100-103": GPU ids (>= 0, at most 65,536 of them), for --trace-gpus; InputError naming `field` otherwise.
std::vector<int> parse_gpu_list(const std::string& text, const std::string& field);

// {file, events, activities, bytes, file_bytes, seconds, cpu_s}: what a command reports.
Json trace_export_stats_json(const TraceExportStats& st, const std::string& path);

// The engine run of `wl` (outcomes in rank order, recorded with record_activities) as a TraceExport.
TraceExport engine_trace_export(const Workload& wl, const std::vector<RankOutcome>& outcomes, const std::string& gpu_model,
                                int sm_count, int repeat, Json metadata);

}  // namespace dvfs
