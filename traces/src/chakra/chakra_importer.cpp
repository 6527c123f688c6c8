#include "traces/src/chakra/chakra_importer.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/parallel.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/rank_numbered.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/chakra/chakra_attrs.hpp"
#include "traces/src/chakra/chakra_stream.hpp"
#include "traces/src/multi_rank.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

namespace dvfs {

namespace a = chakra_attr;
using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

namespace {

bool is_file(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

// The rank a file's name gives (NAME.<rank>.et[.gz]), or -1.
int rank_from_name(const std::string& path) {
  std::string s = std::filesystem::path(path).filename().string();
  if (ends_with(s, ".gz")) s.resize(s.size() - 3);
  if (!ends_with(s, ".et")) return -1;
  s.resize(s.size() - 3);
  const auto dot = s.rfind('.');
  if (dot == std::string::npos || dot + 1 == s.size() || s.size() - dot > 8) return -1;
  for (std::size_t i = dot + 1; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return -1;
  return std::stoi(s.substr(dot + 1));
}

const AttributeProto* find_attr(const google::protobuf::RepeatedPtrField<AttributeProto>& attrs, const char* name) {
  for (const AttributeProto& at : attrs)
    if (at.name() == name) return &at;
  return nullptr;
}

// What a node's errors are named by: "node <id> (<name>)".
std::string node_label(const Node& n) { return "node " + std::to_string(n.id()) + (n.name().empty() ? "" : " (" + n.name() + ")"); }

std::int64_t integer(const AttributeProto& at, const std::string& file, const std::string& where) {
  switch (at.value_case()) {
    case AttributeProto::kInt64Val: return at.int64_val();
    case AttributeProto::kInt32Val: return at.int32_val();
    case AttributeProto::kUint32Val: return at.uint32_val();
    case AttributeProto::kUint64Val: return static_cast<std::int64_t>(at.uint64_val());
    case AttributeProto::kSint32Val: return at.sint32_val();
    case AttributeProto::kSint64Val: return at.sint64_val();
    case AttributeProto::kFixed32Val: return at.fixed32_val();
    case AttributeProto::kFixed64Val: return static_cast<std::int64_t>(at.fixed64_val());
    case AttributeProto::kSfixed32Val: return at.sfixed32_val();
    case AttributeProto::kSfixed64Val: return at.sfixed64_val();
    default: throw InputError(file, where + " attr " + at.name(), "expected an integer value (int64_val as Chakra writes it)");
  }
}

std::int64_t required_integer(const Node& n, const char* name, const std::string& file) {
  const AttributeProto* at = find_attr(n.attr(), name);
  if (!at) throw InputError(file, node_label(n) + " attr " + name, "missing: a " + std::string(ChakraProtoMsg::NodeType_Name(n.type())) + " needs it");
  return integer(*at, file, node_label(n));
}

CollectiveKind collective_kind(std::int64_t t, const Node& n, const std::string& file) {
  switch (t) {
    case ChakraProtoMsg::ALL_REDUCE: return CollectiveKind::all_reduce;
    case ChakraProtoMsg::BARRIER: return CollectiveKind::all_reduce;  // an all-reduce of its size (docs/chakra.md)
    case ChakraProtoMsg::ALL_GATHER: return CollectiveKind::all_gather;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK: return CollectiveKind::reduce_scatter;
    case ChakraProtoMsg::BROADCAST: return CollectiveKind::broadcast;
    case ChakraProtoMsg::ALL_TO_ALL: return CollectiveKind::all_to_all;
    default:
      throw InputError(file, node_label(n) + " attr comm_type",
                       std::to_string(t) + (ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(t))
                                                ? " (" + ChakraProtoMsg::CollectiveCommType_Name(static_cast<ChakraProtoMsg::CollectiveCommType>(t)) + ")"
                                                : std::string()) +
                           " is not supported: expected ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER(_BLOCK), BROADCAST, ALL_TO_ALL or BARRIER");
  }
}

// The process groups of the import: dvfs-sim's own table when a file carries one, else one group per pg_name
// the files use (its members: the ranks that use it) and a group of all ranks for collectives without one.
struct GroupTable {
  std::vector<std::vector<int>> ranks;
  std::vector<std::string> names;
  std::vector<int> sizes;
  std::map<std::string, int> by_pg_name;
  int world = -1;  // group of collectives without pg_name (inferred tables only)
};

struct ParsedRank {
  ChakraFile file;
  std::string path;
  int rank = 0;
};

// A node the host runs (is_cpu_op true). A non-bool is_cpu_op is refused where the node is planned (plan_node).
bool runs_on_host(const Node& n) {
  const AttributeProto* cpu = find_attr(n.attr(), a::kIsCpuOp);
  return cpu && cpu->value_case() == AttributeProto::kBoolVal && cpu->bool_val();
}

GroupTable group_table(const std::vector<ParsedRank>& parts) {
  GroupTable t;
  for (const ParsedRank& p : parts) {
    const AttributeProto* at = find_attr(p.file.metadata.attr(), a::kCommGroups);
    if (!at) continue;
    const std::string field = std::string("GlobalMetadata attr ") + a::kCommGroups;
    const Json j = parse_json_text(at->string_val(), p.path + " (" + field + ")", DuplicateKeys::last_wins);
    if (!j.is_array()) throw InputError(p.path, field, "expected a JSON array of groups");
    for (const Json& g : j) {
      if (!g.is_object() || !g.contains("pg_name") || !g["pg_name"].is_string() || !g.contains("ranks") || !g["ranks"].is_array() ||
          g["ranks"].size() > static_cast<std::size_t>(kMaxGroupSize) || (g.contains("name") && !g["name"].is_string()))
        throw InputError(p.path, field, "expected groups {pg_name, name, ranks (at most " + std::to_string(kMaxGroupSize) + "), size}");
      t.by_pg_name[g["pg_name"].get<std::string>()] = static_cast<int>(t.ranks.size());
      std::vector<int> ranks;
      for (const Json& r : g["ranks"]) ranks.push_back(static_cast<int>(checked_integer(r, p.path, field + " ranks", 0, kMaxGroupSize - 1)));
      t.ranks.push_back(ranks);
      t.names.push_back(g.value("name", std::string()));
      t.sizes.push_back(g.contains("size") ? static_cast<int>(checked_integer(g["size"], p.path, field + " size", -1, kMaxGroupSize))
                                           : static_cast<int>(ranks.size()));
    }
    return t;
  }
  std::map<std::string, std::set<int>> users;
  bool unnamed = false;
  for (const ParsedRank& p : parts)
    for (const Node& n : p.file.nodes) {
      // a collective's CPU side (Chakra's converter writes it without pg_name) is host time, no member of a group
      if (n.type() != ChakraProtoMsg::COMM_COLL_NODE || runs_on_host(n)) continue;
      const AttributeProto* pg = find_attr(n.attr(), a::kPgName);
      if (pg) users[pg->string_val()].insert(p.rank);
      else unnamed = true;
    }
  for (const auto& [name, members] : users) {
    t.by_pg_name[name] = static_cast<int>(t.ranks.size());
    t.ranks.emplace_back(members.begin(), members.end());
    t.names.push_back(name);
    t.sizes.push_back(static_cast<int>(members.size()));
  }
  if (unnamed) {
    t.world = static_cast<int>(t.ranks.size());
    std::vector<int> all;
    for (const ParsedRank& p : parts) all.push_back(p.rank);
    std::sort(all.begin(), all.end());
    // One file alone does not say how many ranks the job has: its world group stays incomplete (recorded durations).
    t.ranks.push_back(parts.size() > 1 ? all : std::vector<int>{});
    t.names.push_back("world");
    t.sizes.push_back(parts.size() > 1 ? static_cast<int>(all.size()) : -1);
  }
  return t;
}

// One node of a rank after checking it: where it runs and, for a device node, what it becomes.
struct PlannedNode {
  enum class Where { none, host, device } where = Where::none;
  double duration_s = 0;
  Kernel kernel;
  bool has_call = false;
  CollectiveCall call;
  std::uint64_t bytes = 0;
  bool exact_gap = false;  // the gap before it is dvfs.kernel's, not the schedule's
  bool dvfs_kernel = false;  // dvfs-sim wrote its kernel (dvfs.kernel*): its work is as written, priced as it was
};

void apply_dvfs_kernel(const Node& n, const std::string& file, PlannedNode& p) {
  const AttributeProto* v = find_attr(n.attr(), a::kKernel);
  const AttributeProto* fl = find_attr(n.attr(), a::kKernelFloats);
  const AttributeProto* e = find_attr(n.attr(), a::kKernelEnums);
  if (!v && !fl && !e) return;
  const int floats = fl ? fl->float_list().values_size() : 0;
  if (!v || !fl || !e || v->double_list().values_size() != a::kKernelValues ||
      (floats != a::kKernelFloatCount && floats != a::kUnvectorised) ||
      (e->int64_list().values_size() != a::kKernelEnumCount && e->int64_list().values_size() != a::kTensorIssue))
    throw InputError(file, node_label(n) + " attr " + a::kKernel,
                     "expected dvfs.kernel (" + std::to_string(a::kKernelValues) + " doubles), dvfs.kernel_floats (" +
                         std::to_string(a::kKernelFloatCount) + " floats, or " + std::to_string(a::kUnvectorised) +
                         " without the unvectorised rate) and dvfs.kernel_enums (" + std::to_string(a::kKernelEnumCount) + " integers)");
  const auto& d = v->double_list().values();
  const auto& f = fl->float_list().values();
  const auto& q = e->int64_list().values();
  for (int i = 0; i < a::kKernelValues; ++i)
    if (!std::isfinite(d[i]) || d[i] < 0 || d[i] > kMaxTraceSpanS)
      throw InputError(file, node_label(n) + " attr " + a::kKernel, "value " + std::to_string(i) + " out of range (expected finite seconds in [0, 86400])");
  for (int i = 0; i < floats; ++i)
    if (!std::isfinite(f[i]) || f[i] < 0 || f[i] > (i == a::kSmFill ? 1.0f : 1e9f) || (i == a::kSmFill && f[i] <= 0))
      throw InputError(file, node_label(n) + " attr " + a::kKernelFloats, "value " + std::to_string(i) + " out of range (expected finite, >= 0; SM fill in (0, 1])");
  Kernel& k = p.kernel;
  p.duration_s = k.duration_s = d[a::kDuration];
  k.gap_before_s = d[a::kGapBefore];
  p.exact_gap = p.dvfs_kernel = true;
  k.recorded_sm_mhz = f[a::kSmMhz];
  k.recorded_mem_mhz = f[a::kMemMhz];
  k.sm_fill = f[a::kSmFill];
  k.tensor_tflops = f[a::kTensor];
  k.fma_tflops = f[a::kFma];
  k.alu_tops = f[a::kAlu];
  k.memory_tbps = f[a::kMemory];
  k.memory_fill_tbps = f[a::kMemoryFill];
  k.unvectorised_tbps = floats > a::kUnvectorised ? f[a::kUnvectorised] : 0.0f;
  if (k.unvectorised_tbps > k.memory_tbps)
    throw InputError(file, node_label(n) + " attr " + a::kKernelFloats,
                     "value " + std::to_string(a::kUnvectorised) + " (unvectorised TB/s) above value " + std::to_string(a::kMemory) +
                         " (memory TB/s): expected a part of it");
  auto in_range = [&](int i, std::int64_t hi) {
    if (q[i] < 0 || q[i] >= hi) throw InputError(file, node_label(n) + " attr " + a::kKernelEnums, "value " + std::to_string(i) + " out of range");
    return q[i];
  };
  k.cls = static_cast<KernelClass>(in_range(a::kClass, kKernelClassCount));
  k.kind = static_cast<ActivityKind>(in_range(a::kKind, 3));
  k.stream = static_cast<std::uint16_t>(in_range(a::kStream, 65536));
  k.step = static_cast<std::int32_t>(q[a::kStep] < 0 ? -1 : q[a::kStep]);
  k.annotation_set = static_cast<std::uint32_t>(in_range(a::kAnnotationSet, 1LL << 31));
  k.tensor_precision = static_cast<TensorPrecision>(in_range(a::kPrecision, kTensorPrecisionCount));
  k.work = static_cast<WorkSource>(in_range(a::kWorkSource, kWorkSourceCount));
  if (q.size() > a::kTensorIssue) k.tensor_issue = static_cast<TensorIssue>(in_range(a::kTensorIssue, 2));
  if (p.has_call) p.call.group = static_cast<std::int32_t>(q[a::kGroup] < -1 ? -1 : q[a::kGroup]);
}

void plan_comm(const Node& n, const std::string& file, const GroupTable& groups, PlannedNode& p) {
  p.has_call = true;
  p.kernel.cls = KernelClass::communication;
  const std::int64_t size = required_integer(n, a::kCommSize, file);
  if (size < 0 || static_cast<double>(size) > kMaxCollectiveBytes)
    throw InputError(file, node_label(n) + " attr comm_size", "expected a size in bytes in [0, 1e15] (README \"Limits and bad input\"), got " +
                                                                    std::to_string(size));
  p.call.bytes = static_cast<double>(size);
  if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
    p.call.kind = collective_kind(required_integer(n, a::kCommType, file), n, file);
    const AttributeProto* pg = find_attr(n.attr(), a::kPgName);
    if (pg) {
      const auto it = groups.by_pg_name.find(pg->string_val());
      if (it == groups.by_pg_name.end())
        throw InputError(file, node_label(n) + " attr pg_name", "\"" + pg->string_val() + "\" is not a group of the trace's dvfs.comm_groups");
      p.call.group = it->second;
    } else {
      p.call.group = groups.world;
    }
    return;
  }
  const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
  p.call.kind = send ? CollectiveKind::send : CollectiveKind::recv;
  const std::int64_t peer = required_integer(n, send ? a::kCommDst : a::kCommSrc, file);
  if (peer < 0 || peer >= kMaxGroupSize)
    throw InputError(file, node_label(n) + " attr " + (send ? a::kCommDst : a::kCommSrc), "expected a rank in [0, " + std::to_string(kMaxGroupSize) + ")");
  p.call.peer = static_cast<std::int32_t>(peer);
}

PlannedNode plan_node(const Node& n, const std::string& file, const GroupTable& groups, const Classifier& classifier) {
  PlannedNode p;
  if (static_cast<double>(n.duration_micros()) > kMaxTraceSpanS * 1e6)
    throw InputError(file, node_label(n) + " duration_micros", "expected at most " + std::to_string(static_cast<long>(kMaxTraceSpanS)) + " s");
  p.duration_s = static_cast<double>(n.duration_micros()) * 1e-6;
  p.kernel.duration_s = p.duration_s;
  if (n.type() == ChakraProtoMsg::METADATA_NODE) return p;
  // A node the host runs (is_cpu_op): its time is device idle time where the graph waits for it. Chakra's PyTorch
  // converter writes the CPU side of each collective (`c10d::allreduce_`, ...) as a COMM_COLL_NODE of that kind,
  // without comm_size: the GPU-side node (the NCCL kernel) carries the collective.
  const AttributeProto* cpu = find_attr(n.attr(), a::kIsCpuOp);
  if (cpu && cpu->value_case() != AttributeProto::kBoolVal) throw InputError(file, node_label(n) + " attr is_cpu_op", "expected bool_val");
  if (runs_on_host(n)) {
    p.where = PlannedNode::Where::host;
    return p;
  }
  switch (n.type()) {
    case ChakraProtoMsg::COMP_NODE: p.kernel.cls = classifier.kernel_class(n.name(), ActivityKind::kernel); break;
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      p.kernel.kind = ActivityKind::memcpy;
      p.kernel.cls = classifier.kernel_class(n.name(), ActivityKind::memcpy);
      break;
    case ChakraProtoMsg::COMM_COLL_NODE:
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE: plan_comm(n, file, groups, p); break;
    default:
      throw InputError(file, node_label(n) + " type",
                       std::to_string(static_cast<int>(n.type())) +
                           " is not a node type dvfs-sim reads: expected COMP_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMM_COLL_NODE, "
                           "COMM_SEND_NODE, COMM_RECV_NODE or METADATA_NODE");
  }
  p.where = PlannedNode::Where::device;
  if (!p.has_call) {  // Chakra's work figures as rates over the node's time
    const AttributeProto* ops = find_attr(n.attr(), a::kNumOps);
    const AttributeProto* size = find_attr(n.attr(), a::kTensorSize);
    const double o = ops ? static_cast<double>(integer(*ops, file, node_label(n))) : 0;
    const double b = size ? static_cast<double>(integer(*size, file, node_label(n))) : 0;
    p.bytes = b > 0 ? static_cast<std::uint64_t>(b) : 0;
    if ((o > 0 || b > 0) && p.duration_s > 0) {
      const bool tensor = p.kernel.cls == KernelClass::gemm || p.kernel.cls == KernelClass::attention;
      (tensor ? p.kernel.tensor_tflops : p.kernel.alu_tops) = static_cast<float>(o / p.duration_s * 1e-12);
      if (tensor && o > 0) p.kernel.tensor_precision = TensorPrecision::bf16;
      p.kernel.memory_tbps = static_cast<float>(b / p.duration_s * 1e-12);
      p.kernel.work = WorkSource::shapes;
      if (o / p.duration_s > 1e21 || b / p.duration_s > 1e21)  // beyond any GPU by 10^3: a unit error, not a kernel
        throw InputError(file, node_label(n) + (o / p.duration_s > 1e21 ? " attr num_ops" : " attr tensor_size"),
                         "expected at most 1e21 per second of duration_micros");
    }
  }
  apply_dvfs_kernel(n, file, p);
  return p;
}

// What reading the dependencies found, for the import's notes.
struct DependencyNotes {
  std::size_t absent = 0;     // dependencies on nodes the files do not hold, taken as met
  std::size_t ctrl_cycles = 0;  // rank files whose ctrl_deps closed a cycle: scheduled on data_deps alone
};

// The schedule's edges: each node's children and how many parents it waits for; ctrl_deps too when `with_ctrl`.
// A dependency on a node the file does not hold counts as met (`absent`): Chakra's PyTorch converter drops nodes it
// does not convert (the process's root, CPU operators without a GPU child) and keeps the edges to them.
struct DependencyGraph {
  std::vector<std::vector<std::size_t>> children;
  std::vector<std::size_t> waiting;
  std::size_t absent = 0;
};

DependencyGraph dependency_graph(const std::vector<Node>& nodes, const std::unordered_map<std::uint64_t, std::size_t>& index, bool with_ctrl) {
  DependencyGraph g{std::vector<std::vector<std::size_t>>(nodes.size()), std::vector<std::size_t>(nodes.size(), 0), 0};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::set<std::uint64_t> deps(nodes[i].data_deps().begin(), nodes[i].data_deps().end());
    if (with_ctrl) deps.insert(nodes[i].ctrl_deps().begin(), nodes[i].ctrl_deps().end());
    for (std::uint64_t d : deps) {
      const auto it = index.find(d);
      if (it == index.end()) {
        ++g.absent;
        continue;
      }
      g.children[it->second].push_back(i);
      ++g.waiting[i];
    }
  }
  return g;
}

// The nodes in the order the graph runs them, with each device node's start time; nullopt when nodes are left
// waiting (a cycle), `stuck` then one of them.
std::optional<std::vector<std::pair<std::size_t, double>>> run_graph(const std::vector<PlannedNode>& plan, DependencyGraph g, std::size_t& stuck) {
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (!g.waiting[i]) ready.push(i);
  std::vector<double> ready_at(plan.size(), 0.0);
  double host_free = 0, device_free = 0;
  std::vector<std::pair<std::size_t, double>> order;
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    ++done;
    const PlannedNode& p = plan[i];
    double* free = p.where == PlannedNode::Where::host ? &host_free : p.where == PlannedNode::Where::device ? &device_free : nullptr;
    const double start = free ? std::max(ready_at[i], *free) : ready_at[i];
    const double end = start + p.duration_s;
    if (free) *free = end;
    if (p.where == PlannedNode::Where::device) order.emplace_back(i, start);
    for (std::size_t c : g.children[i]) {
      ready_at[c] = std::max(ready_at[c], end);
      if (--g.waiting[c] == 0) ready.push(c);
    }
  }
  if (done == plan.size()) return order;
  // A node on a cycle: every node left waiting waits for another one left waiting, so walking those waits from any of
  // them as many steps as there are nodes ends on a cycle (the first one left might only sit downstream of one).
  std::vector<std::size_t> waits_for(plan.size(), 0);
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (g.waiting[i])
      for (std::size_t c : g.children[i])
        if (g.waiting[c]) waits_for[c] = i;
  stuck = static_cast<std::size_t>(std::find_if(g.waiting.begin(), g.waiting.end(), [](std::size_t w) { return w > 0; }) - g.waiting.begin());
  for (std::size_t step = 0; step < plan.size(); ++step) stuck = waits_for[stuck];
  return std::nullopt;
}

