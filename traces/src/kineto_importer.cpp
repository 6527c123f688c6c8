#include "traces/src/kineto_importer.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/gzip_file.hpp"
#include "traces/src/kernel_activity.hpp"
#include "traces/src/kineto_raw.hpp"
#include "traces/src/kineto_stream.hpp"
#include "traces/src/simulated_args.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <iomanip>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace dvfs::kineto {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

namespace {
// lower(text) == lower_word (a lower-case word), without making the lower-case copy.
bool lower_equals(std::string_view text, std::string_view lower_word) {
  if (text.size() != lower_word.size()) return false;
  for (std::size_t k = 0; k < text.size(); ++k)
    if (static_cast<char>(std::tolower(static_cast<unsigned char>(text[k]))) != lower_word[k]) return false;
  return true;
}
}  // namespace

bool kind_of(std::string_view cat, ActivityKind& kind, bool& old_schema) {
  old_schema = cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
  if (lower_equals(cat, "kernel")) kind = ActivityKind::kernel;
  else if (lower_equals(cat, "gpu_memcpy") || lower_equals(cat, "memcpy")) kind = ActivityKind::memcpy;
  else if (lower_equals(cat, "gpu_memset") || lower_equals(cat, "memset")) kind = ActivityKind::memset;
  else return false;
  return true;
}

HostCategory host_category_of(std::string_view cat) {
  if (lower_equals(cat, "cpu_op")) return HostCategory::cpu_op;
  if (lower_equals(cat, "cuda_runtime") || lower_equals(cat, "cuda_driver") || lower_equals(cat, "runtime")) return HostCategory::launch;
  if (lower_equals(cat, "operator")) return HostCategory::operator_2021;
  if (lower_equals(cat, "gpu_user_annotation")) return HostCategory::gpu_user_annotation;
  if (lower_equals(cat, "user_annotation")) return HostCategory::user_annotation;
  return HostCategory::other;
}

namespace {

// One range per name, spanning every range of that name, in start order. Kineto writes a device-side
// step range once per stream the step used, and a late stream's range (an NCCL kernel that ran after the
// next step had started) need not touch the others: still one step.
std::vector<Range> merge_same_name(const std::vector<const Range*>& ranges) {
  std::vector<Range> out;
  std::map<std::string, std::size_t> first;  // name -> index in out
  for (const Range* r : ranges) {
    auto [it, inserted] = first.emplace(r->name, out.size());
    if (inserted) {
      out.push_back(*r);
      continue;
    }
    out[it->second].t1_us = std::max(out[it->second].t1_us, r->t1_us);
  }
  return out;
}

constexpr long kIntMin = std::numeric_limits<int>::min(), kIntMax = std::numeric_limits<int>::max();
constexpr long kLongMin = std::numeric_limits<long>::min(), kLongMax = std::numeric_limits<long>::max();

// An integer field of a trace object (an event, its args, a device entry) named `where.key`: a number
// (a fraction is dropped), or a string whose first digits are the value ("stream 7", "GPU 0");
// `fallback` when absent or neither. A value outside [lo, hi] is an InputError naming the field.
long int_field(const Json& obj, const char* key, long fallback, const std::string& file, const std::string& where,
               long lo = kLongMin, long hi = kLongMax) {
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  const std::string field = where.empty() ? key : where + "." + key;
  if (it->is_number_float()) return checked_integer(Json(std::trunc(it->get<double>())), file, field, lo, hi);
  if (it->is_number() || (it->is_string() && it->get_ref<const std::string&>().find_first_of("0123456789") != std::string::npos))
    return checked_integer(*it, file, field, lo, hi, true);
  return fallback;
}

std::string event_field(std::size_t i) { return "traceEvents[" + std::to_string(i) + "]"; }
std::string args_field(std::size_t i) { return event_field(i) + ".args"; }

double number_field(const Json& ev, const char* key, const std::string& file, std::size_t i) {
  auto it = ev.find(key);
  if (it == ev.end() || !it->is_number())
    throw InputError(file, "traceEvents[" + std::to_string(i) + "]." + key,
                     std::string("expected a number (") + (it == ev.end() ? "missing" : json_type_name(*it)) + ")");
  const double v = it->get<double>();
  if (!(std::fabs(v) <= kMaxTraceTimeUs))
    throw InputError(file, event_field(i) + "." + key,
                     "expected a time within +-" + std::to_string(static_cast<long long>(kMaxTraceTimeUs)) + " us, got " + it->dump());
  return v;
}

void read_dim3(const Json& args, const char* key, std::uint32_t out[3], const std::string& file, std::size_t i) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_array()) return;
  const std::string field = args_field(i) + "." + key;
  for (std::size_t d = 0; d < 3 && d < it->size(); ++d)
    if ((*it)[d].is_number())
      out[d] = static_cast<std::uint32_t>(checked_integer((*it)[d], file, field + "[" + std::to_string(d) + "]", 0, 0xffffffffL));
}

// What a "Collective name" (PyTorch c10d's record_param_comms) stands for.
enum class CommName {
  collective,     // one of ours (CollectiveKind)
  not_modelled,   // a collective whose buffers differ between the root and the others (gather, scatter), or a
                  // coalescing group's end ("coalesced": its calls were recorded one by one, its kernel does
                  // them all): its kernel is kept at its recorded duration
  not_collective, // a record around no transfer: "wait" (waiting on a work handle), "init" (communicator set-up)
  unknown,
};

// NCCL collective names as PyTorch writes them ("allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced",
// "all_to_allv", "_reduce_oop", "recvAnySource", ...).
CommName comm_name_of(const std::string& name, CollectiveKind& out) {
  std::string n;
  for (char c : name)
    if (c != '_') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (n == "wait" || n == "init") return CommName::not_collective;
  if (n == "gather" || n == "scatter" || n == "coalesced") return CommName::not_modelled;
  if (has("allreduce") || n == "barrier") out = CollectiveKind::all_reduce;
  else if (has("reducescatter")) out = CollectiveKind::reduce_scatter;
  else if (has("allgather")) out = CollectiveKind::all_gather;
  else if (has("alltoall")) out = CollectiveKind::all_to_all;
  else if (has("broadcast") || n == "reduce" || n == "reduceoop") out = CollectiveKind::broadcast;
  else if (n == "send") out = CollectiveKind::send;
  else if (n == "recv" || n == "recvanysource") out = CollectiveKind::recv;
  else return CommName::unknown;
  return CommName::collective;
}

int dtype_bytes(const std::string& t) {
  static const std::pair<const char*, int> sizes[] = {
      {"Float", 4}, {"float32", 4}, {"BFloat16", 2}, {"bfloat16", 2}, {"Half", 2}, {"float16", 2}, {"Double", 8},
      {"Int", 4}, {"Long", 8}, {"Short", 2}, {"Byte", 1}, {"Char", 1}, {"Bool", 1}, {"Float8_e4m3fn", 1},
      {"Float8_e5m2", 1}, {"ComplexFloat", 8}};
  for (const auto& [name, size] : sizes)
    if (t == name) return size;
  return 0;
}

// "[0, 1, 2, 3]" -> {0, 1, 2, 3}; a list truncated with "..." -> {} (resolved across ranks later).
std::vector<int> parse_rank_list(const Json& j, const std::string& file, const std::string& field) {
  std::vector<int> out;
  if (j.is_array()) {
    for (std::size_t k = 0; k < j.size(); ++k)
      if (j[k].is_number_integer()) out.push_back(static_cast<int>(checked_integer(j[k], file, field + "[" + std::to_string(k) + "]", 0, kIntMax)));
    return out;
  }
  if (!j.is_string()) return out;
  const std::string& s = j.get_ref<const std::string&>();
  if (s.find("...") != std::string::npos) return {};
  long cur = -1;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
      if (cur > kIntMax) throw InputError(file, field, "expected ranks in [0, " + std::to_string(kIntMax) + "]");
    } else if (cur >= 0) {
      out.push_back(static_cast<int>(cur)), cur = -1;
    }
  }
  if (cur >= 0) out.push_back(static_cast<int>(cur));
  return out;
}

// `text` cut to `n` characters, for an error message.
std::string clipped(const std::string& text, std::size_t n = 60) { return text.size() > n ? text.substr(0, n) + "..." : text; }

// What the record's "Collective name" stands for (`kind` set for a collective); an unknown name is an error.
CommName comm_record(const Json& args, const std::string& file, const std::string& where, CollectiveKind& kind) {
  const Json& name = args["Collective name"];
  const CommName what = name.is_string() ? comm_name_of(name.get<std::string>(), kind) : CommName::unknown;
  if (what == CommName::unknown)
    throw InputError(file, where + ".Collective name",
                     "expected an NCCL collective (allreduce, allgather, reduce_scatter, all_to_all, broadcast, send, recv), got " +
                         clipped(name.dump()));
  return what;
}

RawCollective read_collective(const Json& args, CollectiveKind kind, const std::string& file, const std::string& where) {
  RawCollective c;
  c.kind = kind;
  const std::string dtype = args.contains("dtype") && args["dtype"].is_string() ? args["dtype"].get<std::string>() : "";
  const int size = dtype_bytes(dtype);
  if (size == 0) throw InputError(file, where + ".dtype", "expected a tensor type such as Float or BFloat16, got \"" + dtype + "\"");
  auto nelems = [&](const char* key) { return static_cast<double>(int_field(args, key, 0, file, where, 0, kLongMax)); };
  const double in = nelems("In msg nelems"), out = nelems("Out msg nelems");
  // The buffer every member holds (collectives.hpp): all-gather's output, reduce-scatter's input, i.e. the
  // larger of the two counts.
  c.bytes = size * std::max(in, out);
  if (c.bytes > kMaxCollectiveBytes)
    throw InputError(file, where + (out > in ? ".Out msg nelems" : ".In msg nelems"),
                     "expected a buffer of at most 1e15 bytes (README \"Limits and bad input\"), got " +
                         std::to_string(static_cast<long long>(std::max(in, out))) + " elements of " + std::to_string(size) + " bytes");
  c.group_name = args.contains("Process Group Name") ? (args["Process Group Name"].is_string() ? args["Process Group Name"].get<std::string>()
                                                                                               : args["Process Group Name"].dump())
                                                     : "";
  c.group_size = static_cast<int>(int_field(args, "Group size", 0, file, where, 0, kMaxGroupSize));
  if (args.contains("Process Group Ranks")) c.group_ranks = parse_rank_list(args["Process Group Ranks"], file, where + ".Process Group Ranks");
  if (c.group_ranks.size() > static_cast<std::size_t>(kMaxGroupSize))
    throw InputError(file, where + ".Process Group Ranks", "expected at most " + std::to_string(kMaxGroupSize) + " ranks in a group");
  if (c.group_ranks.empty() && c.group_size > 0 && args.contains("Global rank start") && args.contains("Global rank stride")) {
    // A truncated list: its ranks are start + i x stride when the group is strided (PyTorch writes both).
    const long start = int_field(args, "Global rank start", -1, file, where, kIntMin, kIntMax);
    const long stride = int_field(args, "Global rank stride", 0, file, where, kIntMin, kIntMax);
    if (start >= 0 && stride > 0 && start + (c.group_size - 1L) * stride > kIntMax)
      throw InputError(file, where + ".Global rank stride", "expected the group's last rank (start + (size - 1) x stride) to be at most " + std::to_string(kIntMax));
    if (start >= 0 && stride > 0)
      for (int k = 0; k < c.group_size; ++k) c.group_ranks.push_back(static_cast<int>(start + k * stride));
  }
  if (c.kind == CollectiveKind::send) c.peer = static_cast<int>(int_field(args, "Dst Rank", -1, file, where, kIntMin, kIntMax));
  if (c.kind == CollectiveKind::recv) c.peer = static_cast<int>(int_field(args, "Src Rank", -1, file, where, kIntMin, kIntMax));
  if (c.group_size < 1 && c.group_ranks.empty())
    throw InputError(file, where + ".Group size", "expected the process group's size or its ranks");
  if (c.group_size < 1) c.group_size = static_cast<int>(c.group_ranks.size());
  return c;
}

const Json& trace_events(const Json& doc, const std::string& file) {
  const Json* events = nullptr;
  if (doc.is_object() && doc.contains("traceEvents")) events = &doc["traceEvents"];
  else if (doc.is_array()) events = &doc;
  if (!events || !events->is_array())
    throw InputError(file, "traceEvents", "missing: expected a Chrome trace object with a \"traceEvents\" array");
  return *events;
}

