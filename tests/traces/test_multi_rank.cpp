#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/engine.hpp"
#include "models/src/collective_cost.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/results/summary.hpp"
#include "sim/results/trace_export.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/multi_rank.hpp"
#include "rank_trace_fixtures.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

using testing::rank_part;
using Ev = testing::RankEvent;

std::string allreduce(double nelems, const char* ranks = "[0, 1]", const char* name = "allreduce") {
  return testing::allreduce_args(nelems, ranks, name);
}

// Rank 1 computes for 2 ms before the all-reduce of 100 MB, rank 0 for 1 ms.
Workload two_ranks(const char* ranks = "[0, 1]") {
  std::vector<RankTrace> parts;
  parts.push_back(rank_part(0, {{"ampere_bf16_gemm", 0, 1000, ""}, {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, 1500, allreduce(2.5e7, ranks)},
                           {"ampere_bf16_gemm", 2500, 1000, ""}}));
  parts.push_back(rank_part(1, {{"ampere_bf16_gemm", 0, 2000, ""}, {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2000, 500, allreduce(2.5e7, ranks)},
                           {"ampere_bf16_gemm", 2500, 1000, ""}}));
  return merge_rank_workloads(std::move(parts));
}

using testing::replay;
using testing::two_nodes;

}  // namespace

TEST_CASE("NCCL kernels in a rank trace become collective calls of their process group", "[traces][multi-rank]") {
  const Workload wl = rank_part(1, {{"k", 0, 10, ""}, {"ncclDevKernel_AllGather", 10, 5, allreduce(1000, "[0, 1]", "_allgather_base")}}).workload;
  REQUIRE(wl.ranks.size() == 1);
  CHECK(wl.ranks[0].id == 1);  // distributedInfo.rank
  REQUIRE(wl.collectives.size() == 1);
  CHECK(wl.collectives[0].kind == CollectiveKind::all_gather);
  CHECK(wl.collectives[0].bytes == 4000);
  CHECK(wl.groups[0] == std::vector<int>{0, 1});
  CHECK(wl.ranks[0].kernels[1].collective == 1);
  CHECK(wl.ranks[0].kernels[0].collective == 0);
}

TEST_CASE("a collective waits for the slowest rank and then takes the network's time", "[traces][multi-rank]") {
  const Workload wl = two_ranks();
  REQUIRE(wl.ranks.size() == 2);
  const ClusterSpec cs = two_nodes();
  const auto out = replay(wl, cs);
  const GpuModel m = load_gpu_model("h200");
  const int top = static_cast<int>(m.sm_clocks_mhz().size()) - 1, mem = static_cast<int>(m.mem_clocks_mhz().size()) - 1;
  const double c0 = m.kernel_time_s(wl.ranks[0].kernels[0], top, mem), c1 = m.kernel_time_s(wl.ranks[1].kernels[0], top, mem);
  const double ring = collective_time_s(CollectiveKind::all_reduce, false, 2, 1e8, cs.inter_bw_bps, cs.inter_latency_s);
  const double after = m.kernel_time_s(wl.ranks[0].kernels[2], top, mem);
  // Both leave the all-reduce when the slower rank has arrived and the ring is done.
  CHECK(out[0].stats.end_s == Approx(c1 + ring + after).epsilon(1e-9));
  CHECK(out[1].stats.end_s == Approx(c1 + ring + after).epsilon(1e-9));
  // Rank 0 spends its wait for rank 1 inside the collective, at the communication kernel's power.
  const double comm0 = out[0].meter.class_s()[static_cast<int>(KernelClass::communication)], comm1 = out[1].meter.class_s()[static_cast<int>(KernelClass::communication)];
  CHECK(comm0 == Approx(c1 - c0 + ring).epsilon(1e-9));
  CHECK(comm1 == Approx(ring).epsilon(1e-9));
  CHECK(c1 > c0);
}

TEST_CASE("collectives of a group not all imported keep their recorded duration", "[traces][multi-rank]") {
  std::vector<RankTrace> parts;
  parts.push_back(rank_part(0, {{"g", 0, 1000, ""}, {"ncclDevKernel_AllReduce", 1000, 1500, allreduce(2.5e7)}}));
  const Workload wl = merge_rank_workloads(std::move(parts));
  CHECK_FALSE(group_complete(wl, 0));
  const auto out = replay(wl, two_nodes());
  CHECK(out[0].meter.class_s()[static_cast<int>(KernelClass::communication)] == Approx(1.5e-3).epsilon(1e-9));
  const Json d = describe_collectives(wl);
  CHECK(d["calls_at_recorded_duration"] == 1);
  CHECK(d["calls_simulated"] == 0);
}

TEST_CASE("the report names the process groups whose collectives keep their recorded duration", "[traces][multi-rank]") {
  std::vector<RankTrace> parts;
  parts.push_back(rank_part(0, {{"g", 0, 1000, ""}, {"ncclDevKernel_AllReduce", 1000, 1500, allreduce(2.5e7)}}));
  const Workload wl = merge_rank_workloads(std::move(parts));
  const GpuModel m = load_gpu_model("h200");
  Scenario sc;
  sc.name = "one-of-two";
  const std::string text = format_report(build_summary(sc, wl, ImportReport{}, m, replay(wl, two_nodes())));
  CHECK_THAT(text, Catch::Contains("collectives: 0 simulated on the cluster, 1 at their recorded duration (process groups not "
                                   "simulated, their ranks not all in this import, their calls differing or of one rank: \"0\" of 2 ranks, 1 call)"));
  // Both ranks here: every call runs on the cluster, and the line says only that.
  const Workload both = two_ranks();
  const std::string full = format_report(build_summary(sc, both, ImportReport{}, m, replay(both, two_nodes())));
  CHECK_THAT(full, Catch::Contains("collectives: 2 simulated on the cluster, 0 at their recorded duration\n"));
}