// The nodes in the order the schedule runs them, with each device node's start time: on data_deps and ctrl_deps; where
// ctrl_deps close a cycle with data_deps (Chakra's converter writes an operator's ctrl_deps naming its own kernel, which
// depends on it), on data_deps alone, as Chakra's own feeder (ETFeeder, the one ASTRA-sim reads through) schedules.
std::vector<std::pair<std::size_t, double>> schedule(const std::vector<Node>& nodes, const std::vector<PlannedNode>& plan, const std::string& file,
                                                     DependencyNotes& notes) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  index.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (!index.emplace(nodes[i].id(), i).second) throw InputError(file, node_label(nodes[i]) + " id", "the id is used by an earlier node too");
  std::size_t stuck = 0;
  DependencyGraph both = dependency_graph(nodes, index, true);
  const std::size_t absent = both.absent;
  if (auto order = run_graph(plan, std::move(both), stuck)) {
    notes.absent += absent;
    return std::move(*order);
  }
  DependencyGraph data = dependency_graph(nodes, index, false);
  notes.absent += data.absent;
  if (auto order = run_graph(plan, std::move(data), stuck)) {
    ++notes.ctrl_cycles;
    return std::move(*order);
  }
  throw InputError(file, node_label(nodes[stuck]) + " data_deps", "the node is on a cycle of data dependencies: expected a DAG");
}

