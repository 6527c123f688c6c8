#include "traces/src/chakra/chakra_writer.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/parallel.hpp"
#include "traces/src/chakra/chakra_attrs.hpp"
#include "traces/src/chakra/chakra_stream.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

namespace dvfs {

namespace a = chakra_attr;
using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

namespace {

AttributeProto* attr(google::protobuf::RepeatedPtrField<AttributeProto>* attrs, const char* name) {
  AttributeProto* p = attrs->Add();
  p->set_name(name);
  return p;
}

ChakraProtoMsg::CollectiveCommType comm_type(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveKind::reduce_scatter: return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveKind::all_gather: return ChakraProtoMsg::ALL_GATHER;
    case CollectiveKind::broadcast: return ChakraProtoMsg::BROADCAST;
    case CollectiveKind::all_to_all: return ChakraProtoMsg::ALL_TO_ALL;
    default: return ChakraProtoMsg::ALL_REDUCE;  // send / recv are not collectives
  }
}

Json groups_json(const Workload& wl) {
  Json groups = Json::array();
  for (std::size_t g = 0; g < wl.groups.size(); ++g)
    groups.push_back({{"pg_name", std::to_string(g)},
                      {"name", g < wl.group_names.size() ? wl.group_names[g] : ""},
                      {"ranks", wl.groups[g]},
                      {"size", g < wl.group_sizes.size() ? wl.group_sizes[g] : static_cast<int>(wl.groups[g].size())}});
  return groups;
}

Json annotations_json(const Workload& wl) {
  Json sets = Json::array();
  for (const AnnotationSet& s : wl.annotation_sets) sets.push_back({{"phase", to_string(s.phase)}, {"annotations", s.annotations}});
  return {{"names", wl.annotation_names}, {"sets", sets}};
}

ChakraProtoMsg::GlobalMetadata metadata(const Workload& wl, const Rank& r, const std::string& groups, const std::string& annotations) {
  ChakraProtoMsg::GlobalMetadata m;
  m.set_version("1.0.0");
  auto* at = m.mutable_attr();
  attr(at, a::kSchema)->set_string_val(a::kSchemaValue);
  attr(at, a::kRank)->set_int64_val(r.id);
  attr(at, a::kDeviceName)->set_string_val(r.device_name);
  attr(at, a::kCommGroups)->set_string_val(groups);
  attr(at, a::kAnnotations)->set_string_val(annotations);
  Json steps = Json::array();
  for (const Step& s : r.steps) steps.push_back({{"label", s.label}, {"lead_s", s.lead_s}, {"tail_s", s.tail_s}});
  attr(at, a::kSteps)->set_string_val(steps.dump());
  (void)wl;
  return m;
}

std::uint64_t micros(double s) { return s <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(s * 1e6)); }

// A collective or send / recv: Chakra's attributes for it (pg_name when the group is known).
void comm_attrs(Node& n, const CollectiveCall& c, int self, std::map<std::pair<int, int>, int>& tags) {
  auto* at = n.mutable_attr();
  attr(at, a::kCommSize)->set_int64_val(static_cast<std::int64_t>(std::llround(c.bytes)));
  if (is_transfer(c.kind)) {
    const bool send = c.kind == CollectiveKind::send;
    n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
    const auto [src, dst] = transfer_channel(c, self);
    attr(at, a::kCommSrc)->set_int32_val(src);
    attr(at, a::kCommDst)->set_int32_val(dst);
    attr(at, a::kCommTag)->set_int32_val(tags[{src, dst}]++);
    return;
  }
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  attr(at, a::kCommType)->set_int64_val(comm_type(c.kind));
  if (c.group >= 0) attr(at, a::kPgName)->set_string_val(std::to_string(c.group));
}

using Channels = std::set<std::pair<int, int>>;  // (sender, receiver)

