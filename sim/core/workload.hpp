#pragma once
// The Workload: what every importer produces and the engine replays. For each rank (GPU), its
// device activities (kernels, copies, memsets) in recorded start order, each with the idle gap
// before it, the clock it was recorded at (when known), its class and the annotations covering it.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dvfs {

enum class KernelClass : std::uint8_t {
  gemm,
  attention,
  elementwise,
  reduction,
  normalization,
  copy,
  optimizer,
  communication,
  other,
};
constexpr int kKernelClassCount = 9;
const char* to_string(KernelClass c);
bool kernel_class_from_string(const std::string& s, KernelClass& out);

enum class ActivityKind : std::uint8_t { kernel, memcpy, memset };
const char* to_string(ActivityKind k);

// Lifecycle phase a device activity belongs to ("Watts Behind the Weights" phases that a kernel
// trace can show). Host-bound gaps are accounted separately by the energy meter.
enum class Phase : std::uint8_t { forward, backward, optimizer, other };
constexpr int kPhaseCount = 4;
const char* to_string(Phase p);

// What a communication kernel does (NCCL's collective names), for kernels that stand for a collective
// or point-to-point transfer among ranks.
enum class CollectiveKind : std::uint8_t { all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, send, recv };
const char* to_string(CollectiveKind k);

// One collective call: a communication kernel whose duration is decided by the other ranks and the
// network, not by the GPU's clocks. `bytes` is the buffer every member holds (all-reduce: the whole
// buffer; reduce-scatter: its input; all-gather: its output; send/recv: the message).
// A data-parallel gradient bucket of a stage's backward: its gradients are reduced once the kernel
// before `end` has run.
struct GradientBucket {
  std::size_t end = 0;     // kernel index in the stage program, inside the chunk's backward range
  double bytes = 0;        // gradients, per TP rank
  double param_bytes = 0;  // parameters all-gathered after a distributed optimizer (0 = bytes)
};

struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;
  std::int32_t group = -1;  // index into Workload::groups; -1 = the rank's own tensor-parallel group
  std::int32_t peer = -1;   // send / recv: the other rank (global id)
  // Set on a kernel's first call: how many calls after it (in Workload::collectives) the same kernel makes. An NCCL
  // group of sends and receives (PyTorch's batch_isend_irecv) runs as one kernel that posts them all at once and ends
  // when the last is done, so no side waits for the order of the other's. 0 for every other call.
  std::uint32_t batched = 0;
};

// A send or receive: a transfer between two ranks, not a call of a group.
inline bool is_transfer(CollectiveKind k) { return k == CollectiveKind::send || k == CollectiveKind::recv; }
// A send or receive naming no peer (none recorded, or inferred ones left unpaired): it keeps its recorded duration.
inline bool transfer_without_peer(const CollectiveCall& c) { return is_transfer(c.kind) && c.peer < 0; }
// A send or receive of rank `self` to or from itself: NCCL copies it on the GPU, no link or peer in it, so it keeps its
// recorded duration (found replaying a one-rank batch_isend_irecv recording: SimGrid's loopback made it 100x longer).
inline bool transfer_to_self(const CollectiveCall& c, int self) { return is_transfer(c.kind) && c.peer == self; }
// The channel (sender, receiver) of a send or receive made by rank `self`.
inline std::pair<int, int> transfer_channel(const CollectiveCall& c, int self) {
  return c.kind == CollectiveKind::send ? std::make_pair(self, static_cast<int>(c.peer)) : std::make_pair(static_cast<int>(c.peer), self);
}

// The kind of tensor-core work a kernel does, from its operator's input type (fp16 counts as bf16: same rate
// and, on the GPUs modelled, the same energy per operation). fp64: fp64 products on tensor cores (DMMA).
enum class TensorPrecision : std::uint8_t { none, bf16, fp8, tf32, fp64 };
constexpr int kTensorPrecisionCount = 5;
const char* to_string(TensorPrecision p);

// How a kernel's tensor-core work is issued: Hopper's warpgroup MMA (wgmma: operands straight from shared memory;
// cuBLAS's nvjet and sm90 kernels, cuDNN's sm90 kernels), or the per-warp mma.sync of SM80-style kernels (operands
// through the register file: FlashAttention-2, CUTLASS 2.x `s16816` kernels, cuDNN's `sm80_` kernels run on a
// Hopper). The H200 spends more energy per FLOP on the second (models/README.md, "Activity power").
enum class TensorIssue : std::uint8_t { warpgroup, warp };
const char* to_string(TensorIssue t);