bool amd_device_name(const std::string& name) {
  const std::string n = lower(name);
  return n.find("amd") != std::string::npos || n.find("instinct") != std::string::npos || n.find("radeon") != std::string::npos;
}

// distributedInfo: the rank, the job's size and its backend. A rank below 0 (-1 was read as "no rank"), a world
// size below 1 or a rank outside it is refused: the rank decides which GPU of the job the trace is.
void read_distributed_info(const Json& doc, const std::string& file, TraceHeader& h) {
  if (!doc.is_object() || !doc.contains("distributedInfo")) return;
  const Json& d = doc["distributedInfo"];
  if (!d.is_object()) throw InputError(file, "distributedInfo", std::string("expected an object, got ") + json_type_name(d));
  if (d.contains("rank")) h.global_rank = static_cast<int>(checked_integer(d["rank"], file, "distributedInfo.rank", 0, kIntMax));
  if (d.contains("world_size"))
    h.world_size = static_cast<int>(checked_integer(d["world_size"], file, "distributedInfo.world_size", 1, kIntMax));
  if (h.global_rank >= 0 && h.world_size > 0 && h.global_rank >= h.world_size)  // multi_rank.cpp's words
    throw InputError(file, "distributedInfo.rank",
                     "rank " + std::to_string(h.global_rank) + " is outside the job's world size " + std::to_string(h.world_size));
  if (d.contains("backend") && d["backend"].is_string()) h.backend = d["backend"].get<std::string>();
}

// deviceProperties: each device's name, SM count and the marks of an AMD GPU. Anything but an array of objects is
// refused (it was skipped: the SM fill then fell back to 1 without a word).
void read_device_properties(const Json& doc, const std::string& file, TraceHeader& h) {
  if (!doc.is_object() || !doc.contains("deviceProperties")) return;
  const Json& props = doc["deviceProperties"];
  if (!props.is_array())
    throw InputError(file, "deviceProperties", std::string("expected an array of device objects, got ") + json_type_name(props));
  for (std::size_t k = 0; k < props.size(); ++k) {
    const Json& d = props[k];
    const std::string where = "deviceProperties[" + std::to_string(k) + "]";
    if (!d.is_object()) throw InputError(file, where, std::string("expected a device object, got ") + json_type_name(d));
    long id = int_field(d, "id", 0, file, where);
    if (d.contains("name") && d["name"].is_string()) h.device_names[id] = d["name"].get<std::string>();
    if (d.contains("numSms") && d["numSms"].is_number()) h.sm_count = static_cast<int>(int_field(d, "numSms", 0, file, where, 0, kIntMax));
    h.amd = h.amd || d.contains("maxSharedMemoryPerMultiProcessor") || (d.contains("warpSize") && d["warpSize"] == 64) ||
            (d.contains("name") && d["name"].is_string() && amd_device_name(d["name"].get<std::string>()));
  }
}

}  // namespace

TraceHeader read_header(const Json& doc, const std::string& file) {
  TraceHeader h;
  // The epoch of the trace's clock: optional, but when written it must be one (a string or a negative number was
  // dropped, and a recording then said it was "missing")
  if (doc.is_object() && doc.contains("baseTimeNanoseconds")) {
    const Json& b = doc["baseTimeNanoseconds"];
    if (!b.is_number() || !(b.get<double>() >= 0) || b.get<double>() > kMaxTraceTimeUs * 1e3)
      throw InputError(file, "baseTimeNanoseconds", "expected the trace clock's epoch in nanoseconds (a number from 0 to 1e20), got " + b.dump());
    h.base_ns = b.get<double>();
  }
  read_device_properties(doc, file, h);
  // A rank of a distributed job names itself (PyTorch's distributedInfo); NCCL kernels name their groups
  // by global rank.
  read_distributed_info(doc, file, h);
  return h;
}

namespace {

// A "Collective name" record (kernel args or a record_param_comms range): the index of its collective, or
// kNotModelled / kCoalescedEnd / -1 (a wait or init: no transfer).
int add_comm_record(RawTrace& t, const Json& args, const std::string& file, const std::string& where) {
  CollectiveKind kind = CollectiveKind::all_reduce;
  const CommName what = comm_record(args, file, where, kind);
  // Checked wherever present, so that both readers refuse a negative Rank alike (-1 would read as "no rank"; the
  // streaming reader reads the records before it sees distributedInfo).
  const long rank = int_field(args, "Rank", -1, file, where, 0, kIntMax);
  // A send's or receive's "Rank" is its peer's rank in the group (PyTorch's profiler writes the peer's global rank
  // as "Dst Rank" / "Src Rank" from it): never the trace's own.
  if (t.global_rank < 0 && !(what == CommName::collective && is_transfer(kind))) {
    t.global_rank = static_cast<int>(rank);
    t.rank_from_events = true;
  }
  if (what == CommName::not_collective) return -1;
  if (what == CommName::not_modelled) {
    // a coalescing group's end is counted once its kernel is known to keep its time (attach_batched_transfers)
    if (args["Collective name"] == "coalesced") return kCoalescedEnd;
    ++t.not_modelled[args["Collective name"].get<std::string>()];
    return kNotModelled;
  }
  t.collectives.push_back(read_collective(args, kind, file, where));
  return static_cast<int>(t.collectives.size()) - 1;
}

// A kernel's "Batched calls" (dvfs-sim's Kineto export of a batch: trace_export.cpp): the batch's sends and receives,
// each a record as record_param_comms writes it. Returns the first's index, its batched count set; the list must
// hold sends and receives only.
int add_batched_calls(RawTrace& t, const Json& args, const std::string& file, std::size_t i) {
  const std::string field = args_field(i) + ".Batched calls";
  if (args.contains("Collective name") && args["Collective name"] != "coalesced")
    throw InputError(file, args_field(i) + ".Collective name",
                     "expected \"coalesced\" beside \"Batched calls\" (a batch's kernel), got " + clipped(args["Collective name"].dump()));
  const Json& list = args["Batched calls"];
  if (!list.is_array() || list.empty() || list.size() > static_cast<std::size_t>(kIntMax))
    throw InputError(file, field, std::string("expected a list of the batch's sends and receives, got ") + json_type_name(list));
  std::vector<RawCollective> calls;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string where = field + "[" + std::to_string(k) + "]";
    CollectiveKind kind = CollectiveKind::all_reduce;
    if (!list[k].is_object() || !list[k].contains("Collective name") || comm_record(list[k], file, where, kind) != CommName::collective || !is_transfer(kind))
      throw InputError(file, where, "expected a send or receive record (\"Collective name\" send or recv)");
    calls.push_back(read_collective(list[k], kind, file, where));
  }
  const int first = static_cast<int>(t.collectives.size());
  for (RawCollective& c : calls) t.collectives.push_back(std::move(c));
  t.collectives[static_cast<std::size_t>(first)].batched = static_cast<int>(calls.size()) - 1;
  return first;
}

// A memcpy's or memset's bytes, refused beyond what any copy engine or fill moves (copy_bytes_problem).
void check_copy_bytes(double bytes, double dur_us, const std::string& file, std::size_t i) {
  const std::string problem = copy_bytes_problem(bytes, dur_us);
  if (!problem.empty()) throw InputError(file, args_field(i) + ".bytes", problem);
}

// A device activity (kernel, memcpy, memset) and, for an NCCL kernel with collective args, its collective.
void add_device_activity(RawTrace& t, const Json& ev, const Json& args, ActivityKind kind, const std::string& file, std::size_t i) {
  RawActivity a;
  a.ts_us = number_field(ev, "ts", file, i);
  a.dur_us = number_field(ev, "dur", file, i);
  if (a.dur_us < 0)
    throw InputError(file, "traceEvents[" + std::to_string(i) + "].dur", "expected a duration >= 0");
  if (a.dur_us * 1e-6 > kMaxTraceSpanS)
    throw InputError(file, event_field(i) + ".dur",
                     "expected a duration of at most " + std::to_string(static_cast<long>(kMaxTraceSpanS)) + " s (" +
                         std::to_string(static_cast<long>(kMaxTraceSpanS * 1e6)) + " us), got " + ev["dur"].dump());
  auto name_it = ev.find("name");
  if (name_it == ev.end() || !name_it->is_string())
    throw InputError(file, "traceEvents[" + std::to_string(i) + "].name", "expected a kernel name string");
  a.name = t.names.intern(name_it->get_ref<const std::string&>());
  a.kind = kind;
  const std::string where = args_field(i);
  // A device index below 0 made the kernel a GPU of its own ("device": -1 replayed as a second GPU).
  a.device = static_cast<int>(args.contains("device") ? int_field(args, "device", 0, file, where, 0, kIntMax)
                                                      : int_field(ev, "pid", 0, file, event_field(i), kIntMin, kIntMax));
  a.stream = static_cast<int>(args.contains("stream") ? int_field(args, "stream", 0, file, where, kIntMin, kIntMax)
                                                      : int_field(ev, "tid", 0, file, event_field(i), kIntMin, kIntMax));
  a.correlation = int_field(args, "correlation", -1, file, where);
  a.external_id = args.contains("External id") ? int_field(args, "External id", -1, file, where)
                                               : int_field(args, "external id", -1, file, where);  // 2021 schema
  LaunchShape shape;
  read_dim3(args, "grid", shape.grid, file, i);
  read_dim3(args, "block", shape.block, file, i);
  shape.registers_per_thread = static_cast<std::uint32_t>(int_field(args, "registers per thread", 0, file, where, 0, 0xffffffffL));
  shape.shared_memory_bytes = static_cast<std::uint32_t>(int_field(args, "shared memory", 0, file, where, 0, 0xffffffffL));
  shape.bytes = static_cast<std::uint64_t>(int_field(args, "bytes", 0, file, where, 0, kLongMax));
  if (kind != ActivityKind::kernel) check_copy_bytes(static_cast<double>(shape.bytes), a.dur_us, file, i);
  a.blocks_per_sm = -1;
  if (args.contains("blocks per SM") && args["blocks per SM"].is_number()) a.blocks_per_sm = args["blocks per SM"].get<double>();
  const SimulatedArgs simulated = read_simulated_args(args, file, i);
  if (simulated.sm_mhz > 0 || simulated.mem_mhz > 0 || simulated.has_work) {
    a.simulated = static_cast<int>(t.simulated.size());
    t.simulated.push_back(simulated);
  }
  if (kind == ActivityKind::kernel && args.contains("Batched calls")) {
    a.collective = add_batched_calls(t, args, file, i);
  } else if (kind == ActivityKind::kernel && args.contains("Collective name")) {
    const int c = add_comm_record(t, args, file, args_field(i));
    a.collective = c == -1 ? kNotModelled : c;  // a kernel is never a wait: kept as it ran
  }
  add_activity(t, std::move(a), shape);
}

// A host or device range: false when the event lacks a name, ts or dur (a malformed annotation loses only
// itself; kernels are what we cannot lose).
bool range_of(const Json& ev, Range& r) {
  auto name_it = ev.find("name");
  auto ts = ev.find("ts");
  auto dur = ev.find("dur");
  if (name_it == ev.end() || !name_it->is_string() || ts == ev.end() || !ts->is_number() || dur == ev.end() || !dur->is_number())
    return false;
  r = Range{ts->get<double>(), ts->get<double>() + dur->get<double>(), -1, name_it->get<std::string>()};
  return true;
}

bool is_profiler_step(const Json& ev) {
  auto name_it = ev.find("name");
  return name_it != ev.end() && name_it->is_string() && name_it->get_ref<const std::string&>().rfind("ProfilerStep#", 0) == 0;
}

// An event's host thread id, -1 when it is no integer (as the streaming reader).
long host_tid(const Json& ev) {
  auto it = ev.find("tid");
  return it != ev.end() && it->is_number_integer() ? it->get<long>() : -1;
}

// Where an operator with shapes (`Input Dims` and an integer External id, as OperatorIndex::add reads them) ran.
void add_operator_span(RawTrace& t, const Json& ev, const Json& args) {
  auto dims = args.find("Input Dims");
  auto id = args.find("External id");
  auto ts = ev.find("ts");
  auto dur = ev.find("dur");
  if (dims == args.end() || !dims->is_array() || id == args.end() || !id->is_number_integer() || ts == ev.end() ||
      !ts->is_number() || dur == ev.end() || !dur->is_number())
    return;
  const double t0 = ts->get<double>();
  t.operators.add_span({t0, t0 + dur->get<double>(), host_tid(ev), id->get<long>()});
}

