// The Nsight Systems SQLite reader (traces/src/nsys/, docs/nsys-import.md) on a hand-built export made by
// tests/fixtures/make_nsys_fixture.py, and the trace-format seam (traces/src/trace_formats.hpp) that picks it.
#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/simulation/simulation.hpp"
#include "traces/src/nsys/nsys_importer.hpp"
#include "traces/src/trace_formats.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <utility>
#include <vector>
#include <unistd.h>

using namespace dvfs;

namespace {

// The fixture written by the script into the temp folder (`extra`: the script's further arguments), named
// for this process: CTest runs the test cases in parallel processes.
std::string make_fixture(const std::string& name, const std::string& extra = "") {
  const std::string out = dvfs::testing::scratch_path("dvfs_nsys_" + name + ".sqlite");
  const std::string cmd = "/usr/bin/python3 " + std::string(DVFS_TEST_FIXTURES) + "/make_nsys_fixture.py " + out + " " + extra;
  REQUIRE(std::system(cmd.c_str()) == 0);
  return out;
}

// The one-line error of importing the fixture with `assign` (TABLE.COLUMN=VALUE) applied, or "no error".
std::string import_error_with(const std::string& assign) {
  try {
    import_nsys_sqlite(make_fixture("set", "--set " + assign), Classifier::load_default());
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const Workload& fixture() {
  static const Workload wl = import_nsys_sqlite(make_fixture("small"), Classifier::load_default());
  return wl;
}

}  // namespace

TEST_CASE("nsys: kernels, memcpy and memset in start order with names, streams, durations and launch shapes", "[nsys]") {
  const Workload& wl = fixture();
  REQUIRE(wl.ranks.size() == 1);
  const Rank& r = wl.ranks[0];
  REQUIRE(r.kernels.size() == 16);  // 14 kernels + 1 memcpy + 1 memset
  CHECK(r.device_name == "NVIDIA H200");
  CHECK(r.kernels[0].kind == ActivityKind::memcpy);
  CHECK(r.kernels[0].duration_s == Approx(4e-6));
  CHECK(r.shapes[0].bytes == 8u << 20);
  CHECK(r.kernels[1].kind == ActivityKind::memset);
  const Kernel& gemm = r.kernels[2];
  CHECK(wl.names[gemm.name_id].rfind("sm90_xmma_gemm", 0) == 0);
  CHECK(gemm.cls == KernelClass::gemm);
  CHECK(gemm.stream == 7);
  CHECK(gemm.duration_s == Approx(30e-6));
  CHECK(r.shapes[2].grid[0] == 132);
  CHECK(r.shapes[2].block[0] == 256);
  CHECK(r.shapes[2].registers_per_thread == 96);
  CHECK(r.shapes[2].shared_memory_bytes == 49152 + 1024);
  CHECK(r.kernels[3].cls == KernelClass::elementwise);
  CHECK(r.kernels[3].stream == 13);
  CHECK(r.kernels[3].gap_before_s == Approx(3e-6));  // 1 us idle + the next launch's 2 us
  CHECK(r.correlations[2] == 102);
}

TEST_CASE("nsys: NVTX ranges become steps and phases through the kernels' runtime launches", "[nsys]") {
  const Workload& wl = fixture();
  const Rank& r = wl.ranks[0];
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[0].label == "ProfilerStep#1");
  CHECK(r.steps[1].label == "ProfilerStep#2");
  CHECK(r.steps[0].last_kernel - r.steps[0].first_kernel + 1 == 7);
  std::multiset<Phase> phases;
  for (std::size_t i = 2; i < r.kernels.size(); ++i) phases.insert(wl.annotation_sets[r.kernels[i].annotation_set].phase);
  CHECK(phases.count(Phase::forward) == 6);   // text inline
  CHECK(phases.count(Phase::backward) == 8);  // text through StringIds
  CHECK(wl.annotation_sets[r.kernels[0].annotation_set].phase == Phase::other);  // the memcpy before the steps
}

TEST_CASE("trace formats: a scenario's SQLite file goes to the nsys reader, a JSON file to Kineto's", "[nsys]") {
  const std::string path = make_fixture("seam");
  CHECK(is_nsys_sqlite(path));
  CHECK_FALSE(is_nsys_sqlite(std::string(DVFS_TEST_FIXTURES) + "/kineto_current.json"));
  const LoadedTrace t = load_trace(path);
  CHECK(t.report.schema == "nsys-sqlite");
  CHECK(t.workload.ranks[0].kernels.size() == 16);
  CHECK(load_trace(std::string(DVFS_TEST_FIXTURES) + "/kineto_current.json").report.schema == "kineto");
  // The replay runs on it like on any trace.
  Scenario sc;
  sc.trace_path = path;
  sc.gpu = "h200";
  const SimulationResult res = simulate(sc);
  CHECK(res.summary["totals"]["kernel_events"].get<int>() == 16);
  CHECK(res.summary["energy_by_phase_j"]["backward"].get<double>() > 0);
}

TEST_CASE("nsys: a copy's negative or impossible bytes are refused, naming the table's column and row", "[nsys]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"CUPTI_ACTIVITY_KIND_MEMCPY.bytes=-5", "CUPTI_ACTIVITY_KIND_MEMCPY.bytes: expected bytes >= 0, got -5, row 0"},
      {"CUPTI_ACTIVITY_KIND_MEMSET.bytes=1000000000000000000", "CUPTI_ACTIVITY_KIND_MEMSET.bytes: expected at most 1e+15 bytes in one copy or fill (1 PB; a GPU holds ~0.2 TB), got 1000000000000000000, row 0"},
      // 8 GB in the fixture's 4 us memcpy: 2e15 B/s, beyond any copy engine
      {"CUPTI_ACTIVITY_KIND_MEMCPY.bytes=8000000000", "got 8000000000 bytes in 4 us (2e+15 B/s), row 0"}};
  for (const auto& [assign, expected] : cases) {
    INFO(assign);
    CHECK_THAT(import_error_with(assign), Catch::Contains(expected));
  }
}

