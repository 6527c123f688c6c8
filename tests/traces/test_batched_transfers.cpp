// Batched sends and receives (PyTorch's batch_isend_irecv, Megatron's batch_p2p_comm): one NCCL kernel does a
// coalescing group's transfers, posting them all at once. Read from PyTorch 2.11's layout (a trace recorded here:
// tests/fixtures/pytorch/README.md), replayed so that neither side waits for the other's order, and written back.
#include "models/src/collective_cost.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/engine.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/results/summary.hpp"
#include "sim/results/trace_export.hpp"
#include "support/scratch_dir.hpp"
#include "traces/src/chakra/chakra_writer.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/multi_rank.hpp"
#include "traces/src/trace_formats.hpp"
#include "rank_trace_fixtures.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

struct Transfer {
  const char* kind;  // "send" or "recv"
  int peer;
  long nelems;       // bf16 elements
};

// One rank of a two-rank job as PyTorch 2.11 records batch_isend_irecv: `compute_us` of a GEMM, then per batch each
// transfer's record_param_comms (launching nothing) on host thread 5, a "nccl:coalesced" annotation around the
// launch of one ncclDevKernel_SendRecv (50 us), and 1 ms more. `end`: the group's end written as that annotation, as a
// "coalesced" record_param_comms range (earlier 2.x), or both, the annotation inside the record. `batches` empty: no
// transfers.
// `annotated`: after the batches, a kernel each inside a "nccl:<name>" annotation as PyTorch 2.0 writes it (8 floats).
// `world`: the job's ranks (the batches' process group).
enum class GroupEnd { annotation, record, both };
std::string batched_rank_trace(int rank, const std::vector<std::vector<Transfer>>& batches, double compute_us, GroupEnd end = GroupEnd::annotation,
                               const std::vector<std::string>& annotated = {}, int world = 2) {
  std::string ranks = "[";
  for (int r = 0; r < world; ++r) ranks += (r ? ", " : "") + std::to_string(r);
  ranks += "]";
  std::ostringstream os;
  os << R"({"distributedInfo": {"backend": "nccl", "rank": )" << rank << R"(, "world_size": )" << world << R"(}, "traceEvents": [)"
     << R"({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7, "ts": 0, "dur": )" << compute_us
     << R"(, "args": {"device": 0, "stream": 7, "correlation": 1}})";
  double t = compute_us;
  double h = 100;  // host time: each batch's records, then its group's end, launched before the kernels run
  long corr = 10;
  for (const auto& batch : batches) {
    for (const Transfer& x : batch) {
      const bool send = std::string(x.kind) == "send";
      os << R"(, {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 5, "ts": )" << h
         << R"(, "dur": 20, "args": {"Collective name": ")" << x.kind << R"(", "dtype": "BFloat16", "In msg nelems": )" << x.nelems
         << R"(, "Out msg nelems": )" << x.nelems << R"(, "Group size": )" << world << R"(, "Process Group Name": "0", "Process Group Ranks": ")" << ranks << R"(", "Rank": )"
         << rank << ", \"" << (send ? "Dst Rank" : "Src Rank") << "\": " << x.peer << "}}";
      h += 30;
    }
    if (end != GroupEnd::annotation)
      os << R"(, {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 5, "ts": )" << h
         << R"(, "dur": 30, "args": {"Collective name": "coalesced", "dtype": "Byte", "In msg nelems": 0, "Out msg nelems": 0, "Group size": 2, "Process Group Ranks": "[0, 1]"}})";
    if (end != GroupEnd::record)  // inside the record where both are written
      os << R"(, {"ph": "X", "cat": "user_annotation", "name": "nccl:coalesced", "pid": 1, "tid": 5, "ts": )" << h + 2 << R"(, "dur": 26, "args": {}})";
    os << R"(, {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1, "tid": 5, "ts": )" << h + 10
       << R"(, "dur": 5, "args": {"correlation": )" << corr << R"x(}}, {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": )x"
       << t << R"(, "dur": 50, "args": {"device": 0, "stream": 20, "correlation": )" << corr << "}}";
    h += 40;
    ++corr;
    t += 50;
  }
  for (const std::string& name : annotated) {
    os << R"(, {"ph": "X", "cat": "user_annotation", "name": "nccl:)" << name << R"(", "pid": 1, "tid": 5, "ts": )" << h
       << R"(, "dur": 20, "args": {"Input Dims": [[8]], "Input type": ["float"]}})"
       << R"(, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 5, "ts": )" << h + 5
       << R"(, "dur": 1, "args": {"correlation": )" << corr << R"(}}, {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "pid": 0, "tid": 20, "ts": )"
       << t << R"(, "dur": 50, "args": {"device": 0, "stream": 20, "correlation": )" << corr << "}}";
    ++corr, h += 40, t += 50;
  }
  os << R"(, {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7, "ts": )" << t
     << R"(, "dur": 1000, "args": {"device": 0, "stream": 7, "correlation": 2}}]})";
  return os.str();
}