// A "nccl:<collective>" annotation with the bytes of its inputs, where Input Dims / Input type size them.
void add_annotated_comm(RawTrace& t, const Range& r, long tid, const Json& args) {
  std::vector<std::vector<std::int64_t>> dims;
  std::vector<std::string> types;
  const auto d = args.find("Input Dims");
  const auto ty = args.find("Input type");
  bool integral = d != args.end() && ty != args.end() && d->is_array() && ty->is_array();
  if (integral) {
    for (const Json& entry : *d) {
      dims.emplace_back();
      if (!entry.is_array()) integral = false;
      else
        for (const Json& x : entry) {
          if (!x.is_number_integer()) integral = false;
          else dims.back().push_back(x.is_number_unsigned() ? static_cast<std::int64_t>(std::min<std::uint64_t>(x.get<std::uint64_t>(), kMaxOperandSize + 1))
                                                            : x.get<std::int64_t>());  // + 1: beyond any size, as the streaming reader's
        }
    }
    for (const Json& x : *ty) types.push_back(x.is_string() ? x.get<std::string>() : std::string());
  }
  t.annotated_comms.push_back({r.t0_us, r.t1_us, tid, r.name, integral ? annotated_input_bytes(dims, types) : -1.0});
}

// A host-side event (lower-case category `lc`): a record_param_comms range, an operator with input
// shapes, a user annotation range, or a launch (its time, by correlation id).
void add_host_event(RawTrace& t, const Json& ev, const Json& args, const std::string& lc, const std::string& file, std::size_t i) {
  // The 2021 schema writes the profiler's steps as operators (cat "Operator"); some later ones as cpu_op.
  if ((lc == "operator" || lc == "cpu_op") && is_profiler_step(ev)) {
    Range r;
    if (range_of(ev, r)) t.operator_steps.push_back(std::move(r));
    return;
  }
  if (lc == "cpu_op" && args.contains("Collective name") && ev.contains("name") && ev["name"] == "record_param_comms" &&
      ev.contains("ts") && ev["ts"].is_number() && ev.contains("dur") && ev["dur"].is_number()) {
    // A wait or init launches nothing: only the ranges that launch a kernel are kept to attach it to.
    const int c = add_comm_record(t, args, file, args_field(i));
    if (c != -1) t.host_comms.push_back({ev["ts"].get<double>(), ev["ts"].get<double>() + ev["dur"].get<double>(), c, host_tid(ev)});
    return;
  }
  // operators with input shapes (record_shapes=True): what their kernels compute; mid-2021 schemas write them as
  // cat "Operator" already spelling it "Input Dims"
  if (lc == "cpu_op" || (lc == "operator" && args.contains("Input Dims"))) {
    auto name_it = ev.find("name");
    if (name_it != ev.end() && name_it->is_string()) {
      t.operators.add(name_it->get_ref<const std::string&>(), args);
      add_operator_span(t, ev, args);
    }
    return;
  }
  if (lc == "operator" && args.contains("Input dims")) {  // the 2021 schema's operators spell it "Input dims"
    auto name_it = ev.find("name");
    if (name_it == ev.end() || !name_it->is_string()) return;
    Json renamed = args;
    renamed["Input Dims"] = renamed["Input dims"];
    t.operators.add(name_it->get_ref<const std::string&>(), renamed);
    add_operator_span(t, ev, renamed);
    return;
  }
  if (lc == "gpu_user_annotation" || lc == "user_annotation") {
    Range r;
    if (!range_of(ev, r)) return;
    if (lc == "gpu_user_annotation") {
      r.device = args.contains("device") ? int_field(args, "device", 0, file, args_field(i)) : int_field(ev, "pid", 0, file, event_field(i));
      t.gpu_ranges.push_back(std::move(r));
    } else {
      if (starts_with(r.name, "nccl:")) add_annotated_comm(t, r, host_tid(ev), args);
      t.cpu_ranges.push_back(std::move(r));
    }
  } else if ((lc == "cuda_runtime" || lc == "cuda_driver" || lc == "runtime") && args.contains("correlation")) {
    auto name_it = ev.find("name");
    if (name_it != ev.end() && name_it->is_string() && name_it->get_ref<const std::string&>().rfind("hip", 0) == 0) t.hip_runtime = true;
    if (name_it != ev.end() && name_it->is_string() && is_graph_launch(name_it->get_ref<const std::string&>()))
      t.graph_launches.push_back(int_field(args, "correlation", -1, file, args_field(i)));
    auto ts = ev.find("ts");
    if (ts != ev.end() && ts->is_number())
      t.launch_ts.set(int_field(args, "correlation", -1, file, args_field(i)), ts->get<double>(), host_tid(ev),
                      name_it != ev.end() && name_it->is_string() && is_extended_launch(name_it->get_ref<const std::string&>()));
  }
}

}  // namespace

double annotated_input_bytes(const std::vector<std::vector<std::int64_t>>& dims, const std::vector<std::string>& types) {
  if (dims.empty() || dims.size() != types.size()) return -1;
  double bytes = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const int size = element_bytes(types[i]);
    if (size == 0) return -1;  // a tensor list, a scalar ("TensorList", "Scalar") or an unknown type
    double b = size;           // a 0-d tensor (Input Dims []): one element
    for (std::int64_t d : dims[i]) {
      if (d < 0 || d > kMaxOperandSize) return -1;  // as the operators' shapes (add_operator): beyond, not a size
      b *= static_cast<double>(d);
    }
    bytes += b;
  }
  return bytes > kMaxCollectiveBytes ? -1 : bytes;
}

bool is_extended_launch(std::string_view n) {
  return starts_with(n, "cudaLaunchKernelEx") || starts_with(n, "cuLaunchKernelEx") || starts_with(n, "hipLaunchKernelEx");
}

bool is_graph_launch(std::string_view n) {
  return starts_with(n, "cudaGraphLaunch") || starts_with(n, "cuGraphLaunch") || starts_with(n, "hipGraphLaunch");
}

void add_activity(RawTrace& t, RawActivity&& a, const LaunchShape& shape) {
  a.shape = static_cast<std::uint32_t>(t.shapes.size());
  t.shapes.push_back(shape);
  t.acts.push_back(std::move(a));
}

void count_named(std::vector<std::pair<std::string, std::size_t>>& named, std::string_view cat, std::size_t n) {
  for (auto& [name, count] : named)
    if (name == cat) return void(count += n);
  if (named.size() < kHostCategoriesNamed) named.emplace_back(cat, n);
}

std::string named_counts_text(const std::vector<std::pair<std::string, std::size_t>>& named) {
  std::string text;
  for (const auto& [cat, n] : named)
    text += (text.empty() ? "" : ", ") + Json(cat.size() > 40 ? cat.substr(0, 40) + "..." : cat).dump() + " x" + std::to_string(n);
  return text;
}

void note_host_category(RawTrace& t, std::string_view cat, std::size_t n) { count_named(t.host_categories, cat, n); }

// A complete ("X") event with a category; a device activity of another phase is refused, any other event skipped.
void read_event(RawTrace& t, const Json& ev, const std::string& file, std::size_t i) {
  if (!ev.is_object()) return;
  auto cat_it = ev.find("cat");
  if (cat_it == ev.end() || !cat_it->is_string()) return;
  const std::string& cat = cat_it->get_ref<const std::string&>();
  auto ph = ev.find("ph");
  const bool complete = ph == ev.end() || (ph->is_string() && ph->get_ref<const std::string&>() == "X");
  ActivityKind kind;
  bool old = false;
  const bool device = kind_of(cat, kind, old);
  // Kineto writes every device activity as one complete event; begin/end pairs, instants or counters of a device
  // category would have no duration to replay, so they are refused rather than dropped
  if (device && !complete)
    throw InputError(file, event_field(i) + ".ph",
                     "expected \"X\" (a complete event with ts and dur) for a device activity of category " + Json(cat).dump() + ", got " +
                         ph->dump());
  if (!complete && ph->is_string()) {  // host-side flows, instants and counters: only profile_memory's are counted
    auto name_it = ev.find("name");
    if (cat == "cpu_instant_event" && name_it != ev.end() && name_it->is_string() && name_it->get_ref<const std::string&>() == "[memory]")
      ++t.memory_events;
    return;
  }

  const Json empty = Json::object();
  auto args_it = ev.find("args");
  const Json& args = (args_it != ev.end() && args_it->is_object()) ? *args_it : empty;
  if (device) {
    t.old_schema = t.old_schema || old;
    add_device_activity(t, ev, args, kind, file, i);
    return;
  }
  if (t.acts.empty()) note_host_category(t, cat);
  if (cat == "python_function") return void(++t.python_function_events);
  if (host_category_of(cat) == HostCategory::other && (args.contains("device") || args.contains("stream")))
    note_unknown_device_event(t, cat);
  add_host_event(t, ev, args, lower(cat), file, i);
}

bool kineto_category(std::string_view cat) {
  // libkineto's ActivityType names (2.x), the 2021 schema's, the trace's own "Trace" span, and the phase ranges of
  // dvfs-sim's own export (docs/trace-export.md: "dvfs_phase", args naming the device).
  static constexpr std::string_view known[] = {
      "cpu_op", "user_annotation", "gpu_user_annotation", "gpu_memcpy", "gpu_memset", "kernel", "external_correlation",
      "cuda_runtime", "cuda_driver", "cpu_instant_event", "python_function", "overhead", "cuda_sync", "glow_runtime",
      "cuda_profiler_range", "mtia_runtime", "mtia_ccp_events", "mtia_insight", "hpu_op", "xpu_runtime", "xpu_driver",
      "collective_comm", "privateuse1_runtime", "privateuse1_driver", "gpu_pm_counter", "runtime", "operator", "memcpy",
      "memset", "trace", "dvfs_phase"};
  for (std::string_view k : known)
    if (lower_equals(cat, k)) return true;
  return false;
}

void note_unknown_device_event(RawTrace& t, std::string_view cat) {
  if (kineto_category(cat)) return;
  ++t.unknown_device_events;
  count_named(t.unknown_device_categories, cat);
}

bool plausible_copy_bytes(double bytes, double dur_us) {
  return bytes <= kMaxActivityBytes && bytes <= kMaxActivityBytesPerS * std::max(dur_us, kMinRateDurationUs) * 1e-6;
}

std::string copy_bytes_problem(double bytes, double dur_us) {
  if (plausible_copy_bytes(bytes, dur_us)) return "";
  if (bytes > kMaxActivityBytes)
    return printf_text("expected at most %.0e bytes in one copy or fill (1 PB; a GPU holds ~0.2 TB), got %.0f", kMaxActivityBytes,
                       bytes);
  char msg[320];
  std::snprintf(msg, sizeof msg,
                "expected bytes a copy or fill can move in its dur (at most %.0e B/s over max(dur, %g us); HBM moves < 1e13 B/s), "
                "got %.0f bytes in %g us (%.3g B/s)",
                kMaxActivityBytesPerS, kMinRateDurationUs, bytes, dur_us, bytes / (std::max(dur_us, kMinRateDurationUs) * 1e-6));
  return msg;
}