void read_annotations(const ParsedRank& p, Workload& wl) {
  const AttributeProto* at = find_attr(p.file.metadata.attr(), a::kAnnotations);
  if (!at) return;
  const std::string field = std::string("GlobalMetadata attr ") + a::kAnnotations;
  const Json j = parse_json_text(at->string_val(), p.path + " (" + field + ")", DuplicateKeys::last_wins);
  if (!j.is_object() || !j.contains("names") || !j["names"].is_array() || !j.contains("sets") || !j["sets"].is_array())
    throw InputError(p.path, field, "expected {names: [...], sets: [{phase, annotations}]}");
  for (const Json& n : j["names"]) wl.annotation_names.push_back(n.is_string() ? n.get<std::string>() : "");
  wl.annotation_sets.clear();
  for (const Json& s : j["sets"]) {
    AnnotationSet set;
    if (!s.is_object() || (s.contains("phase") && !s["phase"].is_string()) || (s.contains("annotations") && !s["annotations"].is_array()))
      throw InputError(p.path, field, "expected sets {phase, annotations}");
    const std::string phase = s.value("phase", std::string("other"));
    for (Phase ph : {Phase::forward, Phase::backward, Phase::optimizer, Phase::other})
      if (phase == to_string(ph)) set.phase = ph;
    for (const Json& x : s.value("annotations", Json::array())) {
      if (!x.is_number_unsigned() || x.get<std::size_t>() >= wl.annotation_names.size())
        throw InputError(p.path, field, "an annotation index is out of range");
      set.annotations.push_back(x.get<std::uint32_t>());
    }
    wl.annotation_sets.push_back(set);
  }
  if (wl.annotation_sets.empty()) wl.annotation_sets.emplace_back();
}

