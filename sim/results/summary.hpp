#pragma once
// Result files: summary.json (per step and total time/energy, mean power, clock residency, energy per
// phase, annotation and kernel class) and timeline.csv (power and clocks per fixed interval, like an
// NVML sampler). Output is deterministic: same inputs, byte-identical files.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"
#include "traces/src/kineto_importer.hpp"

#include <string>
#include <vector>

namespace dvfs {

Json build_summary(const Scenario& sc, const Workload& wl, const ImportReport& rep, const GpuModel& model,
                   const std::vector<RankOutcome>& outcomes);
// The timeline as columns, one entry per interval and GPU: the mean power and clocks over the interval
// (the last one may be partial) and the cumulative energy at its end. timeline.csv prints these.
struct TimelineColumns {
  std::vector<int> gpu;
  std::vector<double> t_s, power_w, sm_mhz, mem_mhz, energy_j;
};
TimelineColumns timeline_columns(const std::vector<RankOutcome>& outcomes);
std::string timeline_csv(const std::vector<RankOutcome>& outcomes);
// Human-readable table of a summary (what `dvfs-sim run` prints).
std::string format_report(const Json& summary);
// The report's "collectives:" line for describe_collectives' object: which calls ran on the simulated cluster and which
// kept their recorded time, naming the process groups not simulated (ranks not all in this import, or inferred calls
// that differ across ranks) and the batched kernels, so a user merging rank traces sees when a rank is missing.
std::string collectives_line(const Json& collectives);

}  // namespace dvfs