TEST_CASE("NCCL kernels with no collective record are named in a note, kept at their recorded time", "[traces][multi-rank]") {
  // A 2023 trace's layout: the NCCL kernel carries no "Collective name" and no record_param_comms range holds one.
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    ImportReport rep;
    const Workload wl = import_kineto_text(testing::rank_trace(0, {{"g", 0, 1000, ""}, {"ncclKernel_AllReduce_RING_LL_Sum_float", 1000, 1500, ""}}),
                                           "old.json", Classifier::load_default(), &rep, reader);
    CHECK(wl.collectives.empty());
    std::string notes;
    for (const std::string& n : rep.notes) notes += n + "\n";
    CHECK_THAT(notes, Catch::Contains("1 NCCL kernel (1.5 ms) carries no collective record") &&
                          Catch::Contains("kept at its recorded duration, not simulated on the cluster"));
  }
  // With the record, no such note.
  ImportReport rep;
  import_kineto_text(testing::rank_trace(0, {{"ncclDevKernel_AllReduce", 0, 10, allreduce(1000)}}), "new.json", Classifier::load_default(), &rep);
  for (const std::string& n : rep.notes) CHECK_THAT(n, !Catch::Contains("no collective record"));
}

namespace {

// A PyTorch 2.0 / 2.1 rank trace: each NCCL kernel's only record is the "nccl:<name>" annotation (`dims`, `type` its
// Input Dims / Input type; "" leaves them out) around its launch on host thread 5, after 1 ms of compute.
struct AnnotatedCall {
  std::string name, kernel, dims, type;
  int kernels = 1;  // launched inside the annotation, 500 us each
};
std::string annotated_rank_trace(int rank, int world, const std::vector<AnnotatedCall>& calls, double compute_us = 1000) {
  std::ostringstream os;
  os << R"({"distributedInfo": {"backend": "nccl", "rank": )" << rank << R"(, "world_size": )" << world << R"(}, "traceEvents": [)"
     << R"({"ph": "X", "cat": "kernel", "name": "ampere_bf16_gemm", "pid": 0, "tid": 7, "ts": 0, "dur": )" << compute_us
     << R"(, "args": {"device": 0, "stream": 7, "correlation": 1}})";
  double t = compute_us;
  long corr = 10;
  for (const AnnotatedCall& c : calls) {
    os << R"(, {"ph": "X", "cat": "user_annotation", "name": ")" << c.name << R"(", "pid": 1, "tid": 5, "ts": )" << t << R"(, "dur": 20, "args": {)";
    if (!c.dims.empty()) os << R"("Input Dims": )" << c.dims << R"(, "Input type": )" << c.type;
    os << "}}";
    for (int k = 0; k < c.kernels; ++k, ++corr)
      os << R"(, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 5, "ts": )" << t + 5 + k
         << R"(, "dur": 1, "args": {"correlation": )" << corr << R"(}}, {"ph": "X", "cat": "kernel", "name": ")" << c.kernel
         << R"(", "pid": 0, "tid": 20, "ts": )" << t + 10 + 500 * k << R"(, "dur": 500, "args": {"device": 0, "stream": 20, "correlation": )"
         << corr << "}}";
    t += 100 + 500 * c.kernels;
  }
  os << "]}";
  return os.str();
}

// `trace` (annotated_rank_trace's) with the kernel of its call `k` carrying a recorded transfer's args instead (as
// PyTorch 2.2+ writes them: a job mixing trace versions).
std::string with_recorded_transfer(std::string trace, int k, const char* kind, int peer) {
  const std::string peer_key = std::string(kind) == "send" ? "Dst Rank" : "Src Rank";
  const std::string args = std::string(R"("Collective name": ")") + kind + R"(", "dtype": "Float", "In msg nelems": 2, "Out msg nelems": 2, )" +
                           R"("Group size": 2, "Process Group Name": "pp", "Process Group Ranks": "[0, 1]", ")" + peer_key + R"(": )" +
                           std::to_string(peer);
  const std::string kernel_args = R"("stream": 20, "correlation": )" + std::to_string(10 + k) + "}";
  trace.replace(trace.find(kernel_args), kernel_args.size(), kernel_args.substr(0, kernel_args.size() - 1) + ", " + args + "}");
  return trace;
}

// Rank `rank` of a job, imported from `text` as "rank<N>.json" (the file the merge's messages name).
RankTrace rank_file(int rank, const std::string& text) {
  const std::string file = "rank" + std::to_string(rank) + ".json";
  return RankTrace{import_kineto_text(text, file, Classifier::load_default()), file, -1, ""};
}

// The collective calls of the workload's first rank, in its kernels' order.
std::vector<const CollectiveCall*> calls_of_first_rank(const Workload& wl) {
  std::vector<const CollectiveCall*> got;
  for (const Kernel& k : wl.ranks.at(0).kernels)
    if (k.collective) got.push_back(&wl.collectives[k.collective - 1]);
  return got;
}

std::string all_notes(const ImportReport& rep) {
  std::string s;
  for (const std::string& n : rep.notes) s += n + "\n";
  return s;
}

}  // namespace