void read_steps(const ParsedRank& p, Rank& r) {
  const AttributeProto* at = find_attr(p.file.metadata.attr(), a::kSteps);
  if (!at) return;
  const std::string field = std::string("GlobalMetadata attr ") + a::kSteps;
  const Json j = parse_json_text(at->string_val(), p.path + " (" + field + ")", DuplicateKeys::last_wins);
  if (!j.is_array() || static_cast<double>(j.size()) > kMaxReplayedSteps) throw InputError(p.path, field, "expected a JSON array of steps");
  for (const Json& s : j) {
    if (!s.is_object() || (s.contains("label") && !s["label"].is_string()) || (s.contains("lead_s") && !s["lead_s"].is_number()) ||
        (s.contains("tail_s") && !s["tail_s"].is_number()))
      throw InputError(p.path, field, "expected steps {label, lead_s, tail_s}");
    Step st;
    st.label = s.value("label", std::string());
    st.lead_s = s.value("lead_s", 0.0);
    st.tail_s = s.value("tail_s", 0.0);
    r.steps.push_back(st);
  }
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    Kernel& k = r.kernels[i];
    if (k.step < 0) continue;
    if (static_cast<std::size_t>(k.step) >= r.steps.size()) k.step = -1;
    else {
      Step& st = r.steps[static_cast<std::size_t>(k.step)];
      if (st.first_kernel < 0) st.first_kernel = static_cast<std::int32_t>(i);
      st.last_kernel = static_cast<std::int32_t>(i);
    }
  }
}

