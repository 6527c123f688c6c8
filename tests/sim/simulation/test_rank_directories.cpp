#include "sim/core/errors.hpp"
#include "sim/simulation/simulation.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
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
