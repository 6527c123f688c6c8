#pragma once
// A training job as a sequence of phases (issue 20): staging copies, data-loader work, training steps,
// validation, checkpoints, idle. The description a lifecycle scenario holds ({"lifecycle": ...}, docs/lifecycle.md)
// and the node it runs on (a model file: CPU power states, storage, links, GPU idle power; with provenance).
// SimGrid-free: lifecycle_sim.cpp runs it.
#include "sim/core/json_util.hpp"

#include <map>
#include <string>
#include <vector>

namespace dvfs {

// One CPU power state: its clock and the host's power at no load, one core busy and all cores busy
// (SimGrid's host energy plugin: "idle:one_core:all_cores").
struct CpuPstate {
  double ghz = 0;
  double idle_w = 0, one_core_w = 0, all_cores_w = 0;
};

struct StorageSpec {
  std::string name;           // e.g. "local", "shared"
  double read_bps = 0, write_bps = 0;
  double sync_s = 0;          // fixed cost of one fsync / flush
  double file_open_s = 0;     // latency of opening one file (metadata round trip), paid by each reader in turn
  bool remote = false;        // reached over its link (a file server), else a disk of the node
  double link_bps = 0, link_latency_s = 0;
  double idle_w = 0;          // storage power attributed to the job while it runs (0 = not modelled)
  double j_per_byte = 0;      // energy per byte read or written on the device
  double link_j_per_byte = 0; // network energy per byte moved over the link (0 = not modelled)
  // Write-behind (a local disk with the page cache in front): a copy's writes land in memory and reach the disk
  // only at the phase's sync (os.sync / fsync), after the copying process's CPU work; the disk then writes every
  // dirty byte at write_bps while the kernel's writeback spends `writeback_core_s_per_file` per file on a core of
  // its own, and the disk spends `sync_s_per_file` per file beside the data (inode, directory entry, journal).
  // false: a streaming copy (writes overlap the CPU work), no writeback CPU.
  bool write_behind = false;
  double writeback_core_s_per_file = 0;
  double sync_s_per_file = 0;
  // Creating a file on recently freed inodes (split.json day3): ext4 without a journal skips recently freed inodes
  // (nominally 60 s; copies 76 s after a removal still paid it, day 3 and the split's amendment), and in a block group
  // holding only such inodes each new file's allocation scans every free one left there: `recent_free_scan_core_s` of
  // the creating process's CPU per inode scanned; `inodes_per_group` inodes a group.
  double recent_free_scan_core_s = 0;
  double inodes_per_group = 0;
};

struct NodeSpec {
  std::string file;
  int cores = 1;
  std::vector<CpuPstate> pstates;  // fastest first (SimGrid's pstate 0)
  std::vector<StorageSpec> storage;
  double gpu_idle_w = 0;           // GPU power idle for a whole phase (measured; between steps the GPU model's idle power at its clock)
  double gpu_d2h_bps = 0;          // device-to-host copy rate of a checkpoint's tensors (0 = no copy stage)
  Json provenance;
  const StorageSpec& store(const std::string& name, const std::string& file, const std::string& field) const;
};

// Per-step GPU cost of a training or validation phase: from a trace replay (`trace`) or given (`gpu_step_s`).
struct StepCost {
  double gpu_busy_s = 0;   // GPU time of one step
  double gpu_busy_j = 0;   // GPU energy of that busy time (0 = gpu_busy_w x busy time)
  double gpu_busy_w = 0;
};

// One-time costs of the first phase of a kind in a job (cuDNN autotuning, allocator growth, compilation of new
// shapes): extra time of its first step, the GPU's power during it and the training process's CPU work in it
// beyond main_core_busy. Later phases of the kind pay the steady cost only.
struct WarmUp {
  double s = 0;
  double gpu_w = 0;
  double core_s = 0;  // at the recorded CPU clock
};

struct LifecyclePhase {
  std::string name;
  std::string kind;          // staging | train | validation | checkpoint | idle
  // staging and checkpoint
  double bytes = 0;
  double files = 0;          // files moved (staging); a loader opens samples_per_step files per step
  std::string from, to;      // storage names
  double core_s_per_gb = 0;  // CPU time per GB moved (copy, serialisation), at the recorded CPU clock
  double core_s_per_file = 0;
  double core_s_per_file_growth = 0;  // staging: CPU per file per file already in the target folder (folder-size price)
  double recently_freed_inodes = 0;   // staging: inodes freed on the target disk within the recency window before the phase
  double reused_before = 0;           // of them, already taken by files created since (e.g. a dataset generated just before)
  int streams = 1;
  double sync_bytes = 0;     // other dirty data the phase's sync writes too (os.sync flushes every dirty page)
  double sync_files = 0;     // files of it
  // train and validation
  int steps = 0;
  double samples_per_step = 0;
  double read_bytes_per_step = 0;
  std::string read_from;     // storage the loader reads
  int workers = 0;           // data-loader worker processes (0 = loading in the main process)
  int prefetch = 2;          // batches in flight per worker
  double core_s_per_sample = 0;  // decode + augment, at the recorded CPU clock
  double main_core_busy = 0;  // share of one core the training process keeps busy while the phase runs (its threads,
                              // pinning, waiting in CUDA calls): CPU energy, no time
  double host_step_s = 0;    // shortest wall time of a step with its batch ready (launches, Python), at the recorded CPU clock
  double loader_start_s = 0; // host time before the first batch request (the loader's iterator: worker processes
                             // started); loaders start after it, every phase (workers that do not persist)
  StepCost step;
  std::string trace;         // a recording whose replay gives `step` (resolved by the runner)
  WarmUp warmup;             // set by the runner on the first phase of its kind (LifecycleSpec::first_occurrence)
  bool shared_read_when_unstaged = true;
  // idle
  double seconds = 0;
};

// What a policy changes across the phases (scenario "policies": [...]).
struct LifecyclePolicy {
  std::string name;
  double gpu_sm_mhz_input_bound = 0;  // GPU SM clock in training/validation phases whose GPU waits for its input (0 = native):
                                      // batches made it wait > 10 % of the phase, or it was busy < 50 % of it
  int cpu_pstate = 0;                 // CPU power state of the whole job
  std::string staging;                // "" = as described; "skip": no staging copy, loaders read `from` of the staging phase
  std::string dataset_on;             // "" = as described; else the storage the staging phases copy from
};

struct LifecycleSpec {
  std::string file;
  NodeSpec node;
  std::string gpu;      // GPU model for clocks and idle power at a clock (models/gpus)
  double recorded_cpu_ghz = 0;  // the CPU clock the per-core costs were measured at (0 = pstate 0's)
  std::vector<LifecyclePhase> phases;
  std::vector<LifecyclePolicy> policies;
  std::map<std::string, WarmUp> first_occurrence;  // by kind (train, validation): applied to the first phase of it
};

// Free inodes scanned while `n` new files take recently freed inodes k .. k + n - 1, the freed inodes filling groups
// of `per_group` one after another: file j scans the per_group - (j mod per_group) free inodes left in its group.
double recent_free_inodes_scanned(double n, double k, double per_group);
// The copying process's CPU work of a staging copy (or a checkpoint's write), at the recorded clock, all streams:
// per GB, per file, the folder-size growth and the scan of the target disk's recently freed inodes.
double staging_copy_core_s(const LifecyclePhase& ph, const StorageSpec& dst);

NodeSpec parse_node_spec(const Json& doc, const std::string& file);
LifecycleSpec parse_lifecycle(const Json& doc, const std::string& file, const std::string& base_dir);

}  // namespace dvfs