std::string metadata_string(const ParsedRank& p, const char* name) {
  const AttributeProto* at = find_attr(p.file.metadata.attr(), name);
  return at && at->value_case() == AttributeProto::kStringVal ? at->string_val() : "";
}

Workload rank_workload(const ParsedRank& p, const GroupTable& groups, const Classifier& classifier, std::size_t& host_nodes,
                       DependencyNotes& deps) {
  const std::vector<Node>& nodes = p.file.nodes;
  std::vector<PlannedNode> plan;
  plan.reserve(nodes.size());
  for (const Node& n : nodes) {
    plan.push_back(plan_node(n, p.path, groups, classifier));
    if (plan.back().where == PlannedNode::Where::host && !find_attr(n.attr(), a::kGap)) ++host_nodes;  // dvfs-sim's gap nodes are no news
  }
  const auto order = schedule(nodes, plan, p.path, deps);
  Workload wl;
  wl.source = p.path;
  wl.groups = groups.ranks;
  wl.group_names = groups.names;
  wl.group_sizes = groups.sizes;
  read_annotations(p, wl);
  Rank r;
  r.id = p.rank;
  r.device_name = metadata_string(p, a::kDeviceName);
  std::unordered_map<std::string, std::uint32_t> names;
  double device_end = 0, first_start = 0;
  bool any_bytes = false;
  for (const auto& [i, start] : order) {
    PlannedNode pn = plan[i];
    Kernel k = pn.kernel;
    if (!pn.exact_gap) k.gap_before_s = r.kernels.empty() ? 0.0 : std::max(0.0, start - device_end);
    if (r.kernels.empty()) first_start = start;
    device_end = start + pn.duration_s;
    auto [it, inserted] = names.emplace(nodes[i].name(), static_cast<std::uint32_t>(wl.names.size()));
    if (inserted) wl.names.push_back(nodes[i].name());
    k.name_id = it->second;
    if (k.annotation_set >= wl.annotation_sets.size())
      throw InputError(p.path, node_label(nodes[i]) + " attr " + a::kKernelEnums, "annotation set out of range of dvfs.annotations");
    if (pn.has_call) {
      if (pn.call.group >= static_cast<std::int32_t>(wl.groups.size()))
        throw InputError(p.path, node_label(nodes[i]) + " attr " + a::kKernelEnums, "group out of range of dvfs.comm_groups");
      wl.collectives.push_back(pn.call);
      k.collective = static_cast<std::uint32_t>(wl.collectives.size());
      // a timed send / receive of another tool's file: its comm_size bytes (dvfs-sim's own files say how it was priced)
      if (!pn.dvfs_kernel) price_transfer_by_bytes(wl, k, pn.duration_s);
    }
    r.recorded_start_s.push_back(start - first_start);
    LaunchShape shape;
    shape.bytes = pn.bytes;
    any_bytes = any_bytes || pn.bytes;
    r.shapes.push_back(shape);
    r.kernels.push_back(k);
  }
  if (!any_bytes) r.shapes.clear();
  double span = 0;
  for (const Kernel& k : r.kernels) span += k.gap_before_s + k.duration_s;
  if (span > kMaxTraceSpanS)
    throw InputError(p.path, "nodes", "the device timeline spans " + std::to_string(span) + " s: expected at most " +
                                          std::to_string(static_cast<long>(kMaxTraceSpanS)) + " s (first activity to last)");
  read_steps(p, r);
  wl.ranks.push_back(std::move(r));
  return wl;
}