TEST_CASE("nsys: launch and NVTX rows that are no times are refused, naming the table's column and row, not read as 0",
          "[nsys]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"CUPTI_ACTIVITY_KIND_RUNTIME.start=x", "CUPTI_ACTIVITY_KIND_RUNTIME.start: expected an integer, row 1"},
      {"CUPTI_ACTIVITY_KIND_RUNTIME.correlationId=NULL", "CUPTI_ACTIVITY_KIND_RUNTIME.correlationId: expected an integer, row 1"},
      {"CUPTI_ACTIVITY_KIND_RUNTIME.end=1", "CUPTI_ACTIVITY_KIND_RUNTIME.end: expected end >= start, row 1"},
      {"NVTX_EVENTS.end=1", "NVTX_EVENTS.end: expected end >= start, row "},
      {"NVTX_EVENTS.eventType=x", "NVTX_EVENTS.eventType: expected an integer (59 push/pop, 60 start/end, ...), row 1"}};
  for (const auto& [assign, expected] : cases) {
    INFO(assign);
    CHECK_THAT(import_error_with(assign), Catch::Contains(expected));
  }
}

TEST_CASE("nsys: a missing column or table, or a report instead of its export, is an error naming it", "[nsys]") {
  const std::string path = make_fixture("bad", "--drop-column CUPTI_ACTIVITY_KIND_KERNEL.streamId");
  try {
    import_nsys_sqlite(path, Classifier::load_default());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("CUPTI_ACTIVITY_KIND_KERNEL.streamId: missing column") != std::string::npos);
  }
  const std::string empty = dvfs::testing::scratch_path("dvfs_empty.sqlite");
  std::ofstream(empty).close();
  CHECK_THROWS_AS(import_nsys_sqlite(empty, Classifier::load_default()), InputError);
  try {
    import_trace_file("run.nsys-rep", Classifier::load_default());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("nsys export --type sqlite") != std::string::npos);
  }
}
