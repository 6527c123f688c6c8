#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/validate/stream_pairs.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

using namespace dvfs;

namespace {

const std::string kPairs = data_dir() + "/traces/recordings/h200-stream-pairs";
const std::string kSplit = data_dir() + "/models/calibration/stream-pairs-split.json";
const std::string kModel = data_dir() + "/models/contention/h200-streams.json";

}  // namespace

TEST_CASE("Overlap replay: every held-out H200 stream pair within 5 % in time and energy, the busy union beside it",
          "[stream-pairs][validation]") {
  const Json rep = validate_stream_pairs(kPairs, kSplit, kModel);
  int held = 0;
  for (const Json& r : rep["pairs"]) {
    if (r["split"] != "held_out") continue;
    ++held;
    INFO(r["pair"].get<std::string>());
    CHECK(std::fabs(r["overlap_time_error_pct"].get<double>()) <= 5.0);
    CHECK(std::fabs(r["overlap_energy_error_pct"].get<double>()) <= 5.0);
    CHECK(r.contains("busy_union_time_error_pct"));
    CHECK(r.contains("busy_union_energy_error_pct"));
  }
  CHECK(held == 4);
}

TEST_CASE("The stream-pair split rejects a pair in both lists, naming the file and field", "[stream-pairs]") {
  const std::string bad = dvfs::testing::scratch_path("dvfs-test-stream-split-both.json");
  std::ofstream(bad) << R"({"fit": ["a+b"], "held_out": ["a+b"]})";
  try {
    read_stream_pair_split(bad);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == bad);
    CHECK(std::string(e.what()).find("held_out") != std::string::npos);
  }
}