std::vector<ParsedRank> parse_all(const std::vector<std::string>* bytes, const std::vector<std::string>& names) {
  std::vector<ParsedRank> parts(names.size());
  parallel_for_each_index(names.size(), std::min<std::size_t>(8, hardware_threads()), [&](std::size_t i) {
    parts[i].path = names[i];
    parts[i].file = bytes ? parse_chakra_bytes((*bytes)[i], names[i]) : read_chakra_file(names[i]);
  });
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const AttributeProto* at = find_attr(parts[i].file.metadata.attr(), a::kRank);
    const int from_name = rank_from_name(names[i]);
    const std::int64_t rank = at ? integer(*at, names[i], "GlobalMetadata") : from_name >= 0 ? from_name : static_cast<int>(i);
    if (rank < 0 || rank >= kMaxGroupSize)
      throw InputError(names[i], std::string("GlobalMetadata attr ") + a::kRank, "expected a rank in [0, " + std::to_string(kMaxGroupSize) + ")");
    parts[i].rank = static_cast<int>(rank);
  }
  return parts;
}

Workload import_parsed(std::vector<ParsedRank> parts, const Classifier& classifier, ImportReport* report) {
  const GroupTable groups = group_table(parts);
  std::vector<RankTrace> traces;
  std::size_t host_nodes = 0, metadata_nodes = 0;
  DependencyNotes deps;
  for (const ParsedRank& p : parts) {
    for (const Node& n : p.file.nodes) metadata_nodes += n.type() == ChakraProtoMsg::METADATA_NODE;
    traces.push_back({rank_workload(p, groups, classifier, host_nodes, deps), p.path, -1, ""});
  }
  Workload wl = merge_rank_workloads(std::move(traces), nullptr);
  wl.source = parts.front().path;
  if (wl.kernel_count() == 0)  // as a Kineto trace without device activity: nothing to replay
    throw InputError(parts.front().path, "nodes",
                     "no device work: expected compute or communication nodes that run on the GPU (is_cpu_op false); the " +
                         std::to_string(parts.size()) + " rank file(s) hold " + std::to_string(host_nodes) + " host (is_cpu_op) and " +
                         std::to_string(metadata_nodes) + " METADATA nodes");
  if (report) {
    report->schema = "chakra";
    report->activities = wl.kernel_count();
    report->step_source = "none";
    for (const Rank& r : wl.ranks)
      if (!r.steps.empty()) report->step_source = "dvfs.steps";
    report->device_name = wl.ranks.empty() ? "" : wl.ranks.front().device_name;
    report->device_platform = "cuda";
    report->world_size = parts.size() > 1 ? static_cast<int>(parts.size()) : -1;
    if (host_nodes)
      report->notes.push_back(std::to_string(host_nodes) + " host (is_cpu_op) nodes: their time is device idle time where the graph waits for them");
    if (metadata_nodes) report->notes.push_back(std::to_string(metadata_nodes) + " METADATA_NODEs ignored");
    if (deps.absent)
      report->notes.push_back(std::to_string(deps.absent) + " dependencies on nodes the files do not hold, taken as met (Chakra's "
                              "converter drops nodes it does not convert and keeps the edges to them)");
    if (deps.ctrl_cycles)
      report->notes.push_back(std::to_string(deps.ctrl_cycles) + " of " + std::to_string(parts.size()) +
                              " rank file(s): ctrl_deps close cycles with data_deps, so their nodes are scheduled on data_deps alone "
                              "(as Chakra's feeder, ETFeeder, schedules every file)");
    if (groups.world >= 0 && parts.size() == 1)
      report->notes.push_back("collectives without pg_name in a single rank file: the job's ranks are unknown, so they keep their recorded durations");
  }
  return wl;
}

}  // namespace