// The channels some batch of sends and receives uses (CollectiveCall::batched). Chakra's nodes make one transfer each,
// and a chain of a batch's transfers would wait in an order the batch does not (both ranks of an exchange send first):
// every transfer on such a channel, batched or not, is written as a compute node of its kernel's duration, so that the
// channel's other transfers do not wait for partners that are not there and its tags stay in step.
Channels batched_channels(const Workload& wl) {
  Channels out;
  if (std::none_of(wl.collectives.begin(), wl.collectives.end(), [](const CollectiveCall& c) { return c.batched > 0; })) return out;
  for (const Rank& r : wl.ranks)
    for (const Kernel& k : r.kernels) {
      const CallSpan<const CollectiveCall> calls = calls_of(wl, k);
      if (calls.size() < 2) continue;
      for (const CollectiveCall& c : calls)
        if (is_transfer(c.kind)) out.insert(transfer_channel(c, r.id));
    }
  return out;
}

void kernel_node(Node& n, const Workload& wl, const Rank& r, std::size_t i, std::map<std::pair<int, int>, int>& tags, const Channels& batched) {
  const Kernel& k = r.kernels[i];
  n.set_name(k.name_id < wl.names.size() ? wl.names[k.name_id] : "kernel");
  n.set_duration_micros(micros(k.duration_s));
  auto* at = n.mutable_attr();  // is_cpu_op left out: Chakra's default is false (a device node)
  const CollectiveCall* c = k.collective ? &wl.collectives[k.collective - 1] : nullptr;
  // A send / receive with no peer (none recorded, or inferred ones that did not pair up), or to the rank itself (NCCL
  // copies it on the GPU), kept its recorded duration: a compute node of its kernel's name keeps it so (a
  // COMM_SEND_NODE must name its peer, and a self send and receive would share one channel's tags).
  if (c && (transfer_without_peer(*c) || transfer_to_self(*c, r.id))) c = nullptr;
  // A batch of sends and receives, or a transfer on a channel a batch uses: a compute node (batched_channels).
  if (c && (c->batched > 0 || (is_transfer(c->kind) && batched.count(transfer_channel(*c, r.id))))) c = nullptr;
  if (c) {
    comm_attrs(n, *c, r.id, tags);
  } else {
    n.set_type(k.kind == ActivityKind::kernel ? ChakraProtoMsg::COMP_NODE : ChakraProtoMsg::MEM_STORE_NODE);
    // counted work only: a launch-sized elementwise estimate is no operator's count (the dvfs attributes keep it)
    const double counted = counted_work(k) ? 1.0 : 0.0;
    const double ops = counted * (static_cast<double>(k.tensor_tflops) + k.fma_tflops + k.alu_tops) * 1e12 * k.duration_s;
    double bytes = counted * static_cast<double>(k.memory_tbps) * 1e12 * k.duration_s;
    if (i < r.shapes.size() && r.shapes[i].bytes) bytes = static_cast<double>(r.shapes[i].bytes);
    if (ops > 0) attr(at, a::kNumOps)->set_int64_val(std::llround(ops));
    if (bytes > 0) attr(at, a::kTensorSize)->set_uint64_val(static_cast<std::uint64_t>(std::llround(bytes)));
  }
  auto* v = attr(at, a::kKernel)->mutable_double_list()->mutable_values();
  const double values[a::kKernelValues] = {k.duration_s, k.gap_before_s};
  v->Add(values, values + a::kKernelValues);
  auto* f = attr(at, a::kKernelFloats)->mutable_float_list()->mutable_values();
  const float floats[a::kKernelFloatCount] = {k.recorded_sm_mhz, k.recorded_mem_mhz, k.sm_fill, k.tensor_tflops,
                                              k.fma_tflops, k.alu_tops, k.memory_tbps, k.memory_fill_tbps, k.unvectorised_tbps};
  f->Add(floats, floats + a::kKernelFloatCount);
  auto* e = attr(at, a::kKernelEnums)->mutable_int64_list()->mutable_values();
  const std::int64_t enums[a::kKernelEnumCount] = {static_cast<int>(k.cls), static_cast<int>(k.kind), k.stream, k.step,
                                                   k.annotation_set, static_cast<int>(k.tensor_precision),
                                                   static_cast<int>(k.work), c ? c->group : -2, static_cast<int>(k.tensor_issue)};
  e->Add(enums, enums + a::kKernelEnumCount);
}

