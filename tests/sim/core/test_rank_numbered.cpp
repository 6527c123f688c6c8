#include "sim/core/errors.hpp"
#include "sim/core/rank_numbered.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

using namespace dvfs;
namespace fs = std::filesystem;

namespace {

// A fresh folder holding empty files of the given names; returns the prefix "<folder>/P.".
std::string files_with(const std::string& name, std::initializer_list<const char*> files) {
  const fs::path dir = fs::temp_directory_path() / ("dvfs-rank-numbered-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : files) std::ofstream(dir / f) << "";
  return (dir / "P.").string();
}

RankNumbering chakra_like(const std::string& prefix, long max_ranks = 16) { return {prefix, {".et", ".et.gz"}, false, "rank files", max_ranks}; }

}  // namespace

TEST_CASE("rank-numbered files come back in rank order, the first listed suffix winning, other names not ranks", "[core][ranks]") {
  const std::string p = files_with("ok", {"P.0.et", "P.1.et.gz", "P.2.et", "P.2.et.gz", "P.10.et", "P.3.et", "P.4.et", "P.5.et", "P.6.et",
                                         "P.7.et", "P.8.et", "P.9.et", "P.x.et", "P.0.et.bak", "Q.11.et", "P.11"});
  const auto files = rank_numbered_entries(chakra_like(p));
  REQUIRE(files.size() == 11);
  CHECK(files[0] == p + "0.et");
  CHECK(files[1] == p + "1.et.gz");
  CHECK(files[2] == p + "2.et");
  CHECK(files[10] == p + "10.et");
  CHECK(rank_numbered_entries(chakra_like(files_with("none", {"Q.0.et"}))).empty());
  CHECK(rank_numbered_entries(chakra_like("/no/such/folder/P.")).empty());
}

TEST_CASE("rank-numbered entries spelt otherwise, missing below the highest or too many are refused naming folder and entry",
          "[core][ranks]") {
  CHECK_THROWS_WITH(rank_numbered_entries(chakra_like(files_with("gap", {"P.0.et", "P.2.et"}))),
                    Catch::Contains("P.2.et: expected rank files P.0.et .. P.1.et with none missing (P.1.et is not there)"));
  CHECK_THROWS_WITH(rank_numbered_entries(chakra_like(files_with("zeros", {"P.0.et", "P.01.et"}))),
                    Catch::Contains("P.01.et: expected rank files named P.0.et, P.1.et, ... (a rank number without sign or leading zeros)"));
  CHECK_THROWS_WITH(rank_numbered_entries(chakra_like(files_with("sign", {"P.0.et", "P.+1.et"}))), Catch::Contains("P.+1.et: expected rank files named"));
  CHECK_THROWS_WITH(rank_numbered_entries(chakra_like(files_with("long", {"P.0.et", "P.1234567890.et"}))), Catch::Contains("without sign or leading zeros"));
  CHECK_THROWS_WITH(rank_numbered_entries(chakra_like(files_with("many", {"P.0.et", "P.1.et", "P.2.et"}), 2)),
                    Catch::Contains("P.<N>.et: expected at most 2 rank files"));
}
