#include "models/src/model_registry.hpp"
#include "models/src/stream_contention.hpp"
#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace dvfs;

namespace {

ContentionModel model(double gain) {
  ContentionModel m;
  m.overlap_gain = gain;
  m.clock_time_share = 0.4;
  m.power_clock_exponent = 2.5;
  m.cap_factor = 1.0;
  return m;
}

}  // namespace

TEST_CASE("Two full-grid kernels of equal DRAM share are time-sliced: together they go no faster than one after the other",
          "[contention]") {
  const auto r = concurrent_rates(model(0.3), {{1.0, 0.2}, {1.0, 0.2}});
  REQUIRE(r.size() == 2);
  CHECK(r[0] + r[1] == Approx(1.0));
}

TEST_CASE("A compute-bound kernel beside a memory-bound one gains the overlap gain times their DRAM-share difference", "[contention]") {
  const auto r = concurrent_rates(model(0.3), {{1.0, 0.1}, {1.0, 0.9}});
  CHECK(r[0] + r[1] == Approx(1.0 + 0.3 * 0.8));
}

TEST_CASE("A communication kernel on a few SMs: beside a kernel that leaves them free both run at full speed; beside a full "
          "grid it takes its share of the SMs from it", "[contention]") {
  const double comm = 16.0 / 132;
  const auto free = concurrent_rates(model(0), {{0.8, 0.3}, {comm, 0.2}});
  CHECK(free[0] == Approx(1.0));
  CHECK(free[1] == Approx(1.0));
  const auto full = concurrent_rates(model(0), {{1.0, 0.3}, {comm, 0.2}});
  CHECK(full[0] == Approx(1.0 / (1.0 + comm)));
  const auto dram = concurrent_rates(model(0.1), {{0.5, 0.8}, {0.3, 0.6}});  // asks for 1.4 of the DRAM bandwidth
  CHECK(dram[0] * 0.8 + dram[1] * 0.6 == Approx(1.0));
}

TEST_CASE("Power of overlapping kernels counts the static part once and each dynamic part at its rate", "[contention]") {
  CHECK(concurrent_power_w(100, {500, 300}, {0.5, 0.5}) == Approx(100 + 200 + 100));
}

TEST_CASE("The cap settles a timeline whose mean power is over it to the cap, slower and at the cap", "[contention]") {
  const ContentionModel m = model(0);
  const std::vector<TimelineSegment> hot = {{1.0, 900, false, 1.0}};
  const CapSettlement s = settle_under_cap(m, 100, 700, hot);
  CHECK(s.capped);
  CHECK(s.energy_j / s.seconds == Approx(700).epsilon(1e-6));
  CHECK(s.seconds > 1.0);
}

TEST_CASE("Head-room under the cap lets power-capped kernels' clocks rise, never above the top clock", "[contention]") {
  const ContentionModel m = model(0);
  // A capped GEMM (clock 0.8 of the top) beside a cool copy: the mix averages 500 W, under 700.
  const std::vector<TimelineSegment> mix = {{0.5, 700, true, 1.25}, {0.5, 300, false, 1.0}};
  const CapSettlement s = settle_under_cap(m, 100, 700, mix);
  CHECK(s.clock_ratio > 1.0);
  CHECK(s.clock_ratio <= 1.25 + 1e-12);
  CHECK(s.seconds < 1.0);
  CHECK(s.energy_j / s.seconds <= 700 + 1e-6);
  // Nothing elastic and under the cap: unchanged.
  const CapSettlement cool = settle_under_cap(m, 100, 700, {{1.0, 300, false, 1.0}});
  CHECK(cool.seconds == Approx(1.0));
  CHECK(cool.energy_j == Approx(300));
}

TEST_CASE("The shipped H200 contention model loads; a bad field is named", "[contention]") {
  const ContentionModel m = load_contention_model(data_dir() + "/models/contention/h200-streams.json");
  CHECK(m.gpu == "h200");
  Json j = read_json_file(data_dir() + "/models/contention/h200-streams.json");
  j["copy_sm_share"] = 1.5;
  try {
    contention_model_from_json(j, "bad.json");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "bad.json");
    CHECK(std::string(e.what()).find("copy_sm_share") != std::string::npos);
  }
}