RankTrace rank_file(int rank, const std::string& text, ImportReport* report = nullptr) {
  const std::string file = "rank" + std::to_string(rank) + ".json";
  return RankTrace{import_kineto_text(text, file, Classifier::load_default(), report), file, -1, ""};
}

// A pipeline's steady-state exchange (1F1B: send the activation on, receive a gradient back, in one batch on each
// side; both sides post their send first), rank 1 computing `slower_us` longer than rank 0.
Workload exchange(double slower_us, GroupEnd end = GroupEnd::annotation) {
  std::vector<RankTrace> parts;
  parts.push_back(rank_file(0, batched_rank_trace(0, {{{"send", 1, 1 << 20}, {"recv", 1, 1 << 20}}}, 1000, end)));
  parts.push_back(rank_file(1, batched_rank_trace(1, {{{"send", 0, 1 << 20}, {"recv", 0, 1 << 20}}}, 1000 + slower_us, end)));
  return merge_rank_workloads(std::move(parts));
}

// The job on two nodes of one GPU each (rank_trace_fixtures.hpp).
std::vector<RankOutcome> replay(const Workload& wl, bool record_activities = false) {
  return testing::replay(wl, testing::two_nodes(), record_activities);
}

double communication_s(const RankOutcome& r) { return r.meter.class_s()[static_cast<int>(KernelClass::communication)]; }

// The same calls with no batch: each rank's first batch's kernel split in two, its first call then its second, each a
// kernel of its own (the rest of a batch keeps no kernel).
Workload unbatched(Workload wl) {
  for (CollectiveCall& c : wl.collectives) c.batched = 0;
  for (Rank& r : wl.ranks)
    for (std::size_t i = 0; i < r.kernels.size(); ++i)
      if (r.kernels[i].collective) {
        Kernel second = r.kernels[i];
        ++second.collective;
        second.gap_before_s = 0;
        r.kernels.insert(r.kernels.begin() + static_cast<long>(i) + 1, second);
        break;
      }
  return wl;
}

// The workload written to Chakra and read back.
Workload chakra_round_trip(const Workload& wl, const std::string& scratch_name) {
  const dvfs::testing::ScratchDir scratch(scratch_name);
  ChakraExportOptions opts;
  opts.name = "job";
  write_chakra_trace(wl, scratch.path(), opts);
  return import_trace_file(scratch.path() + "/job", Classifier::load_default());
}

// A one-rank group's all-reduce of 1 Mi floats, recorded as PyTorch 2.11 writes one (a record_param_comms range
// around its kernel's launch), 50 us.
std::string one_rank_allreduce_trace() {
  return R"({"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}, "traceEvents": [)"
         R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 5, "ts": 100, "dur": 20, "args": {)"
         R"("Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 1, )"
         R"("Process Group Name": "0", "Process Group Ranks": "[0]", "Rank": 0}}, )"
         R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 5, "ts": 105, "dur": 5, "args": {"correlation": 3}}, )"
         R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 20, "ts": 200, "dur": 50, )"
         R"("args": {"device": 0, "stream": 20, "correlation": 3}}]})";
}

}  // namespace

