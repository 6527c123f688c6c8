// Chakra execution traces (traces/src/chakra/, docs/chakra.md): files written independently by
// tests/fixtures/make_chakra_fixture.py (python3-protobuf, its own varint framing) import through the trace-format
// seam; dvfs-sim's own files decode with that script; bad input is one InputError naming file, node and field.
#include "support/scratch_dir.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "traces/src/chakra/chakra_importer.hpp"
#include "traces/src/chakra/chakra_stream.hpp"
#include "traces/src/chakra/chakra_writer.hpp"
#include "traces/src/trace_formats.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace dvfs;

namespace {

const std::string kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

// The script's two-rank trace (`bad`: rank 1 broken that way), as PREFIX.0.et / PREFIX.1.et in the test folder.
std::string make_fixture(const std::string& name, const std::string& bad = "") {
  static const dvfs::testing::ScratchDir dir("dvfs_chakra");
  const std::string prefix = dir / name;
  const std::string cmd = "/usr/bin/python3 " + std::string(DVFS_TEST_FIXTURES) + "/make_chakra_fixture.py write " + prefix +
                          (bad.empty() ? "" : " --bad " + bad);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return prefix;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

const Workload& fixture(ImportReport* report = nullptr) {
  static ImportReport rep;
  static const Workload wl = import_trace_file(make_fixture("good"), Classifier::load_default(), &rep);
  if (report) *report = rep;
  return wl;
}

std::string import_error(const std::string& bad) {
  try {
    import_chakra(make_fixture(bad, bad), Classifier::load_default());
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("chakra: the seam reads a prefix's rank files as one job, nodes in dependency order", "[chakra]") {
  ImportReport rep;
  const Workload& wl = fixture(&rep);
  CHECK(rep.schema == "chakra");
  REQUIRE(wl.ranks.size() == 2);
  CHECK(wl.ranks[0].id == 0);
  CHECK(wl.ranks[1].id == 1);
  const Rank& r = wl.ranks[0];
  // fwd GEMM, layernorm (after the host node), bwd GEMM, all-reduce, weight load, send; host and metadata nodes dropped.
  REQUIRE(r.kernels.size() == 6);
  auto name = [&](std::size_t i) { return wl.names[r.kernels[i].name_id]; };
  CHECK(name(0) == kGemm + "_fwd");
  CHECK(name(1) == "layernorm_fwd_kernel");
  CHECK(name(2) == kGemm + "_bwd");
  CHECK(name(3) == "COMM_COLL_NODE_allreduce");
  CHECK(name(4) == "MEM_LOAD_weights");
  CHECK(name(5) == "send");
  CHECK(r.kernels[0].duration_s == Approx(200e-6));
  CHECK(r.kernels[2].duration_s == Approx(300e-6));
  CHECK(r.kernels[0].cls == KernelClass::gemm);
  CHECK(r.kernels[1].cls == KernelClass::normalization);
  CHECK(r.kernels[4].kind == ActivityKind::memcpy);
  // The host node (50 us) the layernorm waits for leaves the device idle that long.
  CHECK(r.kernels[0].gap_before_s == 0.0);
  CHECK(r.kernels[1].gap_before_s == Approx(50e-6));
  CHECK(r.kernels[2].gap_before_s == 0.0);
  CHECK(r.recorded_start_s[2] == Approx(290e-6));
  // num_ops over the duration: 400e9 / 200 us = 2,000 TFLOP/s of tensor work; tensor_size as bytes moved.
  CHECK(r.kernels[0].tensor_tflops == Approx(2000.0));
  CHECK(r.kernels[0].work == WorkSource::shapes);
  CHECK(r.kernels[1].memory_tbps == Approx(80e6 / 40e-6 * 1e-12));
  REQUIRE(r.shapes.size() == r.kernels.size());
  CHECK(r.shapes[4].bytes == (1u << 24));
}

TEST_CASE("chakra: collectives, their group and point-to-point transfers", "[chakra]") {
  const Workload& wl = fixture();
  const Kernel& ar = wl.ranks[0].kernels[3];
  REQUIRE(ar.collective);
  const CollectiveCall& c = wl.collectives[ar.collective - 1];
  CHECK(ar.cls == KernelClass::communication);
  CHECK(c.kind == CollectiveKind::all_reduce);
  CHECK(c.bytes == 1 << 20);
  // No pg_name: the job's ranks (all the files of the prefix).
  REQUIRE(c.group >= 0);
  CHECK(wl.groups[static_cast<std::size_t>(c.group)] == std::vector<int>{0, 1});
  const CollectiveCall& send = wl.collectives[wl.ranks[0].kernels[5].collective - 1];
  const CollectiveCall& recv = wl.collectives[wl.ranks[1].kernels[5].collective - 1];
  CHECK(send.kind == CollectiveKind::send);
  CHECK(send.peer == 1);
  CHECK(recv.kind == CollectiveKind::recv);
  CHECK(recv.peer == 0);
  CHECK(send.bytes == 4096);
  // no time of their own (duration_micros 0): no rate to price their bytes at, so the communication prior
  CHECK(wl.ranks[0].kernels[5].work == WorkSource::unknown);
  CHECK(ar.work == WorkSource::unknown);
  // another tool's file that times them (40 us): priced by their comm_size bytes, as a Kineto trace's; the all-reduce
  // keeps the communication prior
  const Workload timed = import_trace_file(make_fixture("timed-p2p", "timed-p2p"), Classifier::load_default());
  for (const Rank& r : timed.ranks) {
    const Kernel& k = r.kernels[5];
    CHECK(k.work == WorkSource::transfer_bytes);
    CHECK(static_cast<double>(k.memory_tbps) * 1e12 * k.duration_s == Approx(4096).epsilon(1e-6));
    CHECK(r.kernels[3].work == WorkSource::unknown);
  }
}

TEST_CASE("chakra: one rank's file alone imports; its world collectives keep their recorded length", "[chakra]") {
  const std::string prefix = make_fixture("single");
  ImportReport rep;
  const Workload wl = import_trace_file(prefix + ".1.et", Classifier::load_default(), &rep);
  REQUIRE(wl.ranks.size() == 1);
  CHECK(wl.ranks[0].id == 1);  // from the file name
  const CollectiveCall& c = wl.collectives[wl.ranks[0].kernels[3].collective - 1];
  CHECK(wl.groups[static_cast<std::size_t>(c.group)].empty());
  bool noted = false;
  for (const std::string& n : rep.notes) noted = noted || n.find("without pg_name") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("chakra: the writer's files decode with Chakra's framing in Python and import to the same workload", "[chakra]") {
  const Workload& wl = fixture();
  const dvfs::testing::ScratchDir scratch("dvfs_chakra_out");
  const std::string dir = scratch.path();
  ChakraExportOptions opts;
  opts.name = "job";
  const ChakraExportStats st = write_chakra_trace(wl, dir, opts);
  CHECK(st.files == 2);
  // Rank 0 has a host gap before the layernorm: 6 activities + 1 gap node.
  CHECK(st.nodes == 14);
  const std::string cmd = "/usr/bin/python3 " + std::string(DVFS_TEST_FIXTURES) + "/make_chakra_fixture.py dump " + dir + "/job.0.et > " + dir + "/dump.json";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const Json doc = Json::parse(slurp(dir + "/dump.json"));
  REQUIRE(doc["nodes"].size() == 7);
  CHECK(doc["nodes"][0]["name"] == kGemm + "_fwd");
  CHECK(doc["nodes"][0]["type"] == "COMP_NODE");
  CHECK(doc["nodes"][0]["duration_micros"] == 200);
  CHECK(doc["nodes"][1]["name"] == "dvfs-sim host gap");
  CHECK(doc["nodes"][1]["attr"]["is_cpu_op"] == "bool_val");
  CHECK_FALSE(doc["nodes"][0]["attr"].contains("is_cpu_op"));  // Chakra's default: a device node
  CHECK(doc["nodes"][2]["data_deps"] == Json::array({1}));
  CHECK(doc["nodes"][4]["type"] == "COMM_COLL_NODE");
  CHECK(doc["nodes"][4]["attr"]["comm_type"] == "int64_val");  // the value types Chakra's feeder reads
  CHECK(doc["nodes"][4]["attr"]["comm_size"] == "int64_val");
  CHECK(doc["nodes"][4]["attr"]["pg_name"] == "string_val");
  CHECK(doc["nodes"][6]["type"] == "COMM_SEND_NODE");
  CHECK(doc["nodes"][6]["attr"]["comm_dst"] == "int32_val");
  const Json groups = Json::parse(slurp(dir + "/comm_group.json"));
  CHECK(groups["0"] == Json::array({0, 1}));

  const Workload again = import_trace_file(dir + "/job", Classifier::load_default());
  REQUIRE(again.ranks.size() == wl.ranks.size());
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    REQUIRE(again.ranks[r].kernels.size() == wl.ranks[r].kernels.size());
    for (std::size_t i = 0; i < wl.ranks[r].kernels.size(); ++i) {
      const Kernel& a = wl.ranks[r].kernels[i];
      const Kernel& b = again.ranks[r].kernels[i];
      CHECK(again.names[b.name_id] == wl.names[a.name_id]);
      CHECK(b.duration_s == a.duration_s);
      CHECK(b.gap_before_s == a.gap_before_s);
      CHECK(b.cls == a.cls);
      CHECK(b.tensor_tflops == a.tensor_tflops);
      CHECK(b.memory_tbps == a.memory_tbps);
      CHECK(bool(b.collective) == bool(a.collective));
      if (a.collective) {
        const CollectiveCall& x = wl.collectives[a.collective - 1];
        const CollectiveCall& y = again.collectives[b.collective - 1];
        CHECK(x.kind == y.kind);
        CHECK(x.bytes == y.bytes);
        CHECK(x.peer == y.peer);
        if (x.group >= 0) CHECK(wl.groups[static_cast<std::size_t>(x.group)] == again.groups[static_cast<std::size_t>(y.group)]);
      }
    }
  }
}

TEST_CASE("chakra: a send or receive with no peer is written as a compute node of its kernel, keeping its recorded time", "[chakra]") {
  // As merge_rank_workloads leaves sends and receives inferred from "nccl:send" annotations that did not pair up.
  Workload wl = fixture();
  std::size_t peerless = 0;
  for (CollectiveCall& c : wl.collectives)
    if (c.kind == CollectiveKind::send || c.kind == CollectiveKind::recv) c.peer = -1, ++peerless;
  REQUIRE(peerless == 2);
  const dvfs::testing::ScratchDir scratch("dvfs_chakra_peerless");
  ChakraExportOptions opts;
  opts.name = "job";
  write_chakra_trace(wl, scratch.path(), opts);
  const Workload again = import_trace_file(scratch.path() + "/job", Classifier::load_default());  // read back, not refused
  std::size_t kept = 0;
  REQUIRE(again.ranks.size() == wl.ranks.size());
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    REQUIRE(again.ranks[r].kernels.size() == wl.ranks[r].kernels.size());
    for (std::size_t i = 0; i < wl.ranks[r].kernels.size(); ++i) {
      const Kernel& a = wl.ranks[r].kernels[i];
      const CollectiveKind kind = a.collective ? wl.collectives[a.collective - 1].kind : CollectiveKind::all_reduce;
      if (kind != CollectiveKind::send && kind != CollectiveKind::recv) continue;
      const Kernel& b = again.ranks[r].kernels[i];
      CHECK_FALSE(b.collective);
      CHECK(b.duration_s == a.duration_s);
      CHECK(b.cls == KernelClass::communication);
      ++kept;
    }
  }
  CHECK(kept == 2);
}

TEST_CASE("chakra: a collective's CPU side (is_cpu_op, no comm_size), as Chakra's converter writes it, is a host node", "[chakra]") {
  // mlcommons/chakra's PyTorch converter writes `c10d::broadcast_` and its kin as COMM_COLL_NODEs with is_cpu_op true
  // and no comm_size (the NCCL kernel's GPU-side node carries the size); they were refused as a collective without one
  ImportReport good_report, twin_report;
  const Workload& good = fixture(&good_report);
  const Workload twin = import_trace_file(make_fixture("cpu-comm-twin", "cpu-comm-twin"), Classifier::load_default(), &twin_report);
  REQUIRE(twin.ranks.size() == 2);
  CHECK(twin.ranks[1].kernels.size() == good.ranks[1].kernels.size());  // no device activity added
  CHECK(twin.collectives.size() == good.collectives.size());
  const auto host_nodes = [](const ImportReport& r) {
    for (const std::string& n : r.notes)
      if (n.find("host (is_cpu_op) nodes") != std::string::npos) return std::stoi(n);
    return 0;
  };
  CHECK(host_nodes(twin_report) == host_nodes(good_report) + 1);
  // a device-side collective without comm_size is still refused
  CHECK(import_error("no-comm-size").find("attr comm_size: missing") != std::string::npos);
  // the CPU side names no group (only the GPU-side node carries pg_name): it makes no "world" group of its own
  ImportReport named_report;
  const Workload named = import_trace_file(make_fixture("cpu-comm-twin-pg", "cpu-comm-twin-pg"), Classifier::load_default(), &named_report);
  CHECK(named.group_names == std::vector<std::string>{"0"});
  for (const std::string& n : named_report.notes) CHECK(n.find("without pg_name") == std::string::npos);
}

TEST_CASE("chakra: a dependency on a node the file does not hold is taken as met, and counted in a note", "[chakra]") {
  // Chakra's converter drops nodes it does not convert and keeps the edges to them (its own feeder test file has 210
  // such edges); they were refused ("node 3 is not in the file")
  ImportReport good_report, rep;
  const Workload& good = fixture(&good_report);
  const Workload wl = import_trace_file(make_fixture("missing-dep", "missing-dep"), Classifier::load_default(), &rep);
  CHECK(wl.kernel_count() == good.kernel_count());
  bool noted = false;
  for (const std::string& n : rep.notes) noted = noted || n.rfind("1 dependencies on nodes the files do not hold, taken as met", 0) == 0;
  CHECK(noted);
  for (const std::string& n : good_report.notes) CHECK(n.find("do not hold") == std::string::npos);
}

TEST_CASE("chakra: ctrl_deps that close a cycle with data_deps leave the file scheduled on data_deps, as Chakra's feeder does",
          "[chakra]") {
  // Chakra's converter writes an operator's ctrl_deps naming its own kernel, which depends on it through data_deps; its
  // feeder (ETFeeder) schedules on data_deps alone. Such files were refused as cycles; a cycle of data_deps still is.
  ImportReport good_report, rep;
  const Workload& good = fixture(&good_report);
  const Workload wl = import_trace_file(make_fixture("ctrl-cycle", "ctrl-cycle"), Classifier::load_default(), &rep);
  CHECK(wl.kernel_count() == good.kernel_count());
  bool noted = false;
  for (const std::string& n : rep.notes) noted = noted || n.rfind("2 of 2 rank file(s): ctrl_deps close cycles with data_deps", 0) == 0;
  CHECK(noted);
  for (const std::string& n : good_report.notes) CHECK(n.find("ctrl_deps close cycles") == std::string::npos);
  CHECK(import_error("cycle").find("data_deps: the node is on a cycle of data dependencies") != std::string::npos);
}

TEST_CASE("chakra: bad input is one line naming the file, the node and the field", "[chakra]") {
  const std::string truncated = import_error("truncate");
  CHECK(truncated.find(".1.et") != std::string::npos);
  CHECK(truncated.find("(Node)") != std::string::npos);
  CHECK(truncated.find("truncated") != std::string::npos);
  const std::string type = import_error("unknown-type");
  CHECK(type.find("node 2 (layernorm_fwd_kernel) type") != std::string::npos);
  CHECK(type.find("42") != std::string::npos);
  CHECK(import_error("no-comm-size").find("attr comm_size: missing") != std::string::npos);
  CHECK(import_error("cycle").find("cycle") != std::string::npos);
  CHECK(import_error("bad-comm-type").find("GATHER") != std::string::npos);
  for (const std::string& e : {truncated, type}) CHECK(e.find('\n') == std::string::npos);
}

TEST_CASE("chakra: a job with no device work, or with a rank file missing, is refused instead of replayed as 0 s or cut short",
          "[chakra]") {
  // a GlobalMetadata alone decodes to an empty trace: nothing runs on a GPU
  CHECK_THROWS_WITH(import_chakra_bytes({std::string("\x00", 1)}, {"empty.et"}, Classifier::load_default()),
                    Catch::Contains("empty.et: nodes: no device work: expected compute or communication nodes that run on the GPU"));
  const std::string prefix = make_fixture("gap-source");
  const std::string gap = prefix + "-gap";
  std::ofstream(gap + ".0.et", std::ios::binary) << slurp(prefix + ".0.et");
  std::ofstream(gap + ".2.et", std::ios::binary) << slurp(prefix + ".1.et");
  CHECK_THROWS_WITH(import_chakra(gap, Classifier::load_default()), Catch::Contains("with none missing (gap-source-gap.1.et is not there)"));
}

TEST_CASE("chakra: framing errors in bytes: empty, cut size prefix, oversized varint, undecodable message", "[chakra]") {
  const auto err = [](const std::string& bytes) {
    try {
      parse_chakra_bytes(bytes, "x.et");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(err("").find("GlobalMetadata") != std::string::npos);
  CHECK(err(std::string("\x80", 1)).find("size prefix") != std::string::npos);
  CHECK(err(std::string("\xff\xff\xff\xff\x7f", 5)).find("32-bit") != std::string::npos);
  CHECK(err(std::string("\x02\xff\xff", 3)).find("do not decode") != std::string::npos);
  CHECK(err(std::string("\x00", 1)) == "no error");  // an empty GlobalMetadata is a valid (empty) trace
  CHECK(is_chakra_trace("a/b.3.et"));
  CHECK(is_chakra_trace("a/b.3.et.gz"));
  CHECK_FALSE(is_chakra_trace("a/b.json"));
}