void append_events(RawTrace& t, RawTrace&& later) {
  const int shift = static_cast<int>(t.collectives.size());
  const int simulated_shift = static_cast<int>(t.simulated.size());
  const auto shape_shift = static_cast<std::uint32_t>(t.shapes.size());
  auto moved = [](auto& into, auto& from) {
    if (into.empty()) into = std::move(from);
    else into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  for (RawActivity& a : later.acts) {
    a.name = t.names.intern(*a.name);
    if (a.collective >= 0) a.collective += shift;
    if (a.simulated >= 0) a.simulated += simulated_shift;
    a.shape += shape_shift;
  }
  for (HostComm& h : later.host_comms)
    if (h.collective >= 0) h.collective += shift;
  if (t.acts.empty())  // what `later` read before its first device activity follows what `t` read
    for (const auto& [cat, n] : later.host_categories) note_host_category(t, cat, n);
  moved(t.collectives, later.collectives);
  moved(t.host_comms, later.host_comms);
  moved(t.annotated_comms, later.annotated_comms);
  moved(t.acts, later.acts);
  moved(t.shapes, later.shapes);
  moved(t.simulated, later.simulated);
  moved(t.gpu_ranges, later.gpu_ranges);
  moved(t.cpu_ranges, later.cpu_ranges);
  moved(t.operator_steps, later.operator_steps);
  t.launch_ts.append(later.launch_ts);
  t.operators.merge(std::move(later.operators));
  t.old_schema = t.old_schema || later.old_schema;
  t.hip_runtime = t.hip_runtime || later.hip_runtime;
  moved(t.graph_launches, later.graph_launches);
  if (t.global_rank < 0 && later.rank_from_events) t.global_rank = later.global_rank, t.rank_from_events = true;
  for (const auto& [name, n] : later.not_modelled) t.not_modelled[name] += n;
  t.python_function_events += later.python_function_events;
  t.memory_events += later.memory_events;
  t.unknown_device_events += later.unknown_device_events;  // named as one pass would have named them
  for (const auto& [cat, n] : later.unknown_device_categories) count_named(t.unknown_device_categories, cat, n);
}

void LaunchTimes::finish() {
  if (finished_) return;
  // Ids mostly arrive in order; equal ids keep their order, so the last one written is the last of its run.
  std::stable_sort(entries_.begin(), entries_.end(), [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  std::size_t out = 0;
  for (std::size_t k = 0; k < entries_.size(); ++k) {
    if (k + 1 < entries_.size() && entries_[k + 1].correlation == entries_[k].correlation) continue;
    entries_[out++] = entries_[k];
  }
  entries_.resize(out);
  finished_ = true;
}

const LaunchTimes::Launch* LaunchTimes::find_launch(long correlation) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), correlation, [](const Launch& e, long id) { return e.correlation < id; });
  return it != entries_.end() && it->correlation == correlation ? &*it : nullptr;
}

void finish_events(RawTrace& t, const std::string& file) {
  if (t.acts.empty()) {
    const std::string found = named_counts_text(t.host_categories);  // what the trace holds instead (a CPU-only rank, ...)
    throw InputError(file, "traceEvents",
                     "no device activity: expected events with cat \"kernel\", \"gpu_memcpy\" or \"gpu_memset\" "
                     "(or \"Kernel\"/\"Memcpy\"/\"Memset\" in the 2021 schema)" +
                         (found.empty() ? std::string() : "; the categories of its complete events: " + found));
  }
  // Steps written as operators mark the steps only where no user_annotation range does (some traces have both).
  const bool annotated = std::any_of(t.cpu_ranges.begin(), t.cpu_ranges.end(),
                                     [](const Range& r) { return r.name.rfind("ProfilerStep#", 0) == 0; });
  if (!annotated) t.cpu_ranges.insert(t.cpu_ranges.end(), t.operator_steps.begin(), t.operator_steps.end());
}

namespace {

// One pass over the events of the whole document.
RawTrace read_events(const Json& events, const std::string& file, int global_rank) {
  RawTrace t;
  t.global_rank = global_rank;
  for (std::size_t i = 0; i < events.size(); ++i) read_event(t, events[i], file, i);
  finish_events(t, file);
  return t;
}

// A device whose activities span more than kMaxTraceSpanS is refused: replaying it would take hours and its
// timeline gigabytes (`acts` sorted by device, then start).
// The activities by device, then start (stable: equal starts keep the order read), and their launch shapes put in
// the same order in place (each shape moved once, along the permutation's cycles).
void sort_activities(RawTrace& raw) {
  std::stable_sort(raw.acts.begin(), raw.acts.end(), [](const RawActivity& a, const RawActivity& b) {
    return a.device != b.device ? a.device < b.device : a.ts_us < b.ts_us;
  });
  std::vector<bool> placed(raw.acts.size());
  for (std::size_t start = 0; start < raw.acts.size(); ++start) {
    if (placed[start]) continue;
    const LaunchShape first = raw.shapes[start];
    std::size_t at = start;
    for (;;) {
      placed[at] = true;
      const std::size_t from = raw.acts[at].shape;
      raw.acts[at].shape = static_cast<std::uint32_t>(at);
      if (from == start) {
        raw.shapes[at] = first;
        break;
      }
      raw.shapes[at] = raw.shapes[from];
      at = from;
    }
  }
}

void check_span(const std::vector<RawActivity>& acts, const std::string& file) {
  for (std::size_t begin = 0, end = 0; begin < acts.size(); begin = end) {
    double last_end = acts[begin].ts_us + acts[begin].dur_us;
    for (end = begin; end < acts.size() && acts[end].device == acts[begin].device; ++end)
      last_end = std::max(last_end, acts[end].ts_us + acts[end].dur_us);
    const double span_s = (last_end - acts[begin].ts_us) * 1e-6;
    if (span_s > kMaxTraceSpanS) {
      char msg[256];
      std::snprintf(msg, sizeof msg, "device %ld's activities span %.6g s (ts %.17g to %.17g us); expected at most %.0f s in one trace",
                    static_cast<long>(acts[begin].device), span_s, acts[begin].ts_us, last_end, kMaxTraceSpanS);
      throw InputError(file, "traceEvents[].ts", msg);
    }
  }
}

// An NCCL kernel: its name holds "nccl" in any case. The passes below ask it of every kernel, so it compares in place
// rather than lower-casing a copy of each name.
bool nccl_kernel(const RawActivity& a) {
  if (a.kind != ActivityKind::kernel) return false;
  constexpr std::string_view nccl = "nccl";
  const std::string& n = *a.name;
  return std::search(n.begin(), n.end(), nccl.begin(), nccl.end(),
                     [](char c, char w) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))) == w; }) != n.end();
}

// An NCCL kernel that no record has given a collective yet.
bool unattached_nccl_kernel(const RawActivity& a) { return a.collective == -1 && nccl_kernel(a); }

// NCCL kernels without collective args take them from the record_param_comms range their launch is in, on the
// launch's host thread where both name theirs. Returns the count and time (us) of NCCL kernels left with no collective
// record: they keep their recorded durations.
std::pair<std::size_t, double> attach_host_collectives(RawTrace& t) {
  std::sort(t.host_comms.begin(), t.host_comms.end(), [](const HostComm& a, const HostComm& b) { return a.t0_us < b.t0_us; });
  std::size_t unrecorded = 0;
  double unrecorded_us = 0;
  for (RawActivity& a : t.acts) {
    if (!unattached_nccl_kernel(a)) continue;
    const LaunchTimes::Launch* launch = t.host_comms.empty() ? nullptr : t.launch_ts.find_launch(a.correlation);
    if (!launch) {
      ++unrecorded, unrecorded_us += a.dur_us;
      continue;
    }
    const double tl = launch->ts_us;
    auto hc = std::upper_bound(t.host_comms.begin(), t.host_comms.end(), tl, [](double x, const HostComm& h) { return x < h.t0_us; });
    while (hc != t.host_comms.begin()) {
      --hc;
      if (hc->t1_us >= tl && (hc->tid < 0 || launch->tid < 0 || hc->tid == launch->tid)) {
        a.collective = hc->collective;
        break;
      }
      if (tl - hc->t0_us > 1e6) break;  // ranges do not last a second
    }
    if (a.collective == -1) ++unrecorded, unrecorded_us += a.dur_us;
  }
  return {unrecorded, unrecorded_us};
}

// What attach_batched_transfers did.
struct BatchedTransfers {
  std::size_t kernels = 0;  // NCCL kernels given their coalescing group's sends and receives
  std::size_t calls = 0;    // the sends and receives they make
  std::size_t unrecorded = 0;   // kernels no record had named that a "nccl:coalesced" annotation placed (batched, or
                                // kept as a coalescing group's), and their time
  double unrecorded_us = 0;
};

// The import's note on them (none when there were none).
std::string batched_transfers_note(const BatchedTransfers& b) {
  if (b.kernels == 0) return "";
  return printf_text("%zu NCCL kernel%s each make%s a coalescing group's sends and receives (batch_isend_irecv; %zu calls "
                     "recorded one by one before the kernel's launch): each posts them all at once and lasts until the last is done",
                     b.kernels, b.kernels == 1 ? "" : "s", b.kernels == 1 ? "s" : "", b.calls);
}

// One thread's communication records and coalescing ends, in start order (attach_batched_transfers).
struct ThreadComm {
  enum Kind : std::uint8_t { transfer, other, launched, group_end } kind;  // other: a record of another call, launching nothing
  double t0_us, t1_us;
  int collective;  // transfer: the raw collective; group_end: kCoalescedEnd for a record, -1 for an annotation
};

// A record launched a kernel where one took its collective, or where the launch of an NCCL kernel on its thread lies
// inside it (a kernel with a record of its own). Not any runtime call: a send's record holds event records.
std::map<long, std::vector<ThreadComm>> comms_by_thread(const RawTrace& t, const std::vector<bool>& launched) {
  std::map<long, std::vector<double>> launches;  // per thread, sorted
  for (const RawActivity& a : t.acts)
    if (nccl_kernel(a))
      if (const LaunchTimes::Launch* l = t.launch_ts.find_launch(a.correlation); l && l->tid >= 0) launches[l->tid].push_back(l->ts_us);
  for (auto& [tid, ts] : launches) std::sort(ts.begin(), ts.end());
  auto launches_inside = [&launches](long tid, double t0, double t1) {
    const auto it = launches.find(tid);
    if (it == launches.end()) return false;
    const auto first = std::lower_bound(it->second.begin(), it->second.end(), t0);
    return first != it->second.end() && *first <= t1;
  };
  std::map<long, std::vector<ThreadComm>> out;
  for (const HostComm& h : t.host_comms) {
    if (h.tid < 0) continue;
    ThreadComm::Kind kind = h.collective == kCoalescedEnd ? ThreadComm::group_end : ThreadComm::other;
    if (h.collective >= 0 && (launched[static_cast<std::size_t>(h.collective)] || launches_inside(h.tid, h.t0_us, h.t1_us)))
      kind = ThreadComm::launched;
    else if (h.collective >= 0 && is_transfer(t.collectives[static_cast<std::size_t>(h.collective)].kind)) kind = ThreadComm::transfer;
    out[h.tid].push_back({kind, h.t0_us, h.t1_us, h.collective});
  }
  for (const AnnotatedComm& a : t.annotated_comms)
    if (a.tid >= 0 && a.name == "nccl:coalesced") out[a.tid].push_back({ThreadComm::group_end, a.t0_us, a.t1_us, -1});
  for (auto& [tid, comms] : out)
    std::stable_sort(comms.begin(), comms.end(), [](const ThreadComm& a, const ThreadComm& b) { return a.t0_us < b.t0_us; });
  return out;
}

// attach_batched_transfers' search: each NCCL kernel launched inside a group end takes the sends and receives before it.
void find_batches(RawTrace& t, BatchedTransfers& out) {
  std::vector<bool> launched(t.collectives.size(), false);
  for (const RawActivity& a : t.acts)
    if (a.collective >= 0) launched[static_cast<std::size_t>(a.collective)] = true;
  std::map<long, std::vector<ThreadComm>> threads = comms_by_thread(t, launched);
  for (RawActivity& a : t.acts) {
    if ((a.collective != -1 && a.collective != kCoalescedEnd) || !nccl_kernel(a)) continue;
    const LaunchTimes::Launch* launch = t.launch_ts.find_launch(a.correlation);
    const auto thread = launch ? threads.find(launch->tid) : threads.end();
    if (thread == threads.end()) continue;
    std::vector<ThreadComm>& comms = thread->second;
    const double tl = launch->ts_us;
    auto contains_launch = [tl](const ThreadComm& c) { return c.kind == ThreadComm::group_end && c.t1_us >= tl; };
    auto end = std::upper_bound(comms.begin(), comms.end(), tl, [](double x, const ThreadComm& c) { return x < c.t0_us; });
    while (end != comms.begin() && !contains_launch(*std::prev(end))) {
      --end;
      if (tl - end->t0_us > 1e6) end = comms.begin();  // ranges do not last a second
    }
    if (end == comms.begin()) continue;
    // the group's ends around the launch (a "coalesced" record and the "nccl:coalesced" annotation inside it), then
    // the sends and receives before them
    auto it = end;
    while (it != comms.begin() && contains_launch(*std::prev(it))) (--it)->kind = ThreadComm::launched;
    std::vector<int> calls;
    for (; it != comms.begin() && std::prev(it)->kind == ThreadComm::transfer && tl - std::prev(it)->t0_us <= 1e6; --it) {
      calls.push_back(std::prev(it)->collective);
      std::prev(it)->kind = ThreadComm::launched;  // one group, one kernel
    }
    if (calls.empty()) {  // a coalescing group of other calls: its kernel keeps its recorded time, counted as "coalesced"
      if (a.collective == -1) a.collective = kCoalescedEnd, ++out.unrecorded, out.unrecorded_us += a.dur_us;
      continue;
    }
    if (a.collective == -1) ++out.unrecorded, out.unrecorded_us += a.dur_us;
    std::reverse(calls.begin(), calls.end());
    a.collective = static_cast<int>(t.collectives.size());
    for (int c : calls) t.collectives.push_back(t.collectives[static_cast<std::size_t>(c)]);
    t.collectives[static_cast<std::size_t>(a.collective)].batched = static_cast<int>(calls.size()) - 1;
    ++out.kernels, out.calls += calls.size();
  }
}