// Where a kernel's work figures come from: the launching operator's input shapes (traces/src/kernel_activity),
// the copy engine (a memcpy: its bytes), a launch that sizes it (multi_tensor_apply chunks: launch_shape), or nowhere
// (the power model then uses its kernel-class prior). launch_elementwise: an ATen elementwise kernel without operator
// shapes sized from its launch (grid x block x elements per thread); everything prices it as `unknown` (its class
// prior) except a model whose class_prior_regime prices such kernels from that size below the cap (split
// shapeless_sized_regime; GpuModel::kernel_power_w). transfer_bytes: an NCCL kernel of sends / receives the trace sizes,
// its calls' bytes read and written (price_transfer_by_bytes; split nccl_transfers_by_bytes).
enum class WorkSource : std::uint8_t { unknown, shapes, copy_engine, launch_shape, launch_elementwise, transfer_bytes };
constexpr int kWorkSourceCount = 6;
const char* to_string(WorkSource s);

// Hot data the replay loop touches: kept small so millions of kernels stay in cache-friendly arrays.
struct Kernel {
  double gap_before_s = 0;      // recorded idle time on the device before this activity starts
  double duration_s = 0;        // recorded duration
  float recorded_sm_mhz = 0;    // SM clock while it was recorded (0 = unknown)
  float recorded_mem_mhz = 0;   // memory clock while it was recorded (0 = unknown)
  float sm_fill = 1;            // share of the SMs its launch can occupy, in (0, 1]
  std::uint32_t name_id = 0;    // index into Workload::names
  std::uint32_t annotation_set = 0;  // index into Workload::annotation_sets (0 = none)
  std::int32_t step = -1;       // index into Rank::steps, -1 outside any step
  std::uint32_t collective = 0;  // 1 + index into the workload's collective calls (0 = not a collective)
  std::uint16_t stream = 0;
  KernelClass cls = KernelClass::other;
  ActivityKind kind = ActivityKind::kernel;
  // Work per second while it ran at its recorded clocks (0 when work == unknown): tensor-core and CUDA-core
  // (fp32 FMA of GEMM/convolution) FLOP/s, elementwise operations/s, and DRAM bytes read + written per second
  // (of which memory_fill_tbps written with one repeated value: fills and memsets), each in units of 1e12. The
  // activity power model (models/README.md) prices them.
  float tensor_tflops = 0;
  float fma_tflops = 0;
  float alu_tops = 0;
  float memory_tbps = 0;
  float memory_fill_tbps = 0;
  // Of memory_tbps, the bytes ATen's non-vectorised elementwise loop moves (split unvectorised_bytes)
  float unvectorised_tbps = 0;
  TensorPrecision tensor_precision = TensorPrecision::none;
  WorkSource work = WorkSource::unknown;
  TensorIssue tensor_issue = TensorIssue::warpgroup;  // read only where tensor_tflops > 0
};

// A kernel's work rates in one fixed order: code that copies, scales, coalesces or keys kernels by their work walks
// this list, so a new rate is added here and in the places that name each rate (the importer, the power model, the
// trace formats).
enum WorkRate : std::size_t { kTensorRate, kFmaRate, kAluRate, kMemoryRate, kMemoryFillRate, kUnvectorisedRate, kWorkRates };
std::array<float, kWorkRates> work_rates(const Kernel& k);
void set_work_rates(Kernel& k, const std::array<float, kWorkRates>& r);

// Multiplies a kernel's work rates (the same work done in 1/factor of the time).
void scale_work_rates(Kernel& k, double factor);

// Launch details kept for analysis and export; not read by the replay loop.
struct LaunchShape {
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t shared_memory_bytes = 0;
  std::uint64_t bytes = 0;  // memcpy / memset size
};

struct Step {
  std::string label;       // e.g. "step3" or "ProfilerStep#12"
  std::int32_t first_kernel = -1;
  std::int32_t last_kernel = -1;
  // Host time inside the step before its first device activity (part of that activity's gap) and
  // after its last one: measured step time = lead + device span + tail.
  double lead_s = 0;
  double tail_s = 0;
};

// An activity the importer's busy union clipped (it started while another stream's activity was running): its
// recorded start (relative to the rank's origin) and duration before the clipping.
struct ClippedSpan {
  std::uint32_t kernel = 0;  // index into Rank::kernels
  double start_s = 0;
  double duration_s = 0;
};

struct Rank {
  int id = 0;
  std::string device_name;   // as the trace names it, e.g. "NVIDIA H200"
  std::vector<Kernel> kernels;
  std::vector<LaunchShape> shapes;  // parallel to kernels (may be empty)
  std::vector<Step> steps;
  double origin_epoch_ns = 0;  // absolute time of recorded t=0 (first activity start), 0 if unknown
  std::vector<double> recorded_start_s;  // recorded start of each kernel relative to origin
  std::vector<std::int64_t> correlations;  // parallel to kernels (may be empty): the trace's correlation id, -1 if none
  // Activities the busy union clipped, in kernel order (empty for a trace whose activities never overlapped): what
  // the overlap replay of NCCL kernels beside other streams reads (sim/engine/stream_overlap.hpp).
  std::vector<ClippedSpan> clipped;
};

