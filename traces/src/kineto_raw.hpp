#pragma once
// What the Kineto importer collects from a trace before it builds the workload (traces/src/kineto_importer.cpp),
// shared by its two readers: the checked reader (the whole document through sim/core/json_util.hpp) and the
// streaming reader (traces/src/kineto_stream.cpp: simdjson On-Demand, event by event). Internal to the importer.
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"
#include "traces/src/kernel_activity.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/simulated_args.hpp"

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dvfs::kineto {

// What an NCCL kernel's args say about its collective (PyTorch's record_param_comms fields).
struct RawCollective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;
  std::string group_name;
  std::vector<int> group_ranks;  // empty when the trace truncated the list ("[0, 1, ..., 63]")
  int group_size = 0;
  int peer = -1;
  int batched = 0;  // on a batch's first call: the calls after it, next in RawTrace::collectives (CollectiveCall::batched)
};

// A communication kernel (or record_param_comms range) that names no modelled collective.
constexpr int kNotModelled = -2;
// A coalescing group's end (a "coalesced" record): its kernel makes the group's sends and receives where they are found
// (attach_batched_transfers), else it becomes kNotModelled.
constexpr int kCoalescedEnd = -3;

// Fields ordered to pack: a trace can hold a million of these (112 bytes each) while its workload is built.
struct RawActivity {
  double ts_us, dur_us;
  long correlation;
  long external_id = -1;              // the launching operator (cpu_op) of the same External id
  const std::string* name = nullptr;  // in RawTrace::names
  double blocks_per_sm;               // < 0 when unknown
  std::uint32_t shape = 0;            // index into RawTrace::shapes (its launch shape)
  int device;  // both read within int's range
  int stream;
  ActivityKind kind;
  int collective = -1;  // index into the raw collectives; kNotModelled for a comm record we keep as a kernel (kCoalescedEnd
                        // until attach_batched_transfers decides)
  int simulated = -1;   // index into RawTrace::simulated (a dvfs-sim export's clocks and work); -1: none
};

struct Range {
  double t0_us, t1_us;
  long device;  // -1 for CPU ranges
  std::string name;
};

// Host-side record_param_comms ranges (PyTorch's c10d): their args describe the NCCL kernel launched
// inside them, for traces whose kernels do not carry the args themselves.
struct HostComm {
  double t0_us, t1_us;
  int collective;  // or kNotModelled, kCoalescedEnd
  long tid = -1;   // the host thread; -1 when the event's tid is no integer
};

// A ProcessGroupNCCL "nccl:<collective>" annotation (a user_annotation around the NCCL kernel's launch): the only
// record of a collective in traces whose record_param_comms carry no "Collective name" (PyTorch 2.0 / 2.1).
struct AnnotatedComm {
  double t0_us, t1_us;
  long tid;            // the host thread; -1 when the event's tid is no integer
  std::string name;    // as written, e.g. "nccl:all_reduce"
  double input_bytes;  // its input tensors' elements x element size; < 0 when Input Dims / Input type do not size them
};

// The bytes of an annotation's input tensors (`dims` its Input Dims, `types` its Input type, entry by entry; a 0-d
// tensor is one element): < 0 when an input is unsized (a tensor list, a scalar, an unknown type, a dimension
// beyond kMaxOperandSize) or there is none.
double annotated_input_bytes(const std::vector<std::vector<std::int64_t>>& dims, const std::vector<std::string>& types);

// Trace-wide facts outside the events: the time base, the devices, the rank of a distributed job.
struct TraceHeader {
  double base_ns = 0;
  int sm_count = 0;
  std::map<long, std::string> device_names;
  int global_rank = -1;  // PyTorch's distributedInfo; -1 when absent
  int world_size = -1;
  std::string backend;
  bool amd = false;  // a device property only ROCm writes, a warp of 64 or an AMD device name
};

// Host launches by correlation id (time and host thread), as a map whose later writes replace earlier ones, stored as
// a list: set() appends (no hashing, no node per entry), finish() sorts once, find() searches.
class LaunchTimes {
 public:
  struct Launch {
    long correlation;
    double ts_us;
    long tid;  // the host thread; -1 when the event's tid is no integer
    bool extended;  // cudaLaunchKernelExC / cuLaunchKernelEx: the launch that can ask for programmatic dependent launch
  };
  void set(long correlation, double ts_us, long tid = -1, bool extended = false) {
    entries_.push_back({correlation, ts_us, tid, extended}), finished_ = false;
  }
  // Every set() of `later` (unfinished), after this one's.
  void append(const LaunchTimes& later) {
    entries_.insert(entries_.end(), later.entries_.begin(), later.entries_.end());
    finished_ = entries_.empty();
  }
  void finish();  // after the last set(), before find()
  const double* find(long correlation) const {  // nullptr when the id has no launch
    const Launch* l = find_launch(correlation);
    return l ? &l->ts_us : nullptr;
  }
  const Launch* find_launch(long correlation) const;
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<Launch> entries_;
  bool finished_ = true;
};

// Activity names, each kept once (a trace repeats a few hundred names hundreds of thousands of times): the
// strings stay where they are while the table lives, also when it is moved.
class NameTable {
 public:
  const std::string* intern(std::string_view name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const std::string* s = &store_.emplace_back(name);
    ids_.emplace(*s, s);
    return s;
  }

 private:
  std::deque<std::string> store_;
  std::unordered_map<std::string_view, const std::string*> ids_;
};