// PyTorch's batch_isend_irecv (an NCCL group of sends and receives): each send and receive is recorded on its own, a
// record_param_comms range that launches nothing, and then one kernel does them all, launched inside a
// "nccl:coalesced" annotation (PyTorch 2.11: traces/recorder/probe_batched_p2p.py) or a "coalesced" record. That
// kernel makes the group's calls: the sends and receives its launch thread recorded right before, launching nothing
// (back to the thread's previous launching record, coalescing end or record of another call: batch_isend_irecv takes
// sends and receives only). A group of other calls (collectives coalesced) keeps its recorded duration.
BatchedTransfers attach_batched_transfers(RawTrace& t) {
  BatchedTransfers out;
  // most traces have no coalescing group: their kernels are not walked (a name search each)
  const bool group_ends =
      std::any_of(t.host_comms.begin(), t.host_comms.end(), [](const HostComm& h) { return h.collective == kCoalescedEnd; }) ||
      std::any_of(t.annotated_comms.begin(), t.annotated_comms.end(), [](const AnnotatedComm& a) { return a.name == "nccl:coalesced"; });
  if (group_ends) find_batches(t, out);
  // Kernels of coalescing groups whose calls were not found keep their recorded durations, counted as such.
  for (RawActivity& a : t.acts)
    if (a.collective == kCoalescedEnd) a.collective = kNotModelled, ++t.not_modelled["coalesced"];
  return out;
}

// What infer_annotated_collectives did: kernels given a collective, and why the others were not.
struct InferredComms {
  std::size_t count = 0;
  double us = 0;
  std::size_t no_launch = 0;      // the trace holds no launch (on a known thread) for the kernel
  std::size_t no_annotation = 0;  // no "nccl:" annotation around its launch
  std::size_t point_to_point = 0; // of `count`: sends and receives, their peer read from the annotation's name
  std::array<std::size_t, 6> peer_unread{};  // sends and receives given no peer, by PeerUnread (none: unused)
  std::size_t unknown_name = 0;   // inside an annotation naming no collective of comm_name_of's
  std::size_t unsized = 0;        // inside an annotation whose inputs are not sized (or beyond the buffer limit)
  std::size_t shared = 0;         // a second kernel launched inside one annotation
};

// The innermost "nccl:" annotation on thread `tid` holding host time `ts_us`: the latest-starting one that does
// (`comms` sorted by start); nullptr when none does.
const AnnotatedComm* annotation_around(const std::vector<AnnotatedComm>& comms, long tid, double ts_us) {
  auto it = std::upper_bound(comms.begin(), comms.end(), ts_us, [](double x, const AnnotatedComm& c) { return x < c.t0_us; });
  while (it != comms.begin()) {
    --it;
    if (ts_us - it->t0_us > 1e6) break;  // an annotation around one launch does not last a second
    if (it->tid == tid && it->t1_us >= ts_us) return &*it;
  }
  return nullptr;
}

// Whether a job of `world_size` ranks can be the group of inferred collectives (read_collective's bound).
bool inferable_world(int world_size) { return world_size >= 2 && world_size <= kMaxGroupSize; }

// A send or receive as ProcessGroupNCCL names it (PyTorch 2.0 / 2.1): "send R->D" / "recv R<-S" (the "nccl:" cut
// off), R the sender's / receiver's rank in its process group and D / S the peer's, in that group too.
struct PointToPointName {
  bool point_to_point = false;  // a send or receive, whether or not it names its ranks
  bool named = false;           // and the ranks were read
  CollectiveKind kind = CollectiveKind::send;
  long self = -1, peer = -1;
};
PointToPointName point_to_point_name(std::string_view name) {
  PointToPointName p;
  const bool send = starts_with(name, "send"), recv = starts_with(name, "recv");
  if (!send && !recv) return p;
  p.point_to_point = true;
  p.kind = send ? CollectiveKind::send : CollectiveKind::recv;
  std::string_view rest = name.substr(4);
  if (!starts_with(rest, " ")) return p;
  rest.remove_prefix(1);
  auto read_rank = [&rest](long& out) {  // at most 9 digits: a group's rank, never past kMaxGroupSize
    std::size_t n = 0;
    while (n < rest.size() && n < 10 && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 0 || n > 9) return false;
    out = std::stol(std::string(rest.substr(0, n)));
    rest.remove_prefix(n);
    return true;
  };
  if (!read_rank(p.self) || !starts_with(rest, send ? "->" : "<-")) return p;
  rest.remove_prefix(2);
  p.named = read_rank(p.peer) && rest.empty();
  return p;
}

// Why a send or receive annotation gives its kernel no peer.
enum class PeerUnread {
  none,
  unnamed,          // "nccl:send" / "nccl:recv" naming no "R->D" / "R<-S" ranks
  no_rank,          // the trace names no rank of its own
  several_devices,  // the trace holds several devices, whose ranks are not its distributedInfo.rank
  subgroup,         // the name's rank R is not the trace's: a process group other than the world
  bad_peer,         // the peer is outside the world, or the rank itself
};

// `own_rank`: the trace's distributedInfo.rank when it holds one device, else -1 (`one_device` says which).
PeerUnread peer_unread(const PointToPointName& p, int world_size, int own_rank, bool one_device) {
  if (!p.named) return PeerUnread::unnamed;
  if (own_rank < 0) return PeerUnread::no_rank;
  if (!one_device) return PeerUnread::several_devices;
  if (p.self != own_rank) return PeerUnread::subgroup;
  if (p.peer >= world_size || p.peer == p.self) return PeerUnread::bad_peer;
  return PeerUnread::none;
}

// NCCL kernels with no collective record whose launch lies inside a "nccl:<collective>" annotation on its thread
// take the collective from it (PyTorch 2.0 / 2.1 write no "Collective name"): the kind from its name, the bytes from
// its input tensors (all-gather's buffer: the input x the group's size), the group the job's world, its ranks left
// to the merge (as a truncated rank list: the ranks that took part, once all are there). A send or receive takes its
// peer from the name ("nccl:send 0->1") where the name's own rank is the trace's `global_rank` (so the group's ranks
// are the world's: the guess the merge checks by pairing sends with receives). Unsized inputs and the rest
// InferredComms counts are left as they were.
InferredComms infer_annotated_collectives(RawTrace& t, int world_size, int global_rank) {
  InferredComms out;
  // read only for send / receive annotations: a trace without annotations is not walked for it
  const bool one_device = t.annotated_comms.empty() ||
                          std::adjacent_find(t.acts.begin(), t.acts.end(), [](const RawActivity& a, const RawActivity& b) {
                            return a.device != b.device;
                          }) == t.acts.end();
  std::sort(t.annotated_comms.begin(), t.annotated_comms.end(), [](const AnnotatedComm& a, const AnnotatedComm& b) { return a.t0_us < b.t0_us; });
  std::vector<bool> used(t.annotated_comms.size(), false);  // one annotation, one collective
  for (RawActivity& a : t.acts) {
    if (!unattached_nccl_kernel(a)) continue;
    const LaunchTimes::Launch* launch = t.launch_ts.find_launch(a.correlation);
    if (!launch || launch->tid < 0) {
      ++out.no_launch;
      continue;
    }
    if (!inferable_world(world_size)) continue;  // unrecorded_reasons says why
    const AnnotatedComm* around = annotation_around(t.annotated_comms, launch->tid, launch->ts_us);
    if (!around) {
      ++out.no_annotation;
      continue;
    }
    const std::string name = around->name.substr(5);
    CollectiveKind kind = CollectiveKind::all_reduce;
    int peer = -1;
    if (const PointToPointName p = point_to_point_name(name); p.point_to_point) {
      if (const PeerUnread why = peer_unread(p, world_size, global_rank, one_device); why != PeerUnread::none) {
        ++out.peer_unread[static_cast<std::size_t>(why)];
        continue;
      }
      kind = p.kind;
      peer = static_cast<int>(p.peer);
    } else if (comm_name_of(name, kind) != CommName::collective || is_transfer(kind)) {
      ++out.unknown_name;
      continue;
    }
    const double bytes = kind == CollectiveKind::all_gather ? around->input_bytes * world_size : around->input_bytes;
    if (around->input_bytes < 0 || bytes > kMaxCollectiveBytes) {  // as a record's buffer beyond 1e15 bytes is refused
      ++out.unsized;
      continue;
    }
    const auto annotation = static_cast<std::size_t>(around - t.annotated_comms.data());
    if (used[annotation]) {  // its collective went to an earlier kernel: its bytes are not this kernel's too
      ++out.shared;
      continue;
    }
    used[annotation] = true;
    RawCollective c;
    c.kind = kind;
    c.bytes = bytes;
    c.group_name = kInferredWorldGroup;
    c.group_size = world_size;
    c.peer = peer;
    t.collectives.push_back(std::move(c));
    a.collective = static_cast<int>(t.collectives.size()) - 1;
    ++out.count, out.us += a.dur_us;
    if (peer >= 0) ++out.point_to_point;
  }
  return out;
}

const char* sends_or_receives(std::size_t n) { return n == 1 ? "send or receive" : "sends or receives"; }

// Why NCCL kernels were given no collective, as "; ..." for the no-record note (`world_size` and `global_rank` the
// trace's, for its "nccl:" annotations when it has any).
std::string unrecorded_reasons(const InferredComms& inferred, bool annotated, int world_size, int global_rank) {
  std::string why;
  if (inferred.no_launch > 0) why += printf_text("; %zu whose launch the trace does not hold", inferred.no_launch);
  if (annotated && inferred.no_annotation > 0)
    why += printf_text("; %zu with no \"nccl:\" annotation around the launch", inferred.no_annotation);
  const auto unread = [&inferred](PeerUnread w) { return inferred.peer_unread[static_cast<std::size_t>(w)]; };
  if (const std::size_t n = unread(PeerUnread::unnamed); n > 0)
    why += printf_text("; %zu inside \"nccl:send\" / \"nccl:recv\" annotations that name no ranks (\"send R->D\", \"recv R<-S\")", n);
  if (const std::size_t n = unread(PeerUnread::no_rank); n > 0)
    why += printf_text("; %zu %s in a trace that names no rank of its own (distributedInfo.rank)", n, sends_or_receives(n));
  if (const std::size_t n = unread(PeerUnread::several_devices); n > 0)
    why += printf_text("; %zu %s in a trace of several devices, whose ranks are not the trace's distributedInfo.rank", n, sends_or_receives(n));
  if (const std::size_t n = unread(PeerUnread::subgroup); n > 0)
    why += printf_text("; %zu %s whose rank in the annotation is not the trace's %d: a process group other than the world, whose "
                       "members the trace does not name", n, sends_or_receives(n), global_rank);
  if (const std::size_t n = unread(PeerUnread::bad_peer); n > 0)
    why += printf_text("; %zu %s whose peer is outside the world of %d ranks or the rank itself", n, sends_or_receives(n), world_size);
  if (inferred.unknown_name > 0)
    why += printf_text("; %zu inside \"nccl:\" annotations that name no modelled collective", inferred.unknown_name);
  if (inferred.unsized > 0)
    why += printf_text("; %zu inside \"nccl:\" annotations whose inputs are not sized or exceed 1e15 bytes", inferred.unsized);
  if (inferred.shared > 0)
    why += printf_text("; %zu launched inside a \"nccl:\" annotation that gave its collective to an earlier kernel", inferred.shared);
  if (annotated && !inferable_world(world_size))
    why += world_size < 1   ? std::string("; the trace names no world size for its \"nccl:\" annotations")
           : world_size == 1 ? std::string("; its world is one rank, so its \"nccl:\" annotations name no collective across ranks")
                             : printf_text("; its world of %d ranks is larger than a process group can be (%ld)", world_size, kMaxGroupSize);
  return why;
}