TEST_CASE("a recorded batch_isend_irecv kernel makes the sends and receives recorded before its launch", "[traces][batched]") {
  // Recorded on an H100 with PyTorch 2.11 / NCCL 2.28.9 (traces/recorder/probe_batched_p2p.py): an NCCL group of one
  // rank sending to itself, three times [send, recv] (1 Mi bf16 each), then three times [send, send, recv, recv]
  // (1 Mi bf16, 768 Ki fp32).
  ImportReport rep;
  const Workload wl = import_kineto(std::string(DVFS_TEST_FIXTURES) + "/pytorch/batched_p2p_h100_torch2.11.json", Classifier::load_default(), &rep);
  REQUIRE(wl.ranks.size() == 1);
  std::vector<std::vector<const CollectiveCall*>> batches;
  for (const Kernel& k : wl.ranks[0].kernels) {
    if (!k.collective) continue;
    batches.emplace_back();
    for (const CollectiveCall& c : calls_of(wl, k)) batches.back().push_back(&c);
  }
  REQUIRE(batches.size() == 6);
  for (std::size_t b = 0; b < 6; ++b) {
    INFO("batch " << b);
    const std::vector<const CollectiveCall*>& calls = batches[b];
    REQUIRE(calls.size() == (b < 3 ? 2u : 4u));
    const std::vector<CollectiveKind> kinds =
        b < 3 ? std::vector<CollectiveKind>{CollectiveKind::send, CollectiveKind::recv}
              : std::vector<CollectiveKind>{CollectiveKind::send, CollectiveKind::send, CollectiveKind::recv, CollectiveKind::recv};
    for (std::size_t i = 0; i < calls.size(); ++i) {
      CHECK(calls[i]->kind == kinds[i]);
      CHECK(calls[i]->peer == 0);
      CHECK(calls[i]->bytes == (b >= 3 && i % 2 == 1 ? 4.0 * 786432 : 2.0 * 1048576));
    }
  }
  std::string notes;
  for (const std::string& n : rep.notes) notes += n + "\n";
  CHECK_THAT(notes, Catch::Contains("6 NCCL kernels each make a coalescing group's sends and receives") && Catch::Contains("18 calls"));
  CHECK_THAT(notes, !Catch::Contains("no collective record"));
}

TEST_CASE("a rank's sends and receives to itself keep their recorded time: NCCL copies them on the GPU", "[traces][batched]") {
  // The recording above: every batch goes from rank 0 to rank 0. Through SimGrid's loopback its 1 GiB form replayed
  // 100x longer than measured (traces/recordings/h100-power-40, nccl-sendrecv-self-1g).
  const Workload wl = import_kineto(std::string(DVFS_TEST_FIXTURES) + "/pytorch/batched_p2p_h100_torch2.11.json", Classifier::load_default());
  const Json d = describe_collectives(wl);
  CHECK(d["calls_simulated"] == 0);
  CHECK(d["calls_at_recorded_duration"] == 18);
  double recorded_s = 0;
  for (const Kernel& k : wl.ranks[0].kernels)
    if (k.collective) recorded_s += k.duration_s;
  REQUIRE(recorded_s > 0);
  for (const EngineMode engine : {EngineMode::local_loop, EngineMode::event}) {
    const auto out = testing::replay(wl, testing::two_nodes(), false, StreamOverlap::contention, engine);
    CHECK(communication_s(out[0]) == Approx(recorded_s).epsilon(1e-9));
  }
  // A batch with a transfer to itself (64 MiB: ~7 ms through a loopback link) and one to a peer 2 ms later: only the
  // peer's is simulated, so rank 0's kernel lasts the wait and that 2 MiB transfer, not the self copy's link time.
  std::vector<RankTrace> parts;
  parts.push_back(rank_file(0, batched_rank_trace(0, {{{"send", 0, 32 << 20}, {"recv", 0, 32 << 20}, {"send", 1, 1 << 20}}}, 1000)));
  parts.push_back(rank_file(1, batched_rank_trace(1, {{{"recv", 0, 1 << 20}}}, 3000)));
  const Workload job = merge_rank_workloads(std::move(parts));
  const Json jd = describe_collectives(job);
  CHECK(jd["calls_simulated"] == 2);
  CHECK(jd["point_to_point_to_self"] == 2);
  CHECK_THAT(collectives_line(jd), Catch::Contains("2 sends or receives of a rank to itself (NCCL copies them on the GPU)"));
  const auto both = replay(job);
  CHECK(communication_s(both[0]) > 2000e-6);  // rank 0's send waits for rank 1, 2 ms later
  CHECK(communication_s(both[0]) < 2200e-6);  // ... and its 2 MiB over 450 GB/s, not its self copy over a link
  CHECK(both[0].stats.end_s == Approx(both[1].stats.end_s).epsilon(0).margin(1e-9));
}

