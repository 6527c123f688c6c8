#pragma once
// The traces this process loaded lately (a sweep worker replays one trace at many points), and a loaded trace
// handed from one process to another as bytes: a sweep's parent loads its base scenario's trace once and its
// worker processes adopt it (decode the bytes) instead of each importing the trace again.
#include "sim/simulation/simulation.hpp"

#include <memory>

namespace dvfs_py {

// The scenario's trace from this process's cache, loaded (load_scenario_trace) on a miss. Callers hold the
// SimulationLock.
std::shared_ptr<const dvfs::LoadedTrace> cached_trace(const dvfs::Scenario& sc, const dvfs::GpuModel& model);

}  // namespace dvfs_py