// The annotation ranges containing each activity of [begin, end), as one pass of cover() finds them. Consecutive
// activities mostly lie in the same ranges, so each activity keeps the index of its list and each list is kept
// once (a list per activity cost ~100 bytes per kernel on an 836k-kernel trace).
struct CoverLists {
  std::vector<std::vector<const Range*>> lists{1};  // lists[0]: no range
  std::vector<std::uint32_t> of;                    // per activity: its list, in the order the ranges started
  const std::vector<const Range*>& at(std::size_t activity) const { return lists[of[activity]]; }
};

// out.of[i - begin]: annotation ranges containing time_of(i), for activities [begin, end) (those with a
// time); a sweep in time order keeps it linear.
template <class TimeOf>
void cover(std::size_t begin, std::size_t end, const std::vector<const Range*>& rs, TimeOf time_of, CoverLists& out) {
  out.of.assign(end - begin, 0);
  std::vector<std::size_t> order;
  for (std::size_t i = begin; i < end; ++i)
    if (!std::isnan(time_of(i))) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return time_of(x) < time_of(y); });
  std::vector<const Range*> active;
  std::size_t next = 0;
  std::uint32_t current = 0;  // the list `active` is kept as
  for (std::size_t i : order) {
    const double t = time_of(i);
    bool changed = false;
    while (next < rs.size() && rs[next]->t0_us <= t) active.push_back(rs[next++]), changed = true;
    auto ended = std::remove_if(active.begin(), active.end(), [&](const Range* r) { return r->t1_us < t; });
    if (ended != active.end()) active.erase(ended, active.end()), changed = true;
    if (changed) {
      current = 0;
      if (!active.empty()) out.lists.push_back(active), current = static_cast<std::uint32_t>(out.lists.size() - 1);
    }
    out.of[i - begin] = current;
  }
}

// The annotation and step ranges that concern one device.
struct DeviceRanges {
  std::vector<const Range*> gpu_ann, cpu_ann, gpu_steps, cpu_steps;
  std::vector<Range> merged_gpu_steps;  // what gpu_steps points into
  bool steps_on_gpu = false;
  const std::vector<const Range*>& step_ranges() const { return steps_on_gpu ? gpu_steps : cpu_steps; }
};

// The steps of one rank as its activities meet them: index per range, and each step's recorded span.
struct StepCollector {
  std::vector<double> start_us, end_us;  // per step index
  std::map<const Range*, int> index;
  int step_of(const Range* r, Rank& rank) {
    auto [it, inserted] = index.emplace(r, static_cast<int>(rank.steps.size()));
    if (inserted) {
      Step s;
      s.label = r->name;
      rank.steps.push_back(s);
      start_us.push_back(r->t0_us);
      end_us.push_back(r->t1_us);
    }
    return it->second;
  }
};

// Turns the sorted activities into a workload, one rank per device.
class WorkloadBuilder {
 public:
  WorkloadBuilder(RawTrace& raw, const TraceHeader& header, const std::vector<KernelRates>& rates,
                  const Classifier& classifier, const std::string& file)
      : raw_(raw), shapes_(raw.shapes), header_(header), rates_(rates), classifier_(classifier) {
    wl_.source = file;
    rep_.schema = raw.old_schema ? "kineto-2021" : "kineto";
    rep_.activities = raw.acts.size();
    rep_.device_platform = header.amd || raw.hip_runtime ? "rocm" : "cuda";
    if (!header.device_names.empty()) rep_.device_name = header.device_names.begin()->second;
    rep_.world_size = header.world_size;
    rep_.backend = header.backend;
    if (!raw.not_modelled.empty()) {
      std::size_t n = 0;
      std::string names;
      for (const auto& [name, count] : raw.not_modelled) {
        n += count;
        names += (names.empty() ? "" : ", ") + name + " x" + std::to_string(count);
      }
      rep_.notes.push_back(std::to_string(n) + " communication call" + (n == 1 ? "" : "s") + " name no modelled collective (" + names +
                           "): their kernels keep their recorded durations");
    }
    note_graph_kernels();
    note_unknown_device_events();
    note_profiler_overhead();
  }

  // Why the steps come from the host's ranges. Device-side ranges that held too little: an MI300X trace whose
  // gpu_user_annotation ProfilerStep#N last 16 us each (its steps ~16 ms on the host); PyTorch 2.11 training under a
  // schedule, whose device-side ranges hold only the main thread's launches, not the backward kernels autograd's thread
  // launches (traces/recordings/h100-profiler-options/cnn-scheduled).
  static std::string host_steps_note(double on_gpu, double on_host) {
    return printf_text("the device-side step ranges (gpu_user_annotation ProfilerStep) hold %.1f %% of the device time, the "
                       "host's %.1f %%: steps taken from the host's ranges (launch correlation; device-side ranges can miss "
                       "kernels launched from other host threads, such as a backward pass on autograd's thread)",
                       100 * on_gpu, 100 * on_host);
  }

  // with_stack / with_modules and profile_memory make the profiler do more work on the host between launches: a
  // launch-bound job's recorded host gaps (which the replay keeps) grow with them (docs/trace-formats.md, measured).
  void note_profiler_overhead() {
    std::string options;
    auto add = [&](std::size_t n, const char* option, const char* events) {
      if (n > 0) options += (options.empty() ? "" : " and ") + std::string(option) + " (" + std::to_string(n) + " " + events + (n == 1 ? ")" : "s)");
    };
    add(raw_.python_function_events, "with_stack / with_modules", "python_function event");
    add(raw_.memory_events, "profile_memory", "[memory] event");
    if (options.empty()) return;
    rep_.notes.push_back("recorded with " + options +
                         ": the profiler's own host work lengthens the host gaps the replay keeps, so a job that waits on its "
                         "host replays slower and at lower power than it runs unprofiled (docs/trace-formats.md, \"Profiler "
                         "options\")");
  }

  // Events on a device of a category that is none of Kineto's (a "kernel" renamed, another tool's): not replayed,
  // so the user is told how many, and of which categories (named_counts_text, as finish_events names them).
  void note_unknown_device_events() {
    const std::size_t n = raw_.unknown_device_events;
    if (n == 0) return;
    std::string named = named_counts_text(raw_.unknown_device_categories);
    std::size_t counted = 0;
    for (const auto& entry : raw_.unknown_device_categories) counted += entry.second;
    if (counted < n) named += ", " + std::to_string(n - counted) + " more";
    rep_.notes.push_back(std::to_string(n) + " event" + (n == 1 ? "" : "s") + " on a device (args name a device or stream) " +
                         (n == 1 ? "has" : "have") + " a category Kineto does not write (" + named +
                         "): not replayed; device activities are \"kernel\", \"gpu_memcpy\" and \"gpu_memset\"");
  }

  // Kernels replayed from a CUDA graph have no launching operator (the graph was captured outside the trace), so
  // nothing sizes their work: the user is told how much of the kernel time the class priors price that way.
  void note_graph_kernels() {
    if (raw_.graph_launches.empty()) return;
    std::vector<long> graphs = raw_.graph_launches;
    std::sort(graphs.begin(), graphs.end());
    std::size_t n = 0, unsized = 0;
    double all_us = 0, unsized_us = 0;
    for (std::size_t i = 0; i < raw_.acts.size(); ++i) {
      const RawActivity& a = raw_.acts[i];
      if (a.kind != ActivityKind::kernel) continue;
      all_us += a.dur_us;
      if (!std::binary_search(graphs.begin(), graphs.end(), a.correlation)) continue;
      ++n;
      if (i < rates_.size() && rates_[i].source == WorkSource::unknown) ++unsized, unsized_us += a.dur_us;
    }
    if (unsized == 0) return;
    std::ostringstream os;
    os << n << " kernel" << (n == 1 ? "" : "s") << " were launched by CUDA graph replays (" << raw_.graph_launches.size()
       << " cudaGraphLaunch calls); " << unsized << " of them (" << std::fixed << std::setprecision(1)
       << (all_us > 0 ? 100.0 * unsized_us / all_us : 0.0)
       << " % of the kernel time) have no operator shapes and are priced by their class priors, which come from "
          "training kernels at the power cap and over-price small (decode-sized) kernels";
    rep_.notes.push_back(os.str());
  }

  void build() {
    const auto& acts = raw_.acts;
    std::size_t begin = 0;
    while (begin < acts.size()) {
      std::size_t end = begin;
      const long device = acts[begin].device;
      while (end < acts.size() && acts[end].device == device) ++end;
      add_rank(begin, end, device);
      begin = end;
    }
    size_elementwise_from_launch(wl_);  // kernels without operator shapes that their launch sizes
  }
  Workload& workload() { return wl_; }
  const ImportReport& report() const { return rep_; }