TEST_CASE("an NCCL kernel of sends and receives the trace sizes is priced by its bytes; a group collective keeps the prior", "[traces][batched]") {
  // The recording above: 3 batches of [send, recv] of 1 Mi bf16, 3 of [send, send, recv, recv] (1 Mi bf16, 768 Ki fp32).
  const Workload wl = import_kineto(std::string(DVFS_TEST_FIXTURES) + "/pytorch/batched_p2p_h100_torch2.11.json", Classifier::load_default());
  const GpuModel m = load_gpu_model("h100-sxm");
  const int top = m.sm_index(m.max_sm_mhz()), mem = m.mem_index(m.max_mem_mhz());
  std::size_t priced = 0;
  const Rank& rank = wl.ranks[0];
  for (std::size_t i = 0; i < rank.kernels.size(); ++i) {
    const Kernel& k = rank.kernels[i];
    if (!k.collective) continue;
    ++priced;
    const double bytes = transfer_bytes(wl, k);
    CHECK(bytes == (calls_of(wl, k).size() == 2 ? 2 * 2.0 * 1048576 : 2 * (2.0 * 1048576 + 4.0 * 786432)));
    CHECK(k.work == WorkSource::transfer_bytes);
    // over its recorded time (a kernel the busy union clipped: over all of it)
    double t = k.duration_s;
    for (const ClippedSpan& c : rank.clipped)
      if (c.kernel == i) t = c.duration_s;
    CHECK(k.memory_tbps * 1e12 * t == Approx(bytes).epsilon(1e-6));
    CHECK(m.collective_power_w(k, top, mem, t) ==
          Approx(m.idle_power_w(top) + t / (t + m.activity().ramp_s) * m.activity().copy_engine_pj_per_byte * 1e-12 * bytes / t));
  }
  CHECK(priced == 6);
  // A one-rank all-reduce (sized, but no send or receive): the communication prior, as before.
  const Workload reduce = import_kineto_text(one_rank_allreduce_trace(), "rank0.json", Classifier::load_default());
  REQUIRE(reduce.ranks[0].kernels.size() == 1);
  CHECK(transfer_bytes(reduce, reduce.ranks[0].kernels[0]) == 0);
  CHECK(reduce.ranks[0].kernels[0].work == WorkSource::unknown);
}

TEST_CASE("a transfer that overlapped compute on another stream is priced over its whole recorded time", "[traces][batched]") {
  // A send to the rank itself (1 Mi bf16: 2 MiB read, 2 MiB written) whose kernel (1 ms) starts half way through a
  // 1 ms GEMM on another stream: the busy union clips it to 0.5 ms, its bytes were moved over all of its 1 ms.
  const std::string trace =
      R"({"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}, "traceEvents": [)"
      R"({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7, "ts": 0, "dur": 1000, "args": {"device": 0, "stream": 7, "correlation": 1}}, )"
      R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 5, "ts": 100, "dur": 20, "args": {"Collective name": "send", "dtype": "BFloat16", )"
      R"("In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 1, "Process Group Name": "0", "Process Group Ranks": "[0]", "Rank": 0, "Dst Rank": 0}}, )"
      R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 5, "ts": 130, "dur": 20, "args": {"Collective name": "recv", "dtype": "BFloat16", )"
      R"("In msg nelems": 1048576, "Out msg nelems": 1048576, "Group size": 1, "Process Group Name": "0", "Process Group Ranks": "[0]", "Rank": 0, "Src Rank": 0}}, )"
      R"({"ph": "X", "cat": "user_annotation", "name": "nccl:coalesced", "pid": 1, "tid": 5, "ts": 160, "dur": 26, "args": {}}, )"
      R"({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1, "tid": 5, "ts": 170, "dur": 5, "args": {"correlation": 10}}, )"
      R"x({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": 500, "dur": 1000, )x"
      R"("args": {"device": 0, "stream": 20, "correlation": 10}}]})";
  const Workload wl = import_kineto_text(trace, "rank0.json", Classifier::load_default());
  REQUIRE(wl.ranks[0].kernels.size() == 2);
  const Kernel& k = wl.ranks[0].kernels[1];
  REQUIRE(k.collective);
  CHECK(k.duration_s == Approx(500e-6));  // clipped by the busy union
  CHECK(k.work == WorkSource::transfer_bytes);
  CHECK(static_cast<double>(k.memory_tbps) * 1e12 * 1e-3 == Approx(2 * 2.0 * 1048576).epsilon(1e-6));  // over 1 ms
}

TEST_CASE("a transfer kept waiting by its peer draws idle power beyond its bytes' energy", "[traces][batched]") {
  // Rank 0 reaches its exchange 2 ms before rank 1: its kernel lasts the wait. Each side moves 2 MiB out and 2 MiB in.
  const Workload wl = exchange(2000);
  for (const Rank& r : wl.ranks)
    for (const Kernel& k : r.kernels)
      if (k.collective) CHECK(k.work == WorkSource::transfer_bytes);
  const GpuModel m = load_gpu_model("h200");
  const auto out = replay(wl);
  const double bytes_j = m.activity().copy_engine_pj_per_byte * 1e-12 * 4.0 * 1048576;
  const int top = m.sm_index(m.max_sm_mhz());
  const int comm = static_cast<int>(KernelClass::communication);
  for (const RankOutcome& r : out) {
    const double t = r.meter.class_s()[comm];
    REQUIRE(t > 0);
    CHECK(r.meter.class_j()[comm] == Approx(m.idle_power_w(top) * t + t / (t + m.activity().ramp_s) * bytes_j).epsilon(1e-6));
  }
  CHECK(out[0].meter.class_s()[comm] > out[1].meter.class_s()[comm] + 1.9e-3);  // rank 0 waited ...
  CHECK(out[0].meter.class_j()[comm] - out[1].meter.class_j()[comm] ==          // ... at idle power
        Approx(m.idle_power_w(top) * (out[0].meter.class_s()[comm] - out[1].meter.class_s()[comm])).epsilon(1e-3));
}

