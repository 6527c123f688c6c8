#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "traces/src/stage_profile.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <unistd.h>
#include <fstream>
#include <string>
#include <vector>

using namespace dvfs;

namespace {

std::string write_csv(const std::string& name, const std::string& text) {
  const std::string path = dvfs::testing::scratch_path("dvfs_profile_" + name + ".csv");
  std::ofstream(path) << text;
  return path;
}

const char* kGood =
    "stage,instruction,frequency,time,energy\n"
    "0,forward,1410,0.050,24.0\n0,backward,1410,0.100,46.0\n"
    "0,forward,1395,0.051,23.9\n0,backward,1395,0.101,45.5\n"
    "0,forward,1380,0.052,23.8\n0,backward,1380,0.102,45.0\n";

}  // namespace

TEST_CASE("the Perseus A100 profile reads as 16 series of 38 clocks from 855 to 1410 MHz", "[traces][profile]") {
  const StageProfile p = load_stage_profile(data_dir() + "/traces/profiles/perseus/gpt3-175b+a100_sxm_bf16.csv");
  CHECK(p.rows == 608);
  REQUIRE(p.series.size() == 16);
  CHECK(p.min_sm_mhz == 855);
  CHECK(p.max_sm_mhz == 1410);
  CHECK(p.instructions() == std::vector<std::string>{"forward", "backward"});
  for (const auto& s : p.series) {
    CHECK(s.points.size() == 38);
    CHECK(s.points.front().sm_mhz < s.points.back().sm_mhz);  // sorted ascending whatever the file order
  }
  const ProfilePoint* top = p.series[0].at(1410);
  REQUIRE(top != nullptr);
  CHECK(top->time_s == Catch::Detail::Approx(0.05016166687011708));
  CHECK(top->line == 2);
}

TEST_CASE("a byte-order mark, tabs, CRLF and blank lines are tolerated", "[traces][profile]") {
  const StageProfile p = load_stage_profile(write_csv("tolerant",
      "\xEF\xBB\xBFstage,instruction,frequency,time,energy\r\n0,\tforward ,1410,0.05,24\r\n  \r\n"
      "0,forward,1395,0.051,23.9\r\n0,forward,1380,0.052,23.8\r\n\t\r\n"));
  REQUIRE(p.series.size() == 1);
  CHECK(p.series[0].instruction == "forward");
  CHECK(p.rows == 3);
}

TEST_CASE("exact copies of a series are marked and counted once", "[traces][profile]") {
  const StageProfile p = load_stage_profile(data_dir() + "/traces/profiles/perseus/bloom+a40_bf16.csv");
  CHECK(p.series.size() == 16);
  CHECK(p.distinct_series == 4);  // the artifact repeats stage 0's measurements for stages 1-6
  for (const auto& s : p.series) CHECK((s.duplicate_of >= 0) == (s.stage >= 1 && s.stage <= 6));
}

TEST_CASE("columns may come in any order", "[traces][profile]") {
  const StageProfile p = load_stage_profile(write_csv("reordered",
      "frequency,energy,time,instruction,stage\n1410,24,0.05,forward,0\n1395,23.9,0.051,forward,0\n1380,23.8,0.052,forward,0\n"));
  REQUIRE(p.series.size() == 1);
  CHECK(p.series[0].points[2].energy_j == 24);
}

TEST_CASE("stage profile mistakes are one-line errors naming file, row and problem", "[traces][profile]") {
  struct Case {
    std::string name, text, field, problem;
  };
  const std::string h = "stage,instruction,frequency,time,energy\n";
  const std::vector<Case> cases = {
      {"missing_column", "stage,instruction,frequency,time\n0,forward,1410,0.05\n", "row 1", "missing column \"energy\""},
      {"unknown_column", "stage,instruction,frequency,time,energy,power\n", "row 1", "unknown column \"power\""},
      {"cells", h + "0,forward,1410,0.05\n", "row 2", "expected 5 cells, got 4"},
      {"time_text", h + "0,forward,1410,fast,24\n", "row 2 (time)", "expected a positive number, got \"fast\""},
      {"negative_energy", h + "0,forward,1410,0.05,-1\n", "row 2 (energy)", "expected a positive number"},
      {"stage", h + "x,forward,1410,0.05,24\n", "row 2 (stage)", "expected a stage index 0-1000000"},
      {"stage_overflow", h + "99999999999,forward,1410,0.05,24\n", "row 2 (stage)", "expected a stage index"},
      {"quoted", h + "0,\"forward\",1410,0.05,24\n", "row 2", "quoted cells are not supported"},
      {"out_of_order", h + "0,forward,1410,0.05,24\n0,forward,1395,0.051,24\n0,forward,1400,0.05,24\n",
       "row 4 (frequency)", "out of order in stage 0 forward (row 3 has 1395 MHz)"},
      {"repeated", h + "0,forward,1410,0.05,24\n0,forward,1410,0.05,24\n", "row 3 (frequency)", "repeated"},
      {"too_few", h + "0,forward,1410,0.05,24\n0,forward,1395,0.051,24\n", "row 2", "stage 0 forward has 2 clocks; expected at least 3"},
      {"no_top_clock", std::string(kGood) + "1,forward,1395,0.05,24\n1,forward,1380,0.05,24\n1,forward,1365,0.05,24\n",
       "row 8 (frequency)", "no row at the profile's highest clock 1410 MHz"},
      {"empty", "", "row 1", "empty file"},
      {"header_only", h, "", "no data rows"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const std::string path = write_csv(c.name, c.text);
    try {
      load_stage_profile(path);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.rfind(path + ": " + (c.field.empty() ? "" : c.field + ": "), 0) == 0);
      CHECK(msg.find(c.problem) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
}
