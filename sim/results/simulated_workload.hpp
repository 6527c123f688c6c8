#pragma once
// A simulated run as a Workload (for the Chakra export, docs/chakra.md): one rank per exported GPU, its
// activities in the order they ran, each at its simulated duration and time-averaged clocks (its recorded clocks
// on import), its work rates per second of that duration, the idle time before it (waits for inputs, gradient
// syncs, host gaps) as its gap, and the replay's steps. Replayed at its recorded clocks (policy `recorded`), it
// gives the simulated run again.
#include "sim/core/workload.hpp"
#include "sim/results/trace_export.hpp"

#include <vector>

namespace dvfs {

// `own_groups[i]`: the ranks of GPU i's tensor-parallel group, for the collectives that name none (group -1, as
// the synthesis's TP collectives do); absent or empty: those activities stay fixed-length kernels.
Workload simulated_workload(const TraceExport& t, const std::vector<std::vector<int>>& own_groups = {});

}  // namespace dvfs