TEST_CASE("a collective of a one-rank group keeps its recorded time: no transfer, its kernel worked on the GPU", "[traces][batched]") {
  const Workload wl = import_kineto_text(one_rank_allreduce_trace(), "rank0.json", Classifier::load_default());
  REQUIRE(wl.collectives.size() == 1);
  const Json d = describe_collectives(wl);
  CHECK(d["calls_simulated"] == 0);
  CHECK(d["groups"][0]["complete"] == true);  // its one rank is here; it is not simulated
  CHECK(d["groups"][0]["simulated"] == false);
  CHECK_THAT(collectives_line(d), Catch::Contains("of one rank: \"0\" of 1 rank, 1 call"));
  const auto out = replay(wl);
  CHECK(communication_s(out[0]) == Approx(50e-6).epsilon(1e-9));  // 0 while a group of one was "simulated"
}

TEST_CASE("a batch's kernel posts its sends and receives at once: an exchange both sides start with a send finishes",
          "[traces][batched]") {
  const Workload wl = exchange(2000);
  REQUIRE(wl.collectives.size() == 4);
  const Json d = describe_collectives(wl);
  CHECK(d["calls_simulated"] == 4);
  CHECK(d["batched_kernels"] == 2);
  CHECK(d["batched_calls"] == 4);
  const auto out = replay(wl);
  // Rank 0 reaches its batch 2 ms before rank 1: its kernel lasts until rank 1's send has come, both end together.
  CHECK(out[0].stats.end_s == Approx(out[1].stats.end_s).epsilon(0).margin(1e-9));
  CHECK(communication_s(out[0]) > 2000e-6);
  CHECK(communication_s(out[0]) - communication_s(out[1]) == Approx(2000e-6).margin(1e-9));
  // The same calls as kernels of their own (a send, then a receive, on both sides) wait for each other for ever.
  CHECK_THROWS_WITH(replay(unbatched(wl)), Catch::Contains("every rank waits on another"));
}

TEST_CASE("a coalescing group's end written as a \"coalesced\" record, or as both, batches the same calls", "[traces][batched]") {
  for (const GroupEnd end : {GroupEnd::record, GroupEnd::both}) {
    INFO((end == GroupEnd::record ? "record" : "record and annotation"));
    ImportReport rep;
    rank_file(0, batched_rank_trace(0, {{{"send", 1, 64}, {"recv", 1, 64}}}, 1000, end), &rep);
    std::string notes;
    for (const std::string& n : rep.notes) notes += n + "\n";
    CHECK_THAT(notes, Catch::Contains("1 NCCL kernel each makes") && !Catch::Contains("coalesced x"));
    const Workload wl = exchange(500, end);
    CHECK(describe_collectives(wl)["batched_kernels"] == 2);
    const auto out = replay(wl);
    CHECK(communication_s(out[0]) - communication_s(out[1]) == Approx(500e-6).margin(1e-9));
  }
  // a coalescing group of other calls (collectives) keeps its kernel's recorded time and is counted as such, whichever
  // the group's end
  for (const GroupEnd end : {GroupEnd::record, GroupEnd::annotation}) {
    std::string trace = batched_rank_trace(0, {{{"send", 1, 64}}}, 1000, end);
    const std::string send = R"("Collective name": "send")";
    trace.replace(trace.find(send), send.size(), R"("Collective name": "allgather")");
    ImportReport rep;
    const Workload wl = rank_file(0, trace, &rep).workload;
    CHECK(describe_collectives(wl)["batched_kernels"] == 0);
    REQUIRE(rep.notes.size() == 1);
    CHECK_THAT(rep.notes[0], Catch::Contains("1 communication call name no modelled collective (coalesced x1)"));
  }
}