TEST_CASE("NCCL kernels with no record take their collective from the nccl: annotation around their launch", "[traces][multi-rank]") {
  const std::vector<AnnotatedCall> calls = {{"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", "[[1000]]", R"(["float"])"},
                                            {"nccl:_all_gather_base", "ncclKernel_AllGather_RING_LL_Sum_int8_t", "[[64, 8]]", R"(["c10::BFloat16"])"},
                                            {"nccl:all_to_all", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "[[48]]", R"(["long"])"},
                                            {"nccl:send", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "[[16]]", R"(["float"])"},
                                            {"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", "", ""},
                                            {"nccl:broadcast", "ncclKernel_Broadcast_RING_LL_Sum_float", "[[10]]", R"(["float"])", 2}};
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    ImportReport rep;
    const Workload wl = import_kineto_text(annotated_rank_trace(1, 4, calls), "old.json", Classifier::load_default(), &rep, reader);
    REQUIRE(wl.ranks.size() == 1);
    const std::vector<const CollectiveCall*> got = calls_of_first_rank(wl);
    REQUIRE(got.size() == 4);
    CHECK(got[0]->kind == CollectiveKind::all_reduce);
    CHECK(got[0]->bytes == 4000);
    CHECK(got[1]->kind == CollectiveKind::all_gather);
    CHECK(got[1]->bytes == 64 * 8 * 2 * 4);  // the shard's bytes x the world's 4 ranks: the buffer every rank holds
    CHECK(got[2]->kind == CollectiveKind::all_to_all);
    CHECK(got[2]->bytes == 48 * 8);  // "long": PyTorch 2.0's name of int64
    CHECK(got[3]->kind == CollectiveKind::broadcast);  // the first of the two kernels in its annotation; not the second
    CHECK(got[3]->bytes == 40);
    REQUIRE(got[0]->group >= 0);
    CHECK(wl.group_names[static_cast<std::size_t>(got[0]->group)] == kInferredWorldGroup);
    // Its ranks: those that take part, once the merge has them all (as a truncated rank list).
    CHECK(wl.groups[static_cast<std::size_t>(got[0]->group)].empty());
    CHECK(wl.group_sizes[static_cast<std::size_t>(got[0]->group)] == 4);
    // The send names no peer and the last all-reduce no input: both keep their recorded time, said so.
    const std::string notes = all_notes(rep);
    CHECK_THAT(notes, Catch::Contains("4 NCCL kernels (2.0 ms) with no \"Collective name\" record took their collective from the "
                                      "\"nccl:<collective>\" annotation") && Catch::Contains("the job's world (4 ranks)"));
    CHECK_THAT(notes, Catch::Contains("3 NCCL kernels (1.5 ms) carry no collective record") &&
                          Catch::Contains("1 inside \"nccl:\" annotations whose inputs are not sized") &&
                          Catch::Contains("1 inside \"nccl:send\" / \"nccl:recv\" annotations that name no ranks") &&
                          Catch::Contains("1 launched inside a \"nccl:\" annotation that gave its collective to an earlier kernel"));
  }
  // A trace that names no world size: nothing is inferred, and the note says why.
  ImportReport rep;
  std::string unsized_world = annotated_rank_trace(0, 4, {calls[0]});
  unsized_world.replace(unsized_world.find(R"(, "world_size": 4)"), 17, "");
  const Workload wl = import_kineto_text(unsized_world, "noworld.json", Classifier::load_default(), &rep);
  CHECK(wl.collectives.empty());
  CHECK_THAT(all_notes(rep), Catch::Contains("the trace names no world size for its \"nccl:\" annotations"));
  // A one-rank world, and one larger than a process group can be: nothing inferred, each said so.
  for (const auto& [world, why] : std::vector<std::pair<int, std::string>>{{1, "its world is one rank"}, {70000, "its world of 70000 ranks is larger"}}) {
    ImportReport r;
    const Workload w = import_kineto_text(annotated_rank_trace(0, world, {calls[0]}), "world.json", Classifier::load_default(), &r);
    CHECK(w.collectives.empty());
    CHECK_THAT(all_notes(r), Catch::Contains(why));
  }
  // An all-gather whose buffer (input x world) passes the 1e15-byte limit a record is held to: not inferred.
  ImportReport big;
  const Workload huge = import_kineto_text(
      annotated_rank_trace(0, 4, {{"nccl:_all_gather_base", "ncclKernel_AllGather_RING_LL_Sum_int8_t", "[[250000000, 1000000]]", R"(["float"])"}}),
      "huge.json", Classifier::load_default(), &big);
  CHECK(huge.collectives.empty());
  CHECK_THAT(all_notes(big), Catch::Contains("not sized or exceed 1e15 bytes"));
  // A 0-d tensor is one element; a size beyond any operand's is no size (both readers alike).
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    ImportReport r;
    const Workload w = import_kineto_text(
        annotated_rank_trace(0, 2, {{"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", "[[]]", R"(["float"])"},
                                    {"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", "[[3000000000]]", R"(["float"])"}}),
        "sizes.json", Classifier::load_default(), &r, reader);
    REQUIRE(w.collectives.size() == 1);
    CHECK(w.collectives[0].bytes == 4);
    CHECK_THAT(all_notes(r), Catch::Contains("1 inside \"nccl:\" annotations whose inputs are not sized"));
  }
}

TEST_CASE("inferred collectives of all ranks run on the cluster; calls that differ across ranks keep their time", "[traces][multi-rank]") {
  const AnnotatedCall ar{"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", "[[25000000]]", R"(["float"])"};
  auto part = [](int rank, const std::vector<AnnotatedCall>& calls, double compute_us) {
    return rank_file(rank, annotated_rank_trace(rank, 2, calls, compute_us));
  };
  std::vector<RankTrace> parts;
  parts.push_back(part(0, {ar}, 1000));
  parts.push_back(part(1, {ar}, 2000));
  const Workload wl = merge_rank_workloads(std::move(parts));
  CHECK(describe_collectives(wl)["calls_simulated"] == 2);
  // The faster rank waits for the slower one inside the all-reduce: both leave it together.
  const auto out = replay(wl, two_nodes());
  CHECK(out[0].stats.end_s == Approx(out[1].stats.end_s).epsilon(1e-9));

  // Ranks whose inferred calls differ (the job had smaller groups than its world): a note, not a refusal.
  const AnnotatedCall other{"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", "[[7]]", R"(["float"])"};
  std::vector<RankTrace> differ;
  differ.push_back(part(0, {ar}, 1000));
  differ.push_back(part(1, {other}, 1000));
  std::vector<std::string> notes;
  const Workload kept = merge_rank_workloads(std::move(differ), &notes);
  const Json d = describe_collectives(kept);
  CHECK(d["calls_simulated"] == 0);
  CHECK(d["calls_at_recorded_duration"] == 2);  // still counted, at their recorded time
  CHECK(d["groups"][0]["name"] == std::string(kInferredWorldGroup) + ", calls differ across ranks");
  const auto kept_out = replay(kept, two_nodes());
  CHECK(kept_out[0].meter.class_s()[static_cast<int>(KernelClass::communication)] == Approx(500e-6).epsilon(1e-9));
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("the collectives inferred from \"nccl:\" annotations differ across the ranks (rank1.json, "
                                       "call 0: all_reduce of 28 bytes on rank 1, all_reduce of 100000000 bytes on rank 0 (rank0.json))") &&
                           Catch::Contains("may have had process groups smaller than its world"));
}