// What one pass over the events collects.
struct RawTrace {
  std::vector<RawCollective> collectives;
  std::vector<HostComm> host_comms;
  std::vector<AnnotatedComm> annotated_comms;
  std::vector<RawActivity> acts;
  // The acts' launch shapes, apart: in the order read, then (build_workload) in the acts' sorted order, so that a
  // one-device trace's list becomes its rank's without a copy beside the activities (the import's memory peak).
  std::vector<LaunchShape> shapes;
  std::vector<SimulatedArgs> simulated;  // of the few acts that carry them (traces/src/simulated_args.hpp)
  NameTable names;  // of acts
  std::vector<Range> gpu_ranges, cpu_ranges;
  LaunchTimes launch_ts;  // correlation id -> host launch time (µs)
  OperatorIndex operators;
  bool old_schema = false;
  int global_rank = -1;
  bool rank_from_events = false;  // a comm record's "Rank" was read (while global_rank < 0)
  bool hip_runtime = false;                         // launches through hipLaunchKernel & co. (ROCm)
  std::vector<long> graph_launches;                 // correlation ids of CUDA / HIP graph launches (cudaGraphLaunch)
  std::vector<Range> operator_steps;                // ProfilerStep#N as cat "Operator"/"cpu_op" (2021 schema)
  std::map<std::string, std::size_t> not_modelled;  // comm records kept at their recorded duration, by name
  // Until the first device activity: the categories of the complete host events read, in order of appearance, with
  // their counts (at most kHostCategoriesNamed), so that a trace without any can say what it holds instead.
  std::vector<std::pair<std::string, std::size_t>> host_categories;
  // Complete events on a device (their args name a "device" or a "stream") of a category that is none of Kineto's:
  // not replayed, counted in a note. All of them, and the first kHostCategoriesNamed categories with their counts.
  std::size_t unknown_device_events = 0;
  std::vector<std::pair<std::string, std::size_t>> unknown_device_categories;
  // The profiler's own host work, which lengthens the host gaps a replay keeps: python_function ranges
  // (with_stack=True, with_modules=True) and "[memory]" instants (profile_memory=True).
  std::size_t python_function_events = 0;
  std::size_t memory_events = 0;
};
constexpr std::size_t kHostCategoriesNamed = 8;
// Adds `n` to category `cat` of a list of named counts (host_categories, unknown_device_categories); a new category
// only while fewer than kHostCategoriesNamed are named.
void count_named(std::vector<std::pair<std::string, std::size_t>>& named, std::string_view cat, std::size_t n = 1);
// The named counts as text for a message: each category quoted as JSON (one line whatever it holds, long ones cut)
// with its count, e.g. `"weird" x2, "gpu_op" x1`.
std::string named_counts_text(const std::vector<std::pair<std::string, std::size_t>>& named);
// Counts `n` host events of category `cat` in t.host_categories.
void note_host_category(RawTrace& t, std::string_view cat, std::size_t n = 1);
// A category Kineto (or its 2021 schema) writes, whether or not the importer reads it ("cuda_sync", "overhead", ...).
bool kineto_category(std::string_view cat);
// Counts a complete event of category `cat` whose args name a device or a stream, when `cat` is none of Kineto's.
void note_unknown_device_event(RawTrace& t, std::string_view cat);
// A memcpy's or memset's `bytes` over its duration (µs) as a copy engine or a fill could move them (README "Limits
// and bad input": at most kMaxActivityBytes, at most kMaxActivityBytesPerS over max(dur, 1 µs)).
bool plausible_copy_bytes(double bytes, double dur_us);
// Why plausible_copy_bytes refuses them (one line, for the importer that names the field), or "" when it does not.
std::string copy_bytes_problem(double bytes, double dur_us);

std::string lower(std::string s);
// The device activity kind of category `cat` (false: a host event); `old_schema`: the 2021 spelling.
bool kind_of(std::string_view cat, ActivityKind& kind, bool& old_schema);
// A runtime / driver call that launches a whole CUDA (or HIP) graph: its kernels carry no operator of their own.
bool is_graph_launch(std::string_view runtime_name);
// cudaLaunchKernelExC, cuLaunchKernelEx (hipLaunchKernelExC): launches whose attributes can ask for programmatic
// dependent launch, which lets the kernel start before the previous one on its stream ends (Hopper and later).
bool is_extended_launch(std::string_view runtime_name);
// The host-event categories the readers tell apart (compared as lower(cat) is): "operator" (2021 schema),
// "cpu_op", "gpu_user_annotation", "user_annotation", launches ("cuda_runtime", "cuda_driver", "runtime").
enum class HostCategory { operator_2021, cpu_op, gpu_user_annotation, user_annotation, launch, other };
HostCategory host_category_of(std::string_view cat);
// The trace-wide facts of the document's top level (events are not read).
TraceHeader read_header(const Json& doc, const std::string& file);
// One element traceEvents[i] of the document (anything that is not a complete event with a category is skipped).
void read_event(RawTrace& t, const Json& ev, const std::string& file, std::size_t i);
// Appends device activity `a` with its launch shape (RawActivity::shape set).
void add_activity(RawTrace& t, RawActivity&& a, const LaunchShape& shape);
// `t` as if the events `later` holds (read into a RawTrace of their own, from the events after t's) had been read
// into `t` itself: every list appended in order, collective indices shifted, names interned in t's table,
// later launch times and operator calls replacing earlier ones, the rank of the first comm record that gave one.
// The streaming reader's parallel batches are merged so, in document order. Not for finished traces.
void append_events(RawTrace& t, RawTrace&& later);
// After the last event: fails when there is no device activity; adds the 2021 schema's operator steps.
void finish_events(RawTrace& t, const std::string& file);
// The workload of the events read (`raw` is sorted and consumed).
Workload build_workload(RawTrace& raw, const TraceHeader& header, const Classifier& classifier, const std::string& file,
                        ImportReport* report);

}  // namespace dvfs::kineto