TEST_CASE("a send whose kernel carries its own record is no call of the batch after it", "[traces][batched]") {
  // Before the batch, a send whose launch lies in its record and whose kernel carries the same args (as some Kineto
  // versions write them): its record launched a kernel, so the batch is the two records after it.
  std::string trace = batched_rank_trace(0, {{{"send", 1, 64}, {"recv", 1, 64}}}, 1000);
  const std::string args = R"("Collective name": "send", "dtype": "BFloat16", "In msg nelems": 32, "Out msg nelems": 32, "Group size": 2, )"
                           R"("Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Dst Rank": 1)";
  const std::string single = R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 5, "ts": 40, "dur": 20, "args": {)" + args +
                             R"(}}, {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 5, "ts": 45, "dur": 2, "args": {"correlation": 99}}, )"
                             R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 0, "tid": 20, "ts": 50, "dur": 20, "args": {"device": 0, "stream": 20, "correlation": 99, )" +
                             args + "}}, ";
  trace.insert(trace.find(R"({"ph": "X", "cat": "kernel", "name": "sm90)"), single);
  const Workload wl = rank_file(0, trace).workload;
  const Json d = describe_collectives(wl);
  CHECK(d["batched_kernels"] == 1);
  CHECK(d["batched_calls"] == 2);
  CHECK(d["point_to_point_calls"] == 3);
}

TEST_CASE("a batch whose peers are not imported keeps its recorded duration", "[traces][batched]") {
  std::vector<RankTrace> parts;
  parts.push_back(rank_file(0, batched_rank_trace(0, {{{"send", 1, 64}, {"recv", 1, 64}}}, 1000)));
  const Workload wl = merge_rank_workloads(std::move(parts));
  const Json d = describe_collectives(wl);
  CHECK(d["calls_simulated"] == 0);
  CHECK(d["calls_at_recorded_duration"] == 2);
  CHECK(communication_s(replay(wl)[0]) == Approx(50e-6).epsilon(1e-9));
}

TEST_CASE("batches pair with single transfers of the peer and with several batches, channel by channel", "[traces][batched]") {
  // Rank 0 batches [send, send] to rank 1, which receives them in two kernels of its own; then a second batch on rank
  // 0 [recv] is a plain transfer.
  std::vector<RankTrace> parts;
  parts.push_back(rank_file(0, batched_rank_trace(0, {{{"send", 1, 64}, {"send", 1, 128}}, {{"recv", 1, 32}}}, 1000)));
  parts.push_back(rank_file(1, batched_rank_trace(1, {{{"recv", 0, 64}}, {{"recv", 0, 128}, {"send", 0, 32}}}, 3000)));
  const Workload wl = merge_rank_workloads(std::move(parts));
  CHECK(describe_collectives(wl)["batched_kernels"] == 2);
  const auto out = replay(wl);
  CHECK(out[0].stats.end_s == Approx(out[1].stats.end_s).epsilon(0).margin(1e-6));
  CHECK(communication_s(out[0]) > 2000e-6);
}

TEST_CASE("the merge's dry run lets batches meet, so it still finds the inferred transfers no replay can finish", "[traces][batched]") {
  // Ranks 0 and 1 exchange in a batch (recorded); ranks 0 and 2 then each send before they receive, in transfers
  // inferred from PyTorch 2.0's "nccl:send" names: those channels are un-paired, the batches run on the cluster. (Were
  // the batch taken as a send, then a receive, ranks 0 and 1 would be stuck at recorded calls and every peer kept.)
  std::vector<RankTrace> parts;
  std::vector<std::string> notes;
  parts.push_back(rank_file(0, batched_rank_trace(0, {{{"send", 1, 64}, {"recv", 1, 64}}}, 1000, GroupEnd::annotation, {"send 0->2", "recv 0<-2"}, 3)));
  parts.push_back(rank_file(1, batched_rank_trace(1, {{{"send", 0, 64}, {"recv", 0, 64}}}, 3000, GroupEnd::annotation, {}, 3)));
  parts.push_back(rank_file(2, batched_rank_trace(2, {}, 1000, GroupEnd::annotation, {"send 2->0", "recv 2<-0"}, 3)));
  const Workload wl = merge_rank_workloads(std::move(parts), &notes);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("in an order a replay of each rank's kernels one after another cannot finish") &&
                           Catch::Contains("4 calls keep their recorded durations"));
  const Json d = describe_collectives(wl);
  CHECK(d["batched_kernels"] == 2);
  CHECK(d["calls_simulated"] == 4);
  CHECK(d["point_to_point_without_peer"] == 4);
  const auto out = replay(wl);
  // rank 0 waits 2 ms at the batch, then its two inferred transfers keep their recorded 50 us each
  CHECK(communication_s(out[0]) - communication_s(out[1]) == Approx(2000e-6 + 100e-6).margin(1e-9));
}

