#include "sim/core/errors.hpp"
#include "sim/simulation/simulation.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace dvfs;
namespace fs = std::filesystem;

namespace {

// A fresh folder holding the given sub-folders.
std::string folder_with(const std::string& name, std::initializer_list<const char*> subs) {
  const fs::path dir = fs::temp_directory_path() / ("dvfs-rank-dirs-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* s : subs) fs::create_directories(dir / s);
  return dir.string();
}

}  // namespace

TEST_CASE("rank folders are rank0 .. rank<n-1>, in rank order", "[simulation][ranks]") {
  const std::string dir = folder_with("ok", {"rank0", "rank1", "rank10", "rank2", "rank3", "rank4", "rank5", "rank6", "rank7", "rank8",
                                             "rank9", "ranking-notes", "rank7b", "logs"});  // the last three are no ranks
  const auto ranks = rank_directories(dir);
  REQUIRE(ranks.size() == 11);
  CHECK(ranks[2] == dir + "/rank2");
  CHECK(ranks[10] == dir + "/rank10");
  CHECK(rank_directories(folder_with("none", {"logs"})).empty());
}

TEST_CASE("rank folders with one missing or spelt otherwise are refused naming the folder, not read up to the gap",
          "[simulation][ranks][errors]") {
  CHECK_THROWS_WITH(rank_directories(folder_with("gap", {"rank0", "rank2"})),
                    Catch::Contains("rank2: expected rank folders rank0 .. rank1 with none missing (rank1 is not there)"));
  CHECK_THROWS_WITH(rank_directories(folder_with("no0", {"rank1"})), Catch::Contains("(rank0 is not there)"));
  CHECK_THROWS_WITH(rank_directories(folder_with("zero", {"rank0", "rank01"})), Catch::Contains("rank01: expected rank folders named rank0"));
  CHECK_THROWS_WITH(rank_directories(folder_with("neg", {"rank0", "rank-1"})), Catch::Contains("rank-1: expected rank folders named"));
  CHECK_THROWS_WITH(rank_directories(folder_with("huge", {"rank0", "rank99999999999999999999"})), Catch::Contains("expected rank folders named"));
}

TEST_CASE("a folder of one job's rank trace files side by side is read as that job, as the list of its files is", "[simulation][ranks]") {
  // Holistic Trace Analysis' layout (its TraceAnalysis takes such a folder); it was refused as a recording without
  // trace.json.gz. A recording folder, or one holding a single trace file, is not taken for one.
  const std::string dir = folder_with("flat", {"logs"});
  for (const char* f : {"ddp_rank0_wait.json", "ddp_rank1_wait.json"})
    fs::copy_file(std::string(DVFS_TEST_FIXTURES) + "/pytorch/" + f, fs::path(dir) / f);
  const auto files = rank_trace_files(dir);
  REQUIRE(files.size() == 2);
  CHECK(files[0] == dir + "/ddp_rank0_wait.json");
  const LoadedTrace folder = load_traces({dir});
  const LoadedTrace listed = load_traces(files);
  REQUIRE(folder.workload.ranks.size() == 2);
  CHECK(folder.workload.kernel_count() == listed.workload.kernel_count());
  CHECK(folder.workload.collectives.size() == listed.workload.collectives.size());
  fs::remove(fs::path(dir) / "ddp_rank1_wait.json");
  CHECK(rank_trace_files(dir).empty());  // one file: no job of ranks
  const std::string recording = folder_with("recording-like", {});
  for (const char* f : {"run.json", "a.json", "b.json"}) std::ofstream(fs::path(recording) / f) << "{}";
  CHECK(rank_trace_files(recording).empty());
}
