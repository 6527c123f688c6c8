#include "models/src/model_registry.hpp"
#include "sim/validate/validate.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;

// The walking skeleton's acceptance figures on the real recording: energy per step within 10 % of the
// NVML counter, time per step within 5 %, with the simulated native governor.
TEST_CASE("H200 GPT-3 XL recording: native-governor replay meets the energy and time targets", "[validate]") {
  Json rep = validate_recording(data_dir() + "/traces/recordings/h200-gpt3xl", "h200");
  REQUIRE(rep["clock_sources"].size() == 2);
  const Json& native = rep["clock_sources"][0];
  const Json& recorded = rep["clock_sources"][1];
  CHECK(native["clock_source"] == "native");
  CHECK(recorded["clock_source"] == "recorded");
  REQUIRE(native["steps"].size() == 6);
  for (const Json& row : native["steps"]) {
    INFO("step " << row["step"]);
    CHECK(std::fabs(row["energy_error_pct"].get<double>()) <= 10.0);
    CHECK(std::fabs(row["time_error_pct"].get<double>()) <= 5.0);
  }
  CHECK(std::fabs(native["total"]["energy_error_pct"].get<double>()) <= 5.0);
  // With the recorded clocks the kernels take their recorded time: only the host lead/tail differ.
  CHECK(std::fabs(recorded["total"]["time_error_pct"].get<double>()) <= 0.5);
  for (const Json& row : recorded["steps"])
    CHECK(std::fabs(row["simulated_mean_sm_mhz"].get<double>() - row["measured_mean_sm_mhz"].get<double>()) < 15);
}