TEST_CASE("a batch's transfer to a rank not imported is not waited for: the batch lasts at least its recorded time",
          "[traces][batched]") {
  // Rank 0 sends to ranks 1 and 2 in one batch; rank 2 is not imported. Ranks 0 and 3 then each send before they
  // receive (inferred from "nccl:send" names): the merge's dry run passes rank 0's batch once rank 1 has met it, and
  // un-pairs those inferred channels. (Waiting for rank 2, it would see rank 0 stuck at a recorded call and keep every
  // peer, leaving the replay to deadlock.)
  std::vector<RankTrace> parts;
  std::vector<std::string> notes;
  parts.push_back(rank_file(0, batched_rank_trace(0, {{{"send", 1, 64}, {"send", 2, 64}}}, 1000, GroupEnd::annotation, {"send 0->3", "recv 0<-3"}, 4)));
  parts.push_back(rank_file(1, batched_rank_trace(1, {{{"recv", 0, 64}}}, 1000, GroupEnd::annotation, {}, 4)));
  parts.push_back(rank_file(3, batched_rank_trace(3, {}, 1000, GroupEnd::annotation, {"send 3->0", "recv 3<-0"}, 4)));
  const Workload wl = merge_rank_workloads(std::move(parts), &notes);
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::Contains("cannot finish") && Catch::Contains("4 calls keep their recorded durations"));
  const auto out = replay(wl);
  // rank 0: its batch (50 us recorded, the transfer to rank 1 far shorter) and its two inferred transfers (50 us each)
  CHECK(communication_s(out[0]) == Approx(150e-6).margin(1e-9));
}

TEST_CASE("a batch written to Chakra makes its channels compute nodes, the peer's single transfers too", "[traces][batched][chakra]") {
  std::vector<RankTrace> parts;
  parts.push_back(rank_file(0, batched_rank_trace(0, {{{"send", 1, 64}, {"send", 1, 128}}}, 1000)));
  parts.push_back(rank_file(1, batched_rank_trace(1, {{{"recv", 0, 64}}, {{"recv", 0, 128}}}, 3000)));
  const Workload wl = merge_rank_workloads(std::move(parts));
  const Workload again = chakra_round_trip(wl, "dvfs_chakra_batched_single");  // not refused
  REQUIRE(again.ranks.size() == 2);
  for (const Rank& r : again.ranks)
    for (const Kernel& k : r.kernels) CHECK_FALSE(k.collective);
}

TEST_CASE("a send and a receive to the rank itself, each its own kernel, are written to Chakra as compute nodes", "[traces][batched][chakra]") {
  // One send and one receive on channel (0, 0) would share its tags; the replay keeps them at their recorded time.
  const Workload wl = unbatched(
      import_kineto(std::string(DVFS_TEST_FIXTURES) + "/pytorch/batched_p2p_h100_torch2.11.json", Classifier::load_default()));
  const Workload again = chakra_round_trip(wl, "dvfs_chakra_self_transfers");
  REQUIRE(again.ranks.size() == 1);
  CHECK(again.ranks[0].kernels.size() == wl.ranks[0].kernels.size());
  for (const Kernel& k : again.ranks[0].kernels) CHECK_FALSE(k.collective);
}

TEST_CASE("a replay's Kineto export writes a batch on its kernel and reads it back as the batch", "[traces][batched][export]") {
  const Workload wl = exchange(2000);
  const GpuModel m = load_gpu_model("h200");
  const auto out = replay(wl, true);
  const std::string text = trace_export_text(engine_trace_export(wl, out, m.name(), m.sm_count(), 1, Json::object()));
  CHECK_THAT(text, Catch::Contains("\"Batched calls\":[{\"Collective name\":\"send\""));
  const Workload again = import_kineto_text(text, "exported.json", Classifier::load_default());
  REQUIRE(again.collectives.size() == 4);
  CHECK(describe_collectives(again)["batched_kernels"] == 2);
  CHECK(describe_collectives(again)["calls_simulated"] == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(again.collectives[i].kind == wl.collectives[i].kind);
    CHECK(again.collectives[i].peer == wl.collectives[i].peer);
    CHECK(again.collectives[i].bytes == wl.collectives[i].bytes);
    CHECK(again.collectives[i].batched == wl.collectives[i].batched);
  }
  const auto again_out = replay(again);
  CHECK(communication_s(again_out[0]) - communication_s(again_out[1]) == Approx(communication_s(out[0]) - communication_s(out[1])).margin(1e-6));
  // priced by the same bytes: the export writes them over the simulated time, the re-import reads that time
  const int comm = static_cast<int>(KernelClass::communication);
  for (std::size_t r = 0; r < 2; ++r) {
    for (const Kernel& k : again.ranks[r].kernels)
      if (k.collective) CHECK(k.work == WorkSource::transfer_bytes);
    CHECK(again_out[r].meter.class_j()[comm] == Approx(out[r].meter.class_j()[comm]).epsilon(1e-4));
  }
}

