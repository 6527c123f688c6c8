#pragma once
// The engine: SimGrid owns simulated time. One SimGrid host per GPU, one actor per GPU running its
// replayer. In local-loop mode an actor touches SimGrid only where the outside world matters (for
// single-GPU traces: the end of its stream); in event mode every segment is a SimGrid sleep, which
// tests use to prove both modes give the same result.
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"
#include "sim/energy/energy_meter.hpp"
#include "sim/engine/gpu_replayer.hpp"
#include "sim/network/cluster.hpp"
#include "sim/policies/policy.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace dvfs {

enum class EngineMode { local_loop, event };

using PolicyFactory = std::function<std::unique_ptr<Policy>(int rank)>;

struct RankOutcome {
  int rank = 0;
  std::string policy;
  ReplayStats stats;
  EnergyMeter meter;
  double simgrid_end_s = 0;  // the engine's clock when the GPU's actor finished
};

// Multi-rank workloads: a kernel that stands for a collective whose group is all in the workload (or a
// send / receive whose peer is, other than its own rank) is simulated on `cluster` (ranks placed in global-rank
// order); the others keep their recorded duration. The first form uses default_cluster_spec().
std::vector<RankOutcome> run_engine(const Workload& wl, const GpuModel& model, const PolicyFactory& make_policy,
                                    const ReplayOptions& opts, EngineMode mode);
std::vector<RankOutcome> run_engine(const Workload& wl, const GpuModel& model, const PolicyFactory& make_policy,
                                    const ReplayOptions& opts, EngineMode mode, const ClusterSpec& cluster);

}  // namespace dvfs