 private:
  static std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& ids, std::vector<std::string>& names,
                              const std::string& n) {
    auto it = ids.find(n);
    if (it != ids.end()) return it->second;
    auto id = static_cast<std::uint32_t>(names.size());
    names.push_back(n);
    ids.emplace(n, id);
    return id;
  }

  // Collective calls and their process groups, keyed by name and ranks (truncated lists by name and size).
  std::uint32_t add_collective(const RawCollective& c, int rank_id) {
    std::vector<int> key = c.group_ranks.empty() ? std::vector<int>{-c.group_size} : c.group_ranks;
    auto [it, inserted] = group_ids_.emplace(std::make_pair(c.group_name, key), static_cast<int>(wl_.groups.size()));
    if (inserted) {
      wl_.groups.push_back(c.group_ranks);
      wl_.group_names.push_back(c.group_name);
      wl_.group_sizes.push_back(c.group_size);
    }
    CollectiveCall call{c.kind, c.bytes, it->second, c.peer};
    if (call.peer < 0 && is_transfer(c.kind) && c.group_ranks.size() == 2)
      call.peer = c.group_ranks[0] == rank_id ? c.group_ranks[1] : c.group_ranks[0];
    wl_.collectives.push_back(call);
    return static_cast<std::uint32_t>(wl_.collectives.size());
  }

  // Annotations covering an activity are the union of the GPU ranges containing its start and
  // the CPU ranges containing its launch (through the correlation id). Both are needed: Kineto's
  // gpu_user_annotation spans only the kernels launched directly inside a range, so nested or
  // autograd-thread work (most of "forward" and "backward") is visible only from the CPU side.
  // Step ranges are kept apart, from the GPU side when the device has any, else the CPU side.
  void ranges_of(long device, DeviceRanges& d) {
    for (const Range& r : raw_.gpu_ranges)
      if (r.device == device) (classifier_.is_step_annotation(r.name) ? d.gpu_steps : d.gpu_ann).push_back(&r);
    for (const Range& r : raw_.cpu_ranges) (classifier_.is_step_annotation(r.name) ? d.cpu_steps : d.cpu_ann).push_back(&r);
    // Kineto writes a device-side step range once per stream the step used: one step, several ranges.
    d.merged_gpu_steps = merge_same_name(d.gpu_steps);
    d.gpu_steps.clear();
    for (const Range& r : d.merged_gpu_steps) d.gpu_steps.push_back(&r);
    d.steps_on_gpu = !d.gpu_steps.empty();
    rep_.annotation_source = d.gpu_ann.empty() && d.cpu_ann.empty() ? "none"
                             : d.cpu_ann.empty() ? "gpu_user_annotation"
                             : d.gpu_ann.empty() ? "cpu user_annotation via launch correlation"
                                                 : "gpu_user_annotation + cpu user_annotation via launch correlation";
  }

  // The annotation set of the ranges covering an activity; its phase is the outermost range that names
  // one (ranges were added in start order). 0 (no set) when none covers it.
  std::uint32_t annotation_set_of(std::vector<const Range*>& cov) {
    std::vector<std::uint32_t> set;
    Phase phase = Phase::other;
    std::stable_sort(cov.begin(), cov.end(), [](const Range* x, const Range* y) { return x->t1_us - x->t0_us > y->t1_us - y->t0_us; });
    for (const Range* r : cov) {
      const std::uint32_t id = intern(ann_ids_, wl_.annotation_names, r->name);
      set.push_back(id);
      if (phase != Phase::other) continue;
      // The phase is a function of the name: found once per annotation (the rules are regular expressions).
      if (phase_of_.size() <= id) phase_of_.resize(id + 1);
      if (!phase_of_[id]) phase_of_[id] = classifier_.annotation_phase(r->name);
      phase = *phase_of_[id];
    }
    if (set.empty()) return 0;
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    auto it = set_ids_.find(set);
    if (it == set_ids_.end()) {
      it = set_ids_.emplace(set, static_cast<std::uint32_t>(wl_.annotation_sets.size())).first;
      AnnotationSet as;
      as.annotations = set;
      as.phase = phase;
      wl_.annotation_sets.push_back(std::move(as));
    }
    return it->second;
  }

  // The activity's own fields: name, kind, class, stream, SM fill, rates, collective. recorded_s: its whole recorded
  // time (k's duration unless the busy union clipped it).
  void describe_kernel(Kernel& k, std::size_t i, int rank_id, double recorded_s) {
    const RawActivity& a = raw_.acts[i];
    k.name_id = intern(name_ids_, wl_.names, *a.name);
    k.kind = a.kind;
    // The class is a function of name and kind: classified once per pair (the rules are regular expressions).
    const std::uint64_t key = std::uint64_t{k.name_id} << 8 | static_cast<std::uint8_t>(a.kind);
    auto cls = class_of_.find(key);
    if (cls == class_of_.end()) cls = class_of_.emplace(key, classifier_.kernel_class(*a.name, a.kind)).first;
    k.cls = cls->second;
    k.stream = static_cast<std::uint16_t>(a.stream);
    if (a.blocks_per_sm >= 0) {
      k.sm_fill = static_cast<float>(std::clamp(a.blocks_per_sm, 1e-3, 1.0));
    } else if (const LaunchShape& shape = raw_.shapes[a.shape]; header_.sm_count > 0 && shape.grid[0] > 0) {
      double blocks = double(shape.grid[0]) * std::max(1u, shape.grid[1]) * std::max(1u, shape.grid[2]);
      k.sm_fill = static_cast<float>(std::clamp(blocks / header_.sm_count, 1e-3, 1.0));
    }
    apply_rates(rates_[i], k);
    if (a.simulated >= 0) apply_simulated_args(raw_.simulated[static_cast<std::size_t>(a.simulated)], k);
    if (a.collective < 0) return;
    const auto first = static_cast<std::size_t>(a.collective);
    k.collective = add_collective(raw_.collectives[first], rank_id);
    const int more = raw_.collectives[first].batched;  // a batch's calls follow its first (CollectiveCall::batched)
    for (int b = 1; b <= more; ++b) add_collective(raw_.collectives[first + static_cast<std::size_t>(b)], rank_id);
    wl_.collectives[k.collective - 1].batched = static_cast<std::uint32_t>(more);
    // over its recorded time (the busy union may have clipped k's); not in dvfs-sim's own export, which says its work
    if (a.simulated < 0) price_transfer_by_bytes(wl_, k, recorded_s);
  }

  // Per-step figures partition the run. Steps are numbered in the order of their first activity; a step
  // owns every activity from its first one up to the next step's first one (an activity of another step
  // or of none that runs in that window moves into it: an NCCL kernel launched in step N that runs after
  // step N+1 has started is step N+1's), the last step up to the last activity of any step. Ranges that
  // overlap their neighbours, as the profiler's can, would otherwise count the overlap in both steps.
  static void partition_steps(Rank& rank) {
    const std::size_t n = rank.steps.size();
    if (n == 0) return;
    std::vector<int> first(n, -1), last(n, -1);
    for (std::size_t i = 0; i < rank.kernels.size(); ++i) {
      const int step = rank.kernels[i].step;
      if (step < 0) continue;
      if (first[static_cast<std::size_t>(step)] < 0) first[static_cast<std::size_t>(step)] = static_cast<int>(i);
      last[static_cast<std::size_t>(step)] = static_cast<int>(i);
    }
    // Steps meet their first activity in index order (StepCollector), so first[] increases.
    int covered_to = -1;  // the last activity of the steps so far
    for (std::size_t s = 0; s < n; ++s) {
      covered_to = std::max(covered_to, last[s]);
      const int end = s + 1 < n ? std::min(first[s + 1] - 1, covered_to) : covered_to;
      for (int i = first[s]; i <= end; ++i) rank.kernels[static_cast<std::size_t>(i)].step = static_cast<int>(s);
    }
  }

  // A step ends where the next one starts: its tail and the next step's lead share the recorded gap between
  // them (the tail gives way), so the replay adds no time the recording did not have.
  static void clip_step_tails(Rank& rank) {
    for (Step& st : rank.steps) {
      const std::size_t next = static_cast<std::size_t>(st.last_kernel) + 1;
      if (next >= rank.kernels.size() || st.tail_s <= 0) continue;
      const Kernel& k = rank.kernels[next];
      const double lead = k.step >= 0 && rank.steps[static_cast<std::size_t>(k.step)].first_kernel == static_cast<int>(next)
                              ? rank.steps[static_cast<std::size_t>(k.step)].lead_s
                              : 0.0;
      st.tail_s = std::min(st.tail_s, std::max(0.0, k.gap_before_s - lead));
    }
  }

  // Step boundaries: first/last activity, host lead before the first one, tail after the last one.
  static void set_step_bounds(Rank& rank, double origin_us, const StepCollector& steps, bool steps_on_gpu) {
    partition_steps(rank);
    for (std::size_t i = 0; i < rank.kernels.size(); ++i) {
      const int step = rank.kernels[i].step;
      if (step < 0) continue;
      Step& st = rank.steps[static_cast<std::size_t>(step)];
      if (st.first_kernel < 0) st.first_kernel = static_cast<int>(i);
      st.last_kernel = static_cast<int>(i);
    }
    for (std::size_t s = 0; s < rank.steps.size(); ++s) {
      Step& st = rank.steps[s];
      double first_start_us = origin_us + rank.recorded_start_s[st.first_kernel] * 1e6;
      st.lead_s = bounded_step_lead(rank, st, (first_start_us - steps.start_us[s]) * 1e-6);
      double last_end_us = origin_us + (rank.recorded_start_s[st.last_kernel] + rank.kernels[st.last_kernel].duration_s) * 1e6;
      // A CPU step range ends when the host has queued the work, not when the device is done.
      st.tail_s = steps_on_gpu ? std::max(0.0, (steps.end_us[s] - last_end_us) * 1e-6) : 0.0;
    }
    clip_step_tails(rank);
  }

  // The rank of one device: activities [begin, end) of the sorted list.
  void add_rank(std::size_t begin, std::size_t end, long device) {
    const auto& acts = raw_.acts;
    DeviceRanges d;
    ranges_of(device, d);
    std::vector<double> host_ts(end - begin);
    std::size_t before_launch = 0;  // started more than 1 us (beyond the trace's rounding) before their launch call
    for (std::size_t i = begin; i < end; ++i) {
      const double* launched = raw_.launch_ts.find(acts[i].correlation);
      host_ts[i - begin] = launched ? *launched : std::nan("");
      before_launch += launched && acts[i].ts_us < *launched - 1.0;
    }
    auto device_time = [&](std::size_t i) { return acts[i].ts_us; };
    auto host_time = [&](std::size_t i) { return host_ts[i - begin]; };
    CoverLists gpu_cover, cpu_cover, step_cover;
    cover(begin, end, d.gpu_ann, device_time, gpu_cover);
    cover(begin, end, d.cpu_ann, host_time, cpu_cover);
    if (d.steps_on_gpu) cover(begin, end, d.step_ranges(), device_time, step_cover);
    else cover(begin, end, d.step_ranges(), host_time, step_cover);
    // Device-side step ranges that hold under half the device time, where the host's step ranges hold more: the
    // host's (host_steps_note).
    if (d.steps_on_gpu && !d.cpu_steps.empty()) {
      double all = 0;
      for (std::size_t i = begin; i < end; ++i) all += acts[i].dur_us;
      const auto covered = [&](const CoverLists& c) {
        double in = 0;
        for (std::size_t i = begin; i < end; ++i)
          if (!c.at(i - begin).empty()) in += acts[i].dur_us;
        return all > 0 ? in / all : 1.0;
      };
      const double on_gpu = covered(step_cover);
      if (on_gpu < 0.5) {
        CoverLists host_steps;
        cover(begin, end, d.cpu_steps, host_time, host_steps);
        if (const double on_host = covered(host_steps); on_host > on_gpu) {
          rep_.notes.push_back(host_steps_note(on_gpu, on_host));
          d.steps_on_gpu = false;
          step_cover = std::move(host_steps);
        }
      }
    }
    std::vector<double>().swap(host_ts);  // no longer read
    // The annotation set of each pair of lists (GPU ranges first, then CPU ranges), found once.
    std::unordered_map<std::uint64_t, std::uint32_t> set_of_lists;
    auto annotation_set_at = [&](std::size_t j) {
      const std::uint64_t key = (std::uint64_t{gpu_cover.of[j]} << 32) | cpu_cover.of[j];
      auto it = set_of_lists.find(key);
      if (it != set_of_lists.end()) return it->second;
      std::vector<const Range*> cov = gpu_cover.at(j);
      cov.insert(cov.end(), cpu_cover.at(j).begin(), cpu_cover.at(j).end());
      return set_of_lists.emplace(key, annotation_set_of(cov)).first->second;
    };

    Rank rank;
    const bool whole = begin == 0 && end == acts.size();  // the trace's one device
    rank.id = raw_.global_rank >= 0 && whole ? raw_.global_rank : static_cast<int>(wl_.ranks.size());
    rank.device_name = header_.device_names.count(device) ? header_.device_names.at(device) : "";
    const double origin_us = acts[begin].ts_us;
    rank.origin_epoch_ns = header_.base_ns > 0 ? header_.base_ns + origin_us * 1000.0 : 0;

    StepCollector steps;
    rank.kernels.reserve(end - begin);
    if (!whole) rank.shapes.reserve(end - begin);
    rank.recorded_start_s.reserve(end - begin);
    rank.correlations.reserve(end - begin);
    double busy_until = -1e300;
    std::unordered_map<int, double> stream_until;  // each stream's last end: a stream runs one activity at a time
    std::size_t same_stream = 0, early_launches = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const RawActivity& a = acts[i];
      double& until = stream_until.try_emplace(a.stream, -1e300).first->second;
      if (a.ts_us < until - 1.0) {  // more than 1 us (beyond the trace's rounding) before the last one ended
        const LaunchTimes::Launch* launch = raw_.launch_ts.find_launch(a.correlation);
        ++(launch && launch->extended ? early_launches : same_stream);
      }
      until = std::max(until, a.ts_us + a.dur_us);
      Kernel k;
      if (!step_cover.at(i - begin).empty()) k.step = steps.step_of(step_cover.at(i - begin).back(), rank);  // innermost when ranges nest
      k.annotation_set = annotation_set_at(i - begin);

      // Concurrent activities on other streams are replayed as the busy union: only the part of an
      // activity that extends past everything before it adds device time.
      double start = a.ts_us, stop = a.ts_us + a.dur_us;
      const bool clipped = start < busy_until;
      if (clipped) {
        ++rep_.overlapped_activities;
        rank.clipped.push_back({static_cast<std::uint32_t>(rank.kernels.size()), (start - origin_us) * 1e-6, a.dur_us * 1e-6});
        start = busy_until;
        stop = std::max(stop, busy_until);
      }
      k.gap_before_s = i == begin ? 0.0 : (start - busy_until) * 1e-6;
      k.duration_s = (stop - start) * 1e-6;
      busy_until = std::max(busy_until, stop);
      describe_kernel(k, i, rank.id, clipped ? a.dur_us * 1e-6 : k.duration_s);
      rank.kernels.push_back(k);
      if (!whole) rank.shapes.push_back(raw_.shapes[a.shape]);
      rank.recorded_start_s.push_back((start - origin_us) * 1e-6);
      rank.correlations.push_back(a.correlation);
    }
    if (same_stream > 0)  // 200 copies of each event read as 800 kernels replayed as 4, without a word
      rep_.notes.push_back(std::to_string(same_stream) + " activit" + (same_stream == 1 ? "y starts" : "ies start") +
                           " before the previous one on its stream ends (rank " + std::to_string(rank.id) +
                           "): a stream runs one at a time, so these are duplicated or corrupt events; replayed as the busy union");
    if (early_launches > 0)
      rep_.notes.push_back(std::to_string(early_launches) + " kernel" + (early_launches == 1 ? " starts" : "s start") +
                           " before the previous activity on its stream ends (rank " + std::to_string(rank.id) +
                           "), launched with cudaLaunchKernelExC / cuLaunchKernelEx, which can ask for programmatic dependent "
                           "launch (a kernel starting before the previous one ends, Hopper and later); otherwise duplicated or "
                           "corrupt events; replayed as the busy union, the overlap adding no device time");
    if (before_launch > 0)  // a device cannot run what the host has not launched yet: skewed clocks or corrupt events
      rep_.notes.push_back(std::to_string(before_launch) + " activit" + (before_launch == 1 ? "y starts" : "ies start") +
                           " more than 1 us before the host call that launched " + (before_launch == 1 ? "it" : "them") +
                           " (matched by correlation id; rank " + std::to_string(rank.id) +
                           "): the host's and the device's clocks disagree or the events are corrupt; replayed at their recorded device times");
    if (whole) rank.shapes = std::move(shapes_);  // in the acts' order (sort_activities); read no more
    set_step_bounds(rank, origin_us, steps, d.steps_on_gpu);
    rep_.step_source = rank.steps.empty() ? "none" : (d.steps_on_gpu ? "gpu_user_annotation" : "cpu user_annotation via launch correlation");
    wl_.ranks.push_back(std::move(rank));
  }

  const RawTrace& raw_;
  std::vector<LaunchShape>& shapes_;  // raw_.shapes, moved into the rank of a one-device trace
  const TraceHeader& header_;
  const std::vector<KernelRates>& rates_;
  const Classifier& classifier_;
  Workload wl_;
  ImportReport rep_;
  std::unordered_map<std::string, std::uint32_t> name_ids_, ann_ids_;
  std::unordered_map<std::uint64_t, KernelClass> class_of_;  // by name id and kind
  std::vector<std::optional<Phase>> phase_of_;               // by annotation id
  std::map<std::vector<std::uint32_t>, std::uint32_t> set_ids_;
  std::map<std::pair<std::string, std::vector<int>>, int> group_ids_;
};

}  // namespace