TEST_CASE("a batch written to Chakra is a compute node of its kernel's duration", "[traces][batched][chakra]") {
  const Workload wl = exchange(2000);
  const Workload again = chakra_round_trip(wl, "dvfs_chakra_batched");
  REQUIRE(again.ranks.size() == 2);
  for (std::size_t r = 0; r < 2; ++r) {
    REQUIRE(again.ranks[r].kernels.size() == wl.ranks[r].kernels.size());
    CHECK_FALSE(again.ranks[r].kernels[1].collective);
    CHECK(again.ranks[r].kernels[1].duration_s == wl.ranks[r].kernels[1].duration_s);
    CHECK(again.ranks[r].kernels[1].work == WorkSource::transfer_bytes);  // priced by the same bytes
    CHECK(again.ranks[r].kernels[1].memory_tbps == wl.ranks[r].kernels[1].memory_tbps);
  }
}

TEST_CASE("a kernel's \"Batched calls\" that are not a list of sends and receives are an error naming the field", "[traces][batched]") {
  auto error_of = [](const std::string& batched) {
    const std::string text = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 0, "tid": 7, "ts": 0, "dur": 5, )"
                             R"("args": {"device": 0, "stream": 7, "Collective name": "coalesced", "Batched calls": )" + batched + "}}]}";
    try {
      import_kineto_text(text, "bad.json", Classifier::load_default());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of("3"), Catch::Contains("bad.json") && Catch::Contains("traceEvents[0].args.Batched calls") && Catch::Contains("expected a list"));
  CHECK_THAT(error_of("[]"), Catch::Contains("traceEvents[0].args.Batched calls"));
  const std::string allreduce = R"([{"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 4, "Out msg nelems": 4, "Group size": 2}])";
  CHECK_THAT(error_of(allreduce), Catch::Contains("Batched calls[0]") && Catch::Contains("expected a send or receive record"));
  const std::string untyped = R"([{"Collective name": "send", "dtype": "Quaternion", "In msg nelems": 4, "Out msg nelems": 4, "Group size": 2, "Dst Rank": 1}])";
  CHECK_THAT(error_of(untyped), Catch::Contains("Batched calls[0].dtype"));
  const std::string text = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 0, "tid": 7, "ts": 0, "dur": 5, )"
                           R"("args": {"device": 0, "stream": 7, "Collective name": "allreduce", "Batched calls": []}}]})";
  CHECK_THROWS_WITH(import_kineto_text(text, "bad.json", Classifier::load_default()),
                    Catch::Contains("traceEvents[0].args.Collective name") && Catch::Contains("expected \"coalesced\""));
}

TEST_CASE("a send's \"Rank\" is its peer's, so a trace naming no rank of its own takes it from another record", "[traces][batched]") {
  // PyTorch's profiler writes a send's or receive's "Rank" as the peer's rank in the group (and "Dst Rank" / "Src
  // Rank" as the peer's global rank from it); a collective's "Rank" is the caller's.
  const std::string trace = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 2, "ts": 100, "dur": 50,
     "args": {"Collective name": "send", "dtype": "Float", "In msg nelems": 4, "Out msg nelems": 4, "Group size": 2,
              "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Rank": 1, "Dst Rank": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 120, "dur": 5, "args": {"correlation": 9}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 0, "tid": 20, "ts": 130, "dur": 40,
     "args": {"device": 0, "stream": 20, "correlation": 9}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 2, "ts": 200, "dur": 50,
     "args": {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 4, "Out msg nelems": 4, "Group size": 2,
              "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "Rank": 0}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 220, "dur": 5, "args": {"correlation": 10}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 20, "ts": 230, "dur": 40,
     "args": {"device": 0, "stream": 20, "correlation": 10}}]})";
  const Workload wl = import_kineto_text(trace, "r0.json", Classifier::load_default());
  REQUIRE(wl.ranks.size() == 1);
  CHECK(wl.ranks[0].id == 0);
  REQUIRE(wl.collectives.size() == 2);
  CHECK(wl.collectives[0].peer == 1);
}