TEST_CASE("a rank that made no inferred call is still one of the world's, so the difference is named", "[traces][multi-rank]") {
  // Rank 1's annotation carries no Input Dims: it makes no inferred call, which the merge must not read as an
  // incomplete world (that would say "ranks not all in this import" of a job whose ranks are all there).
  auto part = [](int rank, const std::string& dims) {
    return rank_file(rank, annotated_rank_trace(rank, 2, {{"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", dims,
                                                           dims.empty() ? "" : R"(["float"])"}}));
  };
  std::vector<RankTrace> parts;
  parts.push_back(part(0, "[[1000]]"));
  parts.push_back(part(1, ""));
  std::vector<std::string> notes;
  const Workload wl = merge_rank_workloads(std::move(parts), &notes);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("(rank1.json: 0 calls on rank 1, 1 on rank 0 (rank0.json)): the job may have had"));
  CHECK(describe_collectives(wl)["groups"][0]["name"] == std::string(kInferredWorldGroup) + kCallsDifferSuffix);
}

TEST_CASE("a send or receive takes its peer from its annotation's name when the name's rank is the trace's", "[traces][multi-rank]") {
  const std::string sr = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
  const std::vector<AnnotatedCall> calls = {{"nccl:send 1->3", sr, "[[1000]]", R"(["float"])"},
                                            {"nccl:recv 1<-0", sr, "[[10, 10]]", R"(["c10::BFloat16"])"},
                                            {"nccl:send 0->1", sr, "[[16]]", R"(["float"])"},   // rank 0 of a smaller group
                                            {"nccl:send 1->9", sr, "[[16]]", R"(["float"])"},   // beyond the world of 4
                                            {"nccl:recv 1<-1", sr, "[[16]]", R"(["float"])"},   // from itself
                                            {"nccl:send 1->2x", sr, "[[16]]", R"(["float"])"},  // names no ranks
                                            {"nccl:recv 1<-2", sr, "", ""}};                     // unsized
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    ImportReport rep;
    const Workload wl = import_kineto_text(annotated_rank_trace(1, 4, calls), "pp.json", Classifier::load_default(), &rep, reader);
    REQUIRE(wl.ranks.size() == 1);
    const std::vector<const CollectiveCall*> got = calls_of_first_rank(wl);
    REQUIRE(got.size() == 2);
    CHECK(got[0]->kind == CollectiveKind::send);
    CHECK(got[0]->peer == 3);
    CHECK(got[0]->bytes == 4000);
    CHECK(got[1]->kind == CollectiveKind::recv);
    CHECK(got[1]->peer == 0);
    CHECK(got[1]->bytes == 200);
    const std::string notes = all_notes(rep);
    CHECK_THAT(notes, Catch::Contains("2 NCCL kernels (1.0 ms) with no \"Collective name\" record took their collective") &&
                          Catch::Contains("sends and receives among them: 2, each peer read from the annotation's name (\"nccl:send 1->D\""));
    CHECK_THAT(notes, Catch::Contains("5 NCCL kernels (2.5 ms) carry no collective record") &&
                          Catch::Contains("1 inside \"nccl:send\" / \"nccl:recv\" annotations that name no ranks") &&
                          Catch::Contains("1 send or receive whose rank in the annotation is not the trace's 1: a process group other than the world") &&
                          Catch::Contains("2 sends or receives whose peer is outside the world of 4 ranks or the rank itself") &&
                          Catch::Contains("1 inside \"nccl:\" annotations whose inputs are not sized"));
  }
  // A trace that names its world but not its own rank: no peer can be read as a world rank.
  std::string no_rank = annotated_rank_trace(1, 4, {calls[0]});
  no_rank.replace(no_rank.find(R"("rank": 1, )"), 11, "");
  ImportReport rep;
  const Workload wl = import_kineto_text(no_rank, "norank.json", Classifier::load_default(), &rep);
  CHECK(wl.collectives.empty());
  CHECK_THAT(all_notes(rep), Catch::Contains("1 send or receive in a trace that names no rank of its own"));
  // A trace of several devices: its ranks are numbered from 0, not its distributedInfo.rank, so no peer is read.
  std::string two_devices = annotated_rank_trace(1, 4, {calls[0]});
  const std::string gemm_device = R"("device": 0, "stream": 7)";
  two_devices.replace(two_devices.find(gemm_device), gemm_device.size(), R"("device": 1, "stream": 7)");
  ImportReport rep2;
  const Workload wl2 = import_kineto_text(two_devices, "two.json", Classifier::load_default(), &rep2);
  CHECK(wl2.collectives.empty());
  CHECK_THAT(all_notes(rep2), Catch::Contains("1 send or receive in a trace of several devices"));
}