namespace {

// A trace whose kernels carry no operator's External id (PyTorch 2.0 / 2.1 traces, PARAM's 2023 DLRM ranks: a kernel's
// External id, and its cudaLaunchKernel's, repeat its correlation id; some tools write none): each such kernel is linked
// to the innermost operator with shapes around its launch on the launching thread, as the profiler links them in
// later traces. Decided for the whole trace (nine kernels in ten in that form), not per kernel: a correlation id can
// equal an unrelated operator's External id (the ids count apart). Returns how many kernels were linked, their time (us).
std::pair<std::size_t, double> link_kernels_through_launches(RawTrace& raw) {
  if (raw.operators.span_count() == 0) return {0, 0.0};
  // A CUDA graph's kernels are the graph's, not the work of the operator around its replay: they neither decide the
  // form nor take an operator (in that form their External id would name an unrelated one).
  std::vector<long> graphs = raw.graph_launches;
  std::sort(graphs.begin(), graphs.end());
  auto replayed = [&](const RawActivity& a) { return std::binary_search(graphs.begin(), graphs.end(), a.correlation); };
  auto unlinked = [](const RawActivity& a) { return a.external_id < 0 || a.external_id == a.correlation; };
  std::size_t kernels = 0, in_form = 0;
  for (const RawActivity& a : raw.acts)
    if (a.kind == ActivityKind::kernel && !replayed(a)) ++kernels, in_form += unlinked(a);
  if (kernels == 0 || in_form * 10 < kernels * 9) return {0, 0.0};
  raw.operators.finish_spans();
  std::size_t linked = 0;
  double linked_us = 0;
  for (RawActivity& a : raw.acts) {
    if (a.kind != ActivityKind::kernel || !unlinked(a)) continue;
    if (replayed(a)) {
      a.external_id = -1;
      continue;
    }
    const LaunchTimes::Launch* launch = raw.launch_ts.find_launch(a.correlation);
    const long op = launch ? raw.operators.operator_around(launch->tid, launch->ts_us) : -1;
    a.external_id = op >= 0 && raw.operators.find(op) ? op : -1;  // the correlation id names no operator
    if (a.external_id < 0) continue;
    ++linked;
    linked_us += a.dur_us;
  }
  return {linked, linked_us};
}

}  // namespace

Workload build_workload(RawTrace& raw, const TraceHeader& header, const Classifier& classifier, const std::string& file,
                        ImportReport* report) {
  raw.launch_ts.finish();
  const auto [relinked, relinked_us] = link_kernels_through_launches(raw);
  const auto [recorded_none, recorded_none_us] = attach_host_collectives(raw);
  const BatchedTransfers batched = attach_batched_transfers(raw);
  const InferredComms inferred = infer_annotated_collectives(raw, header.world_size, header.global_rank);
  const std::size_t unrecorded = recorded_none - batched.unrecorded - inferred.count;
  const double unrecorded_us = recorded_none_us - batched.unrecorded_us - inferred.us;
  sort_activities(raw);
  check_span(raw.acts, file);
  // The work of each activity, from the operator that launched it (its input shapes).
  std::vector<ActivityRef> refs;
  refs.reserve(raw.acts.size());
  for (const RawActivity& a : raw.acts) {
    const LaunchShape& shape = raw.shapes[a.shape];
    const std::uint64_t blocks = std::uint64_t{shape.grid[0]} * std::max(1u, shape.grid[1]) * std::max(1u, shape.grid[2]);
    refs.push_back({a.external_id, a.dur_us, a.kind, a.name, shape.bytes, blocks});
  }
  const std::vector<KernelRates> rates = estimate_kernel_rates(refs, raw.operators);
  for (std::size_t i = 0; i < rates.size(); ++i) {
    // arithmetic counted from operator shapes that no GPU could do in the kernel's time (shapes of 2^31 x 2^31 priced a
    // 100 us kernel at 5e19 W): the shapes are wrong, so the trace is refused rather than priced. Not bytes: an in-place
    // operator's count holds its whole target (index_copy_ into a 2 GiB KV cache), which validate lists as work beyond
    // the part
    const KernelRates& r = rates[i];
    const double flops = std::max({double(r.tensor_tflops), double(r.fma_tflops), double(r.alu_tops)});
    if (flops > kMaxCountedTeraOps) {
      std::ostringstream os;
      os << "expected operator shapes whose arithmetic a GPU can do in the kernel's time (at most " << kMaxCountedTeraOps / 1e6
         << " EFLOP/s); kernel \"" << refs[i].name->substr(0, 80) << "\" (" << refs[i].duration_us << " us) was counted at " << flops
         << " TFLOP/s";
      throw InputError(file, "Input Dims", os.str());
    }
  }
  std::vector<ActivityRef>().swap(refs);  // (`refs = {}` would keep its capacity: 48 bytes per activity)
  raw.operators = OperatorIndex();         // read only for the rates; a trace's cpu_ops can outnumber its kernels
  auto by_start = [](const Range& a, const Range& b) { return a.t0_us != b.t0_us ? a.t0_us < b.t0_us : a.t1_us > b.t1_us; };
  std::sort(raw.gpu_ranges.begin(), raw.gpu_ranges.end(), by_start);
  std::sort(raw.cpu_ranges.begin(), raw.cpu_ranges.end(), by_start);

  WorkloadBuilder b(raw, header, rates, classifier, file);
  b.build();
  if (report) {
    *report = b.report();
    if (relinked > 0)
      report->notes.push_back(printf_text(
          "%zu kernel%s (%.1f ms) linked to %s operator through %s launch: the trace's kernels carry no operator's "
          "External id (it repeats the correlation id), so the innermost operator around each launch on its thread is taken",
          relinked, relinked == 1 ? "" : "s", relinked_us / 1e3, relinked == 1 ? "its" : "their", relinked == 1 ? "its" : "their"));
    if (const std::string note = batched_transfers_note(batched); !note.empty()) report->notes.push_back(note);
    // Without a record the kernel's collective, bytes and process group are unknown: its rank cannot be made to wait
    // for the others there, so a multi-rank replay runs each rank at its own recorded communication time.
    if (inferred.count > 0)
      report->notes.push_back(printf_text(
          "%zu NCCL kernel%s (%.1f ms) with no \"Collective name\" record took %s collective from the \"nccl:<collective>\" "
          "annotation around %s launch: kind from its name, bytes from its input tensors, and the job's world (%d ranks) "
          "as the process group, which a trace of that age does not name (a job with smaller groups is simulated as if "
          "every rank took part)%s",
          inferred.count, inferred.count == 1 ? "" : "s", inferred.us / 1e3, inferred.count == 1 ? "its" : "their",
          inferred.count == 1 ? "its" : "their", header.world_size,
          inferred.point_to_point == 0 ? ""
                                       : printf_text("; sends and receives among them: %zu, each peer read from the annotation's name "
                                                     "(\"nccl:send %d->D\" / \"nccl:recv %d<-S\")",
                                                     inferred.point_to_point, header.global_rank, header.global_rank)
                                             .c_str()));
    if (unrecorded > 0)
      report->notes.push_back(printf_text(
          "%zu NCCL kernel%s (%.1f ms) carr%s no collective record (no \"Collective name\" args on the kernel or on a "
          "record_param_comms range around its launch%s): kept at %s recorded duration%s, not simulated on the cluster, so "
          "ranks do not wait for each other there",
          unrecorded, unrecorded == 1 ? "" : "s", unrecorded_us / 1e3, unrecorded == 1 ? "ies" : "y",
          unrecorded_reasons(inferred, !raw.annotated_comms.empty(), header.world_size, header.global_rank).c_str(),
          unrecorded == 1 ? "its" : "their", unrecorded == 1 ? "" : "s"));
  }
  return std::move(b.workload());
}

}  // namespace dvfs::kineto

namespace dvfs {

namespace {

// The checked reader: the whole document through parse_json_text, whose errors name the file and field.
Workload import_checked(const std::string& text, const std::string& file, const Classifier& classifier, ImportReport* report) {
  using namespace kineto;
  const Json doc = parse_json_text(text, file, DuplicateKeys::last_wins);
  const Json& events = trace_events(doc, file);
  const TraceHeader header = read_header(doc, file);
  RawTrace raw = read_events(events, file, header.global_rank);
  return build_workload(raw, header, classifier, file, report);
}

// The streaming reader when it can read `source` (nullopt: it declined; only the checked reader then names the
// problem, so every error message is the checked reader's).
// DVFS_SIM_KINETO_READER=checked|streaming picks the reader where the caller left it automatic (benchmarks, and
// checking that a trace takes the streaming path).
KinetoReader reader_from_env(KinetoReader reader) {
  const char* env = std::getenv("DVFS_SIM_KINETO_READER");
  if (reader != KinetoReader::automatic || !env) return reader;
  const std::string v = env;
  return v == "checked" ? KinetoReader::checked : v == "streaming" ? KinetoReader::streaming : reader;
}

template <class Read>
std::optional<Workload> try_streaming(KinetoReader reader, Read read) {
  reader = reader_from_env(reader);
  if (reader == KinetoReader::checked) return std::nullopt;
  try {
    return read();
  } catch (const std::exception& e) {
    if (reader == KinetoReader::streaming) throw StreamingDeclined(e.what());
    return std::nullopt;
  }
}

}  // namespace

Workload import_kineto(const std::string& path, const Classifier& classifier, ImportReport* report, KinetoReader reader) {
  if (auto wl = try_streaming(reader, [&] { return kineto::import_streaming(ByteSource::open(path), path, classifier, report); }))
    return std::move(*wl);
  return import_checked(read_maybe_gzip(path), path, classifier, report);
}

Workload import_kineto_text(const std::string& text, const std::string& file, const Classifier& classifier,
                            ImportReport* report, KinetoReader reader) {
  if (auto wl = try_streaming(reader, [&] { return kineto::import_streaming(ByteSource::of_text(text), file, classifier, report); }))
    return std::move(*wl);
  return import_checked(text, file, classifier, report);
}

}  // namespace dvfs