std::string rank_bytes(const Workload& wl, std::size_t ri, const std::string& groups, const std::string& annotations, const Channels& batched,
                       std::size_t* nodes) {
  const Rank& r = wl.ranks[ri];
  std::string out;
  append_delimited(out, metadata(wl, r, groups, annotations));
  std::map<std::pair<int, int>, int> tags;
  Node n;
  std::uint64_t id = 0;
  std::int64_t prev = -1;
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    // The host time before the activity, for readers that time the graph (to their microsecond; dvfs.kernel has it exactly).
    if (micros(r.kernels[i].gap_before_s) > 0) {
      n.Clear();
      n.set_id(id);
      n.set_name("dvfs-sim host gap");
      n.set_type(ChakraProtoMsg::COMP_NODE);
      n.set_duration_micros(micros(r.kernels[i].gap_before_s));
      if (prev >= 0) n.add_data_deps(static_cast<std::uint64_t>(prev));
      attr(n.mutable_attr(), a::kIsCpuOp)->set_bool_val(true);
      attr(n.mutable_attr(), a::kGap)->set_bool_val(true);
      append_delimited(out, n);
      prev = static_cast<std::int64_t>(id++);
    }
    n.Clear();
    n.set_id(id);
    if (prev >= 0) n.add_data_deps(static_cast<std::uint64_t>(prev));
    kernel_node(n, wl, r, i, tags, batched);
    append_delimited(out, n);
    prev = static_cast<std::int64_t>(id++);
  }
  if (nodes) *nodes += id;
  return out;
}

double cpu_seconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

}  // namespace

std::string chakra_rank_bytes(const Workload& wl, std::size_t rank_index) {
  return rank_bytes(wl, rank_index, groups_json(wl).dump(), annotations_json(wl).dump(), batched_channels(wl), nullptr);
}

ChakraExportStats write_chakra_trace(const Workload& wl, const std::string& dir, const ChakraExportOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir, "", "cannot create the Chakra trace directory: " + ec.message());
  const Json groups = groups_json(wl);
  const std::string groups_text = groups.dump(), annotations = annotations_json(wl).dump();
  const Channels batched = batched_channels(wl);
  Json astra = Json::object();  // ASTRA-sim's --comm-group-configuration: pg_name -> ranks
  for (const Json& g : groups) astra[g["pg_name"].get<std::string>()] = g["ranks"];
  write_chakra_bytes(dir + "/comm_group.json", astra.dump(2) + "\n");
  ChakraExportStats st;
  std::atomic<std::size_t> nodes{0}, bytes{0};
  parallel_for_each_index(wl.ranks.size(), opts.threads > 0 ? static_cast<std::size_t>(opts.threads) : hardware_threads(),
                          [&](std::size_t i) {
                            std::size_t n = 0;
                            const std::string b = rank_bytes(wl, i, groups_text, annotations, batched, &n);
                            const std::string path = dir + "/" + opts.name + "." + std::to_string(wl.ranks[i].id) + ".et" +
                                                     (opts.gzip ? ".gz" : "");
                            write_chakra_bytes(path, b);
                            nodes += n;
                            bytes += b.size();
                          });
  st.files = wl.ranks.size();
  st.nodes = nodes;
  st.bytes = bytes;
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  st.cpu_s = cpu_seconds() - c0;
  return st;
}

Json chakra_export_stats_json(const ChakraExportStats& st, const std::string& dir, const ChakraExportOptions& opts) {
  return {{"dir", dir},
          {"files", dir + "/" + opts.name + ".<rank>.et" + (opts.gzip ? ".gz" : "")},
          {"ranks", st.files},
          {"nodes", st.nodes},
          {"bytes", st.bytes},
          {"seconds", st.seconds},
          {"cpu_s", st.cpu_s}};
}

}  // namespace dvfs