// The host lead of a step lies inside the gap before its first activity; the rank's very first
// activity has no recorded gap before it, so there the lead is bounded only by zero.
double bounded_step_lead(const Rank& rank, const Step& step, double lead_s);

struct AnnotationSet {
  std::vector<std::uint32_t> annotations;  // indices into Workload::annotation_names
  Phase phase = Phase::other;
};

// The process group of collectives inferred from "nccl:<collective>" annotations (PyTorch 2.0 / 2.1 traces name no
// group): the job's world. Where such calls differ across the merged ranks, the merge keeps them at their recorded
// durations with a note (multi_rank.cpp) rather than refusing the import.
inline constexpr const char* kInferredWorldGroup = "world (inferred from nccl: annotations)";
// What the merge appends to such a group's name when its calls differ across ranks: the group is never simulated,
// also when a replay's export is read back.
inline constexpr const char* kCallsDifferSuffix = ", calls differ across ranks";

struct Workload {
  std::string source;                        // file it came from
  std::vector<std::string> names;            // distinct activity names
  std::vector<std::string> annotation_names;
  std::vector<AnnotationSet> annotation_sets;  // [0] is the empty set
  std::vector<Rank> ranks;
  // Multi-rank workloads: process groups (global rank ids, in ring order) and the collective calls
  // that communication kernels refer to.
  std::vector<std::vector<int>> groups;
  std::vector<std::string> group_names;  // as the trace named them (PyTorch's process group name)
  std::vector<int> group_sizes;          // members, also where the trace truncated the rank list
  std::vector<CollectiveCall> collectives;

  Workload() { annotation_sets.emplace_back(); }
  std::size_t kernel_count() const;
};

// The calls a communication kernel makes, first to last (one, or a batch of sends and receives): [begin, end) of
// Workload::collectives. Empty for a kernel that makes none.
template <typename Call>
struct CallSpan {
  Call* first = nullptr;
  Call* last = nullptr;
  Call* begin() const { return first; }
  Call* end() const { return last; }
  std::size_t size() const { return static_cast<std::size_t>(last - first); }
  bool empty() const { return first == last; }
};
inline CallSpan<const CollectiveCall> calls_of(const Workload& wl, const Kernel& k) {
  if (!k.collective) return {};
  const CollectiveCall* c = &wl.collectives[k.collective - 1];
  return {c, c + 1 + c->batched};
}
inline CallSpan<CollectiveCall> calls_of(Workload& wl, const Kernel& k) {
  if (!k.collective) return {};
  CollectiveCall* c = &wl.collectives[k.collective - 1];
  return {c, c + 1 + c->batched};
}

// The bytes an NCCL kernel of sends and receives moves (each byte sent read once, each byte received written once):
// its calls' bytes summed when every call is a send or receive the trace sizes; 0 for any other kernel (a group
// collective, an unsized call, no collective).
double transfer_bytes(const Workload& wl, const Kernel& k);
// Gives such a kernel (its work still unknown) its bytes as work: WorkSource::transfer_bytes at transfer_bytes /
// recorded_s, its whole recorded time (a kernel the busy union clipped did its work over all of it, as every rate is
// counted). The activity model prices them as a copy engine's (idle + copy_engine_pj_per_byte x bytes/s;
// models/calibration/h200-power-split.json, nccl_transfers_by_bytes). No-op for any other kernel or recorded_s <= 0.
void price_transfer_by_bytes(const Workload& wl, Kernel& k, double recorded_s);
// Whether the activity model prices a kernel's bytes at the copy engine's energy per byte (a memcpy, an NCCL transfer).
inline bool priced_as_copy(const Kernel& k) { return k.work == WorkSource::copy_engine || k.work == WorkSource::transfer_bytes; }

// Whether a kernel's work is counted everywhere (shapes, copy engine, multi_tensor_apply launch): what the activity
// model prices it by. A launch-sized elementwise kernel is not (WorkSource::launch_elementwise).
inline bool counted_work(const Kernel& k) { return k.work != WorkSource::unknown && k.work != WorkSource::launch_elementwise; }
// The memory traffic a kernel is known to demand (contention and overlap models): its counted bytes per second; 0 for
// a class-prior kernel, whose launch-sized estimate (if any) is no demand, and for an NCCL transfer, whose bytes price
// its power only: the contention model was fit with collectives' demand unknown (nothing measured it beside compute).
inline float counted_memory_tbps(const Kernel& k) {
  return counted_work(k) && k.work != WorkSource::transfer_bytes ? k.memory_tbps : 0.0f;
}

// Of the kernels' recorded time, the share with no counted work (!counted_work): what a model with an activity
// block prices by its class priors (a trace recorded without record_shapes). 0 for a workload without kernels.
double class_prior_kernel_time_share(const Workload& wl);
// Above this share a report says its figures rest on the class priors (compare's and validate's notes).
constexpr double kMostlyClassPriorShare = 0.5;

}  // namespace dvfs