TEST_CASE("inferred sends and receives pair across ranks and run on the cluster; unpaired ones keep their time", "[traces][multi-rank]") {
  const std::string sr = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
  auto part = [](int rank, const std::vector<AnnotatedCall>& calls, double compute_us) {
    return rank_file(rank, annotated_rank_trace(rank, 2, calls, compute_us));
  };
  std::vector<RankTrace> parts;
  parts.push_back(part(0, {{"nccl:send 0->1", sr, "[[25000000]]", R"(["float"])"}}, 1000));
  parts.push_back(part(1, {{"nccl:recv 1<-0", sr, "[[25000000]]", R"(["float"])"}}, 2000));
  std::vector<std::string> notes;
  const Workload wl = merge_rank_workloads(std::move(parts), &notes);
  CHECK(notes.empty());
  const Json d = describe_collectives(wl);
  CHECK(d["calls_simulated"] == 2);
  CHECK(d["point_to_point_calls"] == 2);
  CHECK(d["point_to_point_without_peer"] == 0);
  for (const CollectiveCall& c : wl.collectives)  // what tells the merge they were inferred
    CHECK(wl.group_names[static_cast<std::size_t>(c.group)] == kInferredWorldGroup);
  // NCCL's send lasts until the receiver takes the message: rank 0 waits for rank 1, both leave together.
  const auto out = replay(wl, two_nodes());
  CHECK(out[0].stats.end_s == Approx(out[1].stats.end_s).epsilon(1e-9));
  const auto comm_s = [](const RankOutcome& o) { return o.meter.class_s()[static_cast<int>(KernelClass::communication)]; };
  CHECK(comm_s(out[0]) > comm_s(out[1]) + 0.5e-3);  // rank 0's send includes its wait for rank 1 (1 ms recorded)

  // A send whose receiver made no matching receive (the ranks in the name were a smaller group's, or other steps
  // were profiled): a note, the calls at their recorded time, no refusal and no replay waiting forever.
  std::vector<RankTrace> unpaired;
  unpaired.push_back(part(0, {{"nccl:send 0->1", sr, "[[25000000]]", R"(["float"])"}, {"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}}, 1000));
  unpaired.push_back(part(1, {{"nccl:recv 1<-0", sr, "[[25000000]]", R"(["float"])"}}, 1000));
  std::vector<std::string> kept_notes;
  const Workload kept = merge_rank_workloads(std::move(unpaired), &kept_notes);
  REQUIRE(kept_notes.size() == 1);
  CHECK_THAT(kept_notes[0], Catch::Contains("the sends and receives inferred from \"nccl:send\" / \"nccl:recv\" annotations do not pair up "
                                            "across the ranks (rank0.json: 2 sends from rank 0 to rank 1, 1 receive there (rank1.json))") &&
                                Catch::Contains("3 calls keep their recorded durations"));
  const Json dk = describe_collectives(kept);
  CHECK(dk["calls_simulated"] == 0);
  CHECK(dk["calls_at_recorded_duration"] == 3);
  CHECK(dk["point_to_point_without_peer"] == 3);
  const auto kept_out = replay(kept, two_nodes());
  CHECK(kept_out[0].meter.class_s()[static_cast<int>(KernelClass::communication)] == Approx(1000e-6).epsilon(1e-9));
  CHECK(kept_out[1].meter.class_s()[static_cast<int>(KernelClass::communication)] == Approx(500e-6).epsilon(1e-9));

  // A receive whose sender made no send: the same.
  std::vector<RankTrace> lone;
  lone.push_back(part(0, {}, 1000));
  lone.push_back(part(1, {{"nccl:recv 1<-0", sr, "[[8]]", R"(["float"])"}}, 1000));
  std::vector<std::string> lone_notes;
  const Workload lone_wl = merge_rank_workloads(std::move(lone), &lone_notes);
  REQUIRE(lone_notes.size() == 1);
  CHECK_THAT(lone_notes[0], Catch::Contains("(rank1.json: 1 receive on rank 1 from rank 0, 0 sends there (rank0.json))") &&
                                Catch::Contains("1 call keeps its recorded duration"));
  CHECK(describe_collectives(lone_wl)["calls_simulated"] == 0);

  // Recorded sends that do not pair up are still refused: their ranks are written, not guessed.
  std::vector<RankTrace> recorded;
  recorded.push_back(rank_part(0, {{"ncclDevKernel_SendRecv", 0, 10,
                                    R"("Collective name": "send", "dtype": "Float", "In msg nelems": 10, "Out msg nelems": 10, "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Dst Rank": 1)"}}));
  recorded.push_back(rank_part(1, {{"k", 0, 10, ""}}));
  CHECK_THROWS_WITH(merge_rank_workloads(std::move(recorded)), Catch::Contains("1 send from rank 0 to rank 1, 0 receives there"));
}

TEST_CASE("inferred sends and receives in an order a one-kernel-after-another replay cannot finish keep their time", "[traces][multi-rank]") {
  // Rank 1's receive ran on its own stream before its all-reduce; rank 0 sends after the all-reduce. Paired one
  // kernel after another, each rank would wait for the other forever: the transfers keep their recorded time.
  const std::string sr = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
  const AnnotatedCall ar{"nccl:all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_float", "[[1000]]", R"(["float"])"};
  auto part = [](int rank, const std::vector<AnnotatedCall>& calls) {
    return rank_file(rank, annotated_rank_trace(rank, 2, calls));
  };
  std::vector<RankTrace> parts;
  parts.push_back(part(0, {ar, {"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}}));
  parts.push_back(part(1, {{"nccl:recv 1<-0", sr, "[[8]]", R"(["float"])"}, ar}));
  std::vector<std::string> notes;
  const Workload wl = merge_rank_workloads(std::move(parts), &notes);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("pair up in number, but on 1 channel (one from rank 0 to rank 1) in an order a replay of "
                                       "each rank's kernels one after another cannot finish") &&
                           Catch::Contains("2 calls keep their recorded durations"));
  const Json d = describe_collectives(wl);
  CHECK(d["calls_simulated"] == 2);  // the all-reduces
  CHECK(d["point_to_point_without_peer"] == 2);
  const auto out = replay(wl, two_nodes());  // finishes
  CHECK(out[0].stats.end_s > 0);

  // In an order that can finish, the same calls stay paired.
  std::vector<RankTrace> fine;
  fine.push_back(part(0, {ar, {"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}}));
  fine.push_back(part(1, {ar, {"nccl:recv 1<-0", sr, "[[8]]", R"(["float"])"}}));
  std::vector<std::string> fine_notes;
  const Workload paired = merge_rank_workloads(std::move(fine), &fine_notes);
  CHECK(fine_notes.empty());
  CHECK(describe_collectives(paired)["calls_simulated"] == 4);

  // Only the channels ranks are stuck at lose their pairing: rank 1's send on to rank 2 stays simulated.
  auto part3 = [](int rank, const std::vector<AnnotatedCall>& calls) {
    return rank_file(rank, annotated_rank_trace(rank, 3, calls));
  };
  std::vector<RankTrace> chain;
  chain.push_back(part3(0, {ar, {"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}}));
  chain.push_back(part3(1, {{"nccl:recv 1<-0", sr, "[[8]]", R"(["float"])"}, ar, {"nccl:send 1->2", sr, "[[8]]", R"(["float"])"}}));
  chain.push_back(part3(2, {ar, {"nccl:recv 2<-1", sr, "[[8]]", R"(["float"])"}}));
  std::vector<std::string> chain_notes;
  const Workload chained = merge_rank_workloads(std::move(chain), &chain_notes);
  REQUIRE(chain_notes.size() == 1);
  CHECK_THAT(chain_notes[0], Catch::Contains("on 1 channel (one from rank 0 to rank 1)") && Catch::Contains("2 calls keep"));
  const Json dc = describe_collectives(chained);
  CHECK(dc["calls_simulated"] == 5);  // three all-reduces, the send 1 -> 2 and its receive
  CHECK(dc["point_to_point_without_peer"] == 2);

  // Stuck at a recorded receive (a job mixing trace versions): nothing inferred is to blame, so the peers stay and
  // the replay names the deadlock, as for recorded calls.
  std::vector<RankTrace> mixed;
  mixed.push_back(part(0, {ar, {"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}}));
  const std::string rank1 = with_recorded_transfer(annotated_rank_trace(1, 2, {{"nccl:recv", sr, "", ""}, ar}), 0, "recv", 0);
  mixed.push_back(rank_file(1, rank1));
  const Workload stuck = merge_rank_workloads(std::move(mixed));
  CHECK(describe_collectives(stuck)["point_to_point_without_peer"] == 0);
  CHECK_THROWS_WITH(replay(stuck, two_nodes()), Catch::Contains("every rank waits on another"));

  // A channel with a recorded side is left as it is even where the ranks are stuck at it.
  std::vector<RankTrace> half;
  half.push_back(part(0, {{"nccl:send 0->1", sr, "[[2]]", R"(["float"])"}, {"nccl:recv 0<-1", sr, "[[2]]", R"(["float"])"}}));
  const std::string both = with_recorded_transfer(
      with_recorded_transfer(annotated_rank_trace(1, 2, {{"nccl:send", sr, "", ""}, {"nccl:recv", sr, "", ""}}), 0, "send", 0), 1, "recv", 0);
  half.push_back(rank_file(1, both));
  std::vector<std::string> half_notes;
  const Workload half_wl = merge_rank_workloads(std::move(half), &half_notes);
  CHECK(half_notes.empty());
  CHECK(describe_collectives(half_wl)["point_to_point_without_peer"] == 0);
  CHECK_THROWS_WITH(replay(half_wl, two_nodes()), Catch::Contains("every rank waits on another"));

  // Stuck first at an inferred channel, then at recorded ones elsewhere: every peer is put back, no note, and the
  // replay names the deadlock.
  std::vector<RankTrace> four;
  four.push_back(rank_file(0, annotated_rank_trace(0, 4, {ar, {"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}})));
  four.push_back(rank_file(1, annotated_rank_trace(1, 4, {{"nccl:recv 1<-0", sr, "[[8]]", R"(["float"])"}, ar})));
  for (int r : {2, 3}) {  // each sends to the other first: recorded, and stuck
    std::string t = annotated_rank_trace(r, 4, {ar, {"nccl:send", sr, "", ""}, {"nccl:recv", sr, "", ""}});
    t = with_recorded_transfer(with_recorded_transfer(t, 1, "send", 5 - r), 2, "recv", 5 - r);
    const std::string from = R"("Process Group Name": "pp", "Process Group Ranks": "[0, 1]")";
    const std::string to = R"("Process Group Name": "pp23", "Process Group Ranks": "[2, 3]")";
    for (std::size_t at = t.find(from); at != std::string::npos; at = t.find(from)) t.replace(at, from.size(), to);
    four.push_back(rank_file(r, t));
  }
  std::vector<std::string> four_notes;
  const Workload four_wl = merge_rank_workloads(std::move(four), &four_notes);
  CHECK(four_notes.empty());
  CHECK(describe_collectives(four_wl)["point_to_point_without_peer"] == 0);
  CHECK_THROWS_WITH(replay(four_wl, two_nodes()), Catch::Contains("every rank waits on another"));
}

TEST_CASE("inferred sends and receives whose counts match but whose bytes differ keep their time", "[traces][multi-rank]") {
  const std::string sr = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
  auto part = [](int rank, const std::vector<AnnotatedCall>& calls) {
    return rank_file(rank, annotated_rank_trace(rank, 2, calls));
  };
  std::vector<RankTrace> parts;
  parts.push_back(part(0, {{"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}}));
  parts.push_back(part(1, {{"nccl:recv 1<-0", sr, "[[2]]", R"(["float"])"}}));
  std::vector<std::string> notes;
  const Workload wl = merge_rank_workloads(std::move(parts), &notes);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("(rank0.json: send 1 of 1 from rank 0 to rank 1 carries 32 bytes, its receive on rank 1 8 bytes "
                                       "(rank1.json))"));
  CHECK(describe_collectives(wl)["point_to_point_without_peer"] == 2);
}

TEST_CASE("a replay's Kineto export of transfers left without a peer reads back at their recorded time", "[traces][multi-rank][export]") {
  // Two ranks, so the inferred world's rank list is [0, 1]: a record without Dst Rank would read back as a send to
  // the group's other rank and hang the replay of the export.
  const std::string sr = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t";
  auto part = [](int rank, const std::vector<AnnotatedCall>& calls) {
    return rank_file(rank, annotated_rank_trace(rank, 2, calls));
  };
  std::vector<RankTrace> parts;
  parts.push_back(part(0, {{"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}, {"nccl:send 0->1", sr, "[[8]]", R"(["float"])"}}));
  parts.push_back(part(1, {{"nccl:recv 1<-0", sr, "[[8]]", R"(["float"])"}}));
  const Workload wl = merge_rank_workloads(std::move(parts));
  const GpuModel m = load_gpu_model("h200");
  const auto out = replay(wl, two_nodes(), true);
  const std::string text = trace_export_text(engine_trace_export(wl, out, m.name(), m.sm_count(), 1, Json::object()));
  const Workload again = import_kineto_text(text, "exported.json", Classifier::load_default());
  REQUIRE(again.ranks.size() == 2);
  REQUIRE(again.collectives.size() == 3);  // their records, naming no peer and no rank list to guess one from
  for (const CollectiveCall& c : again.collectives) {
    CHECK((c.kind == CollectiveKind::send || c.kind == CollectiveKind::recv));
    CHECK(c.peer == -1);
    CHECK(c.bytes == 32);
  }
  const auto again_out = replay(again, two_nodes());
  CHECK(again_out[0].meter.class_s()[static_cast<int>(KernelClass::communication)] == Approx(1000e-6).epsilon(1e-9));
}

TEST_CASE("a group marked as differing across ranks stays unsimulated when read back", "[traces][multi-rank]") {
  // What a replay's export writes for such a group: its name, its size, no rank list.
  const std::string marked = std::string(kInferredWorldGroup) + kCallsDifferSuffix;
  auto args = [&](double nelems) {
    return R"("Collective name": "allreduce", "dtype": "Float", "In msg nelems": )" + std::to_string(static_cast<long>(nelems)) +
           R"(, "Out msg nelems": )" + std::to_string(static_cast<long>(nelems)) + R"(, "Group size": 2, "Process Group Name": ")" + marked + R"(")";
  };
  std::vector<RankTrace> parts;
  parts.push_back(rank_part(0, {{"ncclDevKernel_AllReduce", 0, 10, args(1000)}, {"ncclDevKernel_AllReduce", 10, 10, args(1000)}}));
  parts.push_back(rank_part(1, {{"ncclDevKernel_AllReduce", 0, 10, args(1000)}}));
  std::vector<std::string> notes;
  const Workload wl = merge_rank_workloads(std::move(parts), &notes);  // not refused
  const Json d = describe_collectives(wl);
  CHECK(d["calls_simulated"] == 0);
  CHECK(d["calls_at_recorded_duration"] == 3);
}

TEST_CASE("a truncated rank list is resolved from the ranks that took part", "[traces][multi-rank]") {
  const Workload wl = two_ranks("[0, ..., 1]");
  CHECK(wl.groups[0] == std::vector<int>{0, 1});
  CHECK(group_complete(wl, 0));
}

TEST_CASE("collectives that do not match across ranks are errors naming both files", "[traces][multi-rank]") {
  std::vector<RankTrace> parts;
  parts.push_back(rank_part(0, {{"ncclDevKernel_AllReduce", 0, 10, allreduce(1000)}}));
  parts.push_back(rank_part(1, {{"ncclDevKernel_AllGather", 0, 10, allreduce(2000, "[0, 1]", "allgather")}}));
  CHECK_THROWS_WITH(merge_rank_workloads(std::move(parts)),
                    Catch::Contains("rank1.json: collectives: process group \"0\", call 0: all_gather of 8000 bytes on rank 1, "
                                    "all_reduce of 4000 bytes on rank 0 (rank0.json)"));
  std::vector<RankTrace> uneven;
  uneven.push_back(rank_part(0, {{"ncclDevKernel_AllReduce", 0, 10, allreduce(1000)}, {"ncclDevKernel_AllReduce", 20, 10, allreduce(1000)}}));
  uneven.push_back(rank_part(1, {{"ncclDevKernel_AllReduce", 0, 10, allreduce(1000)}}));
  CHECK_THROWS_WITH(merge_rank_workloads(std::move(uneven)), Catch::Contains("do not cover the same steps"));
  std::vector<RankTrace> twice;
  twice.push_back(rank_part(0, {{"k", 0, 10, ""}}));
  twice.push_back(rank_part(0, {{"k", 0, 10, ""}}));
  CHECK_THROWS_WITH(merge_rank_workloads(std::move(twice)), Catch::Contains("rank 0 is also rank0.json"));
}

TEST_CASE("an unknown collective or tensor type in a trace is an error naming the event", "[traces][multi-rank]") {
  CHECK_THROWS_WITH(rank_part(0, {{"nccl", 0, 10, allreduce(1000, "[0, 1]", "hyperreduce")}}),
                    Catch::Contains("rank0.json: traceEvents[0].args.Collective name: expected an NCCL collective"));
  std::string bad = allreduce(1000);
  bad.replace(bad.find("Float"), 5, "Quaternion");
  CHECK_THROWS_WITH(rank_part(0, {{"nccl", 0, 10, bad}}), Catch::Contains("args.dtype: expected a tensor type"));
}

TEST_CASE("a send and its receive finish together, when both sides are there and the bytes have crossed", "[traces][multi-rank]") {
  auto p2p = [](const char* kind, const char* peer_key, int peer) {
    std::ostringstream os;
    os << R"("Collective name": ")" << kind << R"(", "dtype": "BFloat16", "In msg nelems": 5000000, "Out msg nelems": 5000000, )"
       << R"("Group size": 2, "Process Group Name": "pp", "Process Group Ranks": "[0, 1]", ")" << peer_key << R"(": )" << peer;
    return os.str();
  };
  std::vector<RankTrace> parts;
  parts.push_back(rank_part(0, {{"g", 0, 1000, ""}, {"ncclDevKernel_SendRecv", 1000, 100, p2p("send", "Dst Rank", 1)}}));
  parts.push_back(rank_part(1, {{"g", 0, 3000, ""}, {"ncclDevKernel_SendRecv", 3000, 100, p2p("recv", "Src Rank", 0)}}));
  const Workload wl = merge_rank_workloads(std::move(parts));
  const ClusterSpec cs = two_nodes();
  const auto out = replay(wl, cs);
  // SimGrid's clock runs on across the simulations of one process (a test binary's, a sweep worker's): rank times
  // are differences of that clock and carry its rounding (~1e-16 x its value), hence a margin of 1 ns, not 1e-12 x 3 ms
  CHECK(out[0].stats.end_s == Approx(out[1].stats.end_s).epsilon(0).margin(1e-9));
  const double transfer = cs.inter_latency_s + 1e7 / cs.inter_bw_bps;
  CHECK(out[1].meter.class_s()[static_cast<int>(KernelClass::communication)] == Approx(transfer).epsilon(1e-6));
}

namespace {

std::string p2p_args(const char* kind, const char* peer_key, int peer) {
  std::ostringstream os;
  os << R"("Collective name": ")" << kind << R"(", "dtype": "BFloat16", "In msg nelems": 1024, "Out msg nelems": 1024, )"
     << R"("Group size": 2, "Process Group Name": "pp", "Process Group Ranks": "[0, 1]", ")" << peer_key << R"(": )" << peer;
  return os.str();
}

}  // namespace

TEST_CASE("a collective buffer beyond 1e15 bytes is refused at import; a transfer longer than a day is refused in the replay",
          "[traces][multi-rank][errors]") {
  CHECK_THROWS_WITH(rank_part(0, {{"ncclDevKernel_AllReduce", 0, 10, allreduce(1.2e15)}}),
                    Catch::Contains("args.In msg nelems: expected a buffer of at most 1e15 bytes"));
  ClusterSpec slow = two_nodes();
  slow.inter_bw_bps = 1;  // legal, 1 B/s: the 100 MB all-reduce would take years
  CHECK_THROWS_WITH(replay(two_ranks(), slow), Catch::Contains("cluster: expected each transfer to finish within 86400 s simulated"));
}

TEST_CASE("a receive whose send is in no rank of the import is refused naming both files", "[traces][multi-rank][errors]") {
  std::vector<RankTrace> parts;
  parts.push_back(rank_part(0, {{"g", 0, 1000, ""}}));
  parts.push_back(rank_part(1, {{"g", 0, 1000, ""}, {"ncclDevKernel_SendRecv", 1000, 100, p2p_args("recv", "Src Rank", 0)}}));
  CHECK_THROWS_WITH(merge_rank_workloads(std::move(parts)), Catch::Contains("1 receive on rank 1 from rank 0, 0 sends there"));
}

TEST_CASE("transfers in an order no rank can finish stop the replay with an input error, not an abort", "[traces][multi-rank][errors]") {
  // each rank sends first, then receives: NCCL's send waits for its receive, so neither side can go on
  std::vector<RankTrace> parts;
  for (int r : {0, 1})
    parts.push_back(rank_part(r, {{"ncclDevKernel_SendRecv", 0, 100, p2p_args("send", "Dst Rank", 1 - r)},
                                  {"ncclDevKernel_SendRecv", 200, 100, p2p_args("recv", "Src Rank", 1 - r)}}));
  const Workload wl = merge_rank_workloads(std::move(parts));
  CHECK_THROWS_WITH(replay(wl, two_nodes()), Catch::Contains("collectives: every rank waits on another"));
  // the process can simulate again afterwards
  const auto again = replay(two_ranks(), two_nodes());
  CHECK(again.size() == 2);
}

TEST_CASE("an NCCL kernel without args takes its collective from the record_param_comms range that launched it", "[traces][multi-rank]") {
  // PyTorch's host side: record_param_comms around the launch; the kernel linked to it by correlation.
  const std::string trace = R"({"distributedInfo": {"rank": 3}, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 2, "ts": 100, "dur": 50,
     "args": {"Collective name": "_reduce_scatter_base", "dtype": "BFloat16", "In msg nelems": 4096, "Out msg nelems": 1024,
              "Group size": 4, "Process Group Name": "2", "Process Group Ranks": "[0, ..., 6]", "Global rank start": 0,
              "Global rank stride": 2, "Rank": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 120, "dur": 5, "args": {"correlation": 9}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "pid": 0, "tid": 20, "ts": 130, "dur": 40,
     "args": {"device": 0, "stream": 20, "correlation": 9}}]})";
  const Workload wl = import_kineto_text(trace, "r3.json", Classifier::load_default());
  REQUIRE(wl.collectives.size() == 1);
  CHECK(wl.ranks[0].id == 3);
  CHECK(wl.ranks[0].kernels[0].collective == 1);
  CHECK(wl.collectives[0].kind == CollectiveKind::reduce_scatter);
  CHECK(wl.collectives[0].bytes == 2 * 4096);
  CHECK(wl.groups[0] == std::vector<int>{0, 2, 4, 6});  // truncated list rebuilt from start and stride
}

TEST_CASE("a real DDP rank trace from the H200 names its rank and carries DDP's all-reduces on the host", "[traces][multi-rank]") {
  // traces/recordings/h200-gpt3xl-ddp1: torchrun with one rank, so NCCL launched no kernel to attach them to.
  const Workload wl = import_kineto(data_dir() + "/traces/recordings/h200-gpt3xl-ddp1/rank0/trace.json.gz", Classifier::load_default());
  REQUIRE(wl.ranks.size() == 1);
  CHECK(wl.ranks[0].id == 0);
  CHECK(wl.collectives.empty());
}