bool is_chakra_trace(const std::string& path) {
  if (ends_with(path, ".et") || ends_with(path, ".et.gz")) return true;
  return !is_file(path) && (is_file(path + ".0.et") || is_file(path + ".0.et.gz"));
}

std::vector<std::string> chakra_rank_files(const std::string& path) {
  if (is_file(path) || ends_with(path, ".et") || ends_with(path, ".et.gz")) return {path};
  // P.0.et .. P.<n-1>.et (or .et.gz), none missing: a file beyond a gap is refused, not left out
  const std::vector<std::string> files = rank_numbered_entries({path + ".", {".et", ".et.gz"}, false, "rank files", kMaxGroupSize});
  if (files.empty()) throw InputError(path, "", "expected a Chakra trace: a .et file, or a prefix P with files P.0.et, P.1.et, ...");
  return files;
}

Workload import_chakra(const std::string& path, const Classifier& classifier, ImportReport* report) {
  const std::vector<std::string> files = chakra_rank_files(path);
  return import_parsed(parse_all(nullptr, files), classifier, report);
}

Workload import_chakra_bytes(const std::vector<std::string>& bytes, const std::vector<std::string>& names, const Classifier& classifier,
                             ImportReport* report) {
  if (bytes.empty() || bytes.size() != names.size()) throw InputError("chakra", "", "expected one name per file");
  return import_parsed(parse_all(&bytes, names), classifier, report);
}

}  // namespace dvfs
