#pragma once
// Runs a job's phases on SimGrid (the only lifecycle file that sees SimGrid): one node host with the CPU's
// power states and cores (SimGrid's host energy plugin gives its energy), its local disks, and remote
// storage behind links. Staging and checkpoints move bytes through disks and links with CPU work per byte;
// a training or validation phase runs data-loader worker actors (read a batch, decode it on a core) and a
// trainer actor that waits for each batch, then keeps the GPU busy for a step while the training process
// uses a core; the first phase of a kind adds its one-time costs (WarmUp) to its first step. A checkpoint first
// copies its tensors to the host (GPU at its copy power), then serialises and writes them. GPU energy is the step
// cost while busy, the warm-up and copy power while those run, the phase's idle power otherwise; storage and
// network energy are per byte (plus storage idle power) where the node model gives them.
#include "sim/lifecycle/lifecycle_spec.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct SimPhase {
  LifecyclePhase phase;
  double gpu_idle_w = 0;  // GPU power while it has no work in this phase
  double gpu_copy_w = 0;  // GPU power while a checkpoint copies its tensors to the host (node gpu_d2h_bps)
};

struct PhaseOutcome {
  std::string name, kind;
  double time_s = 0;
  double cpu_j = 0, gpu_j = 0, storage_j = 0, network_j = 0;
  double gpu_busy_s = 0;
  double data_wait_s = 0;    // time the trainer waited for a batch
  double cpu_core_s = 0;     // busy core-seconds (work / clock)
  double bytes_read = 0, bytes_written = 0, bytes_network = 0;
  int steps = 0;
  double total_j() const { return cpu_j + gpu_j + storage_j + network_j; }
};

// cpu_pstate: the CPU power state of the whole run; recorded_cpu_ghz: the clock the per-core costs were
// measured at (work = cost x that clock).
std::vector<PhaseOutcome> simulate_lifecycle(const NodeSpec& node, const std::vector<SimPhase>& phases, int cpu_pstate,
                                             double recorded_cpu_ghz);

}  // namespace dvfs
