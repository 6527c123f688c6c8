#pragma once
// Limits on what an input may ask for (README "Limits and bad input"). An input beyond one is refused up
// front with one line naming the file, the field and the limit, instead of running for hours or needing
// gigabytes of memory.
#include <cstddef>

namespace dvfs {

// JSON documents: the deepest nesting of objects and arrays (shipped files nest at most 7 deep). Deeper
// documents are refused while parsing, before anything recurses over them.
constexpr std::size_t kMaxJsonDepth = 64;

// Kineto traces: a time stamp or duration (µs; epoch time stamps are ~1.8e15 µs).
constexpr double kMaxTraceTimeUs = 1e17;
// Kineto traces: first activity start to last activity end on one device (s).
constexpr double kMaxTraceSpanS = 86400.0;
// Kineto traces: ranks in one process group (`Group size`, `Process Group Ranks`).
constexpr long kMaxGroupSize = 65536;
// Kineto traces: a memcpy's or memset's `bytes` (1 PB: a GPU holds ~0.2 TB, a host a few TB), and the rate they
// imply over the activity's duration, counted as at least 1 µs (traces round to it): 1 PB/s, ~100x the fastest
// HBM (8 TB/s) or NVLink (1.8 TB/s). No recorded copy comes near either; 9e18 bytes in 1 ns priced a fill at 9e27 B/s.
constexpr double kMaxActivityBytes = 1e15;
constexpr double kMaxActivityBytesPerS = 1e15;
constexpr double kMinRateDurationUs = 1.0;
// A collective's or point-to-point transfer's buffer (Kineto `In/Out msg nelems` x dtype, Chakra `comm_size`): 1 PB, as
// a copy; 2^60 elements ran past 30 s and 2^52-2^58 ended on the timeline limit, blaming timeline_interval_s.
constexpr double kMaxCollectiveBytes = 1e15;
// Arithmetic counted from a kernel's operator shapes, per second of the kernel: 1e6 TFLOP/s (1 EFLOP/s), ~200x a B200's
// dense fp8. Shapes of 2^31 x 2^31 priced a kernel at 5e19 W. (Bytes are not bounded: an in-place operator's count
// holds its whole target tensor, which a real KV-cache update puts beyond any bandwidth.)
constexpr double kMaxCountedTeraOps = 1e6;

// Scenarios: `repeat` (whole passes over the trace).
constexpr long kMaxRepeat = 1000000;
// Scenarios: steps replayed in all (steps of the trace x `repeat`): each is a row of summary.json.
constexpr double kMaxReplayedSteps = 1e6;
// Scenarios: rows of the NVML-like timeline (simulated span / `output.timeline_interval_s`), 32 bytes each.
constexpr double kMaxTimelineRows = 2e6;

// Lifecycle scenarios: bytes a phase copies, saves or syncs (10 PB), the files it creates (1e10), any time it names
// (seconds, per step or in all: ~116 days) and any per-unit cost (core-seconds per GB, file or sample; samples per
// step; a step's GPU joules or watts). Beyond them a job's other phases vanish beside it in double precision.
constexpr double kMaxLifecycleBytes = 1e16;
constexpr double kMaxLifecycleFiles = 1e10;
constexpr double kMaxLifecycleSeconds = 1e7;
constexpr double kMaxLifecycleUnitCost = 1e6;
// Lifecycle node files: a CPU power state's clock (and a scenario's recorded_cpu_ghz), any bandwidth (1 PB/s), the
// CPU seconds of one file's writeback or of one inode scanned, and a block group's inodes (ext4 allows at most 2^16
// x 8 per group; 2^32 keeps any disk).
constexpr double kMinCpuGhz = 0.01;
constexpr double kMaxCpuGhz = 100;
constexpr double kMaxLifecycleBandwidth = 1e15;
constexpr double kMaxPerFileCoreS = 1;
constexpr double kMaxInodesPerGroup = 4294967296.0;
// Lifecycle scenarios: steps of one train or validation phase, and steps simulated in all (every phase's steps, once
// for the job as described and once per policy). SimGrid's time per step grows with the steps a data-loader actor has
// already run (1e4 steps of one loader: 0.55 s; 3e4: 4 s; 1e5: 36 s; 1e6 ran for minutes); 1e5 in all runs in
// about 5 s. The shipped jobs simulate at most 250 steps a phase and 8,600 in all.
constexpr long kMaxLifecyclePhaseSteps = 10000;
constexpr double kMaxLifecycleSimulatedSteps = 1e5;

// GPU model files (and a scenario's switch-latency overrides): beyond these, results went to 0 s kernels, inf or NaN
// energy, or the governor's window filled memory (window_s 1e20: segmentation fault).
constexpr double kMinModelClockMhz = 1.0;      // SM and memory clocks, voltage-curve points
constexpr double kMaxModelClockMhz = 20000.0;  // 20 GHz (GDDR7 reports ~14 GHz; SM clocks ~2 GHz)
constexpr double kMaxModelPowerW = 10000.0;    // idle, cap, a class's dynamic power, activity watts
constexpr double kMaxModelPjPerUnit = 10000.0; // activity energies per FLOP, op or byte (shipped: <= 110 pJ)
constexpr double kMaxRelativeVoltage = 10.0;
constexpr double kMaxDynamicScale = 100.0;
constexpr double kMinGovernorPeriodS = 1e-4, kMaxGovernorPeriodS = 1.0, kMaxGovernorWindowS = 10.0;
constexpr double kMaxActivityRampS = 1.0;
constexpr double kMaxSwitchLatencyS = 10.0;     // mean, spread and firmware latency of a clock switch
constexpr double kMaxSwitchSpreadRatio = 1000.0; // spread / mean: a lognormal's sigma stays finite
constexpr double kMaxSwitchEnergyJ = 1000.0;
// A slowdown budget (planned, critical-path and Kareus policies; compare; synth): 1,000 % is already a plan eleven
// times slower than native; 1e300 % printed 300 digits in the reports.
constexpr double kMaxSlowdownBudgetPct = 1000.0;

// Power-budget (control) and fleet scenarios: simulated seconds (one day; a 16-GPU GRPO session runs ~160x faster
// than real time on one core). Their telemetry bins per GPU are bounded by kMaxTimelineRows.
constexpr double kMaxControlDurationS = 86400.0;
// A power cap's latency to take effect (firmware: tens to hundreds of ms; a minute is already no control at 0.5 s).
constexpr double kMaxCapLatencyS = 60.0;
// Networks: a link's or hop's latency (real ones are microseconds; at 1e308 s SimGrid's clock overflowed and aborted),
// a link's bandwidth (1 PB/s; at least 1 B/s), a fabric's oversubscription.
constexpr double kMaxLinkLatencyS = 1.0;
constexpr double kMaxLinkBandwidth = 1e15;
constexpr double kMaxOversubscription = 1e6;
// Synthetic scenarios: kernel events simulated in all (each stage's kernels x micro-batches x DP replicas, x TP
// when unfolded): the shipped 1,024-GPU scenarios replay 5-9e6 in 0.3-3.6 s; 1e9 takes minutes.
constexpr double kMaxSyntheticKernelEvents = 1e9;
// GPUs simulated side by side (ranks of a recorded job; a synthetic job's pp x dp, x tp when unfolded): each is a
// SimGrid actor with its own stack mapping, and 16,384 of them exhausted the kernel's mappings (vm.max_map_count
// 65,530) and aborted; 12,000 ran in 2.8 GB. The shipped 1,024-GPU scenarios simulate 128-1,024.
constexpr int kMaxSimulatedGpus = 8192;
// Recordings: a telemetry clock (10 GHz; GPUs run below 4) and power (10 kW; a GPU board draws below 2).
constexpr double kMaxTelemetryMhz = 10000;
constexpr double kMaxTelemetryMw = 1e7;
// Recordings: one profiled step's measured bounds (run.json t1_ns - t0_ns; the host lead and tail around its kernels
// are replayed as idle time).
constexpr double kMaxMeasuredStepS = 86400.0;
// Recordings: how far a step's traced kernels may lie outside its measured bounds (run.json t0_ns..t1_ns) before the
// two clocks are taken to disagree: 50 ms or half the step, whichever is more (Kineto and NVML agree within a few ms).
constexpr double kStepBoundSlackS = 0.05;

// GPU model files: entries of a clock table (max - min) / step + 1.
constexpr double kMaxClockSteps = 4096;

}  // namespace dvfs
