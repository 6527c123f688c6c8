#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "models/src/switch_latency.hpp"
#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <vector>

using namespace dvfs;

namespace {

struct Moments {
  double mean = 0, sd = 0, min = 0;
};

Moments moments(const LognormalLatency& d, std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  double sum = 0, sum2 = 0, lo = 1e300;
  for (int i = 0; i < n; ++i) {
    const double x = d.draw(rng);
    sum += x;
    sum2 += x * x;
    lo = std::min(lo, x);
  }
  Moments m;
  m.mean = sum / n;
  m.sd = std::sqrt(std::max(0.0, sum2 / n - m.mean * m.mean));
  m.min = lo;
  return m;
}

std::string temp_model(const std::function<void(Json&)>& edit, const char* tag) {
  Json j = read_json_file(models_dir() + "/h200.json");
  edit(j);
  std::string path = dvfs::testing::scratch_path(std::string("dvfs-test-switch-latency-") + tag + ".json");
  std::ofstream(path) << j.dump();
  return path;
}

}  // namespace

TEST_CASE("lognormal switch latencies have the requested mean and standard deviation", "[models][latency]") {
  struct Case {
    double mean, spread;
  };
  for (const Case c : {Case{0.05, 0.02}, Case{0.05, 0.005}, Case{1e-4, 1e-4}, Case{0.02, 0.04}}) {
    INFO("mean " << c.mean << " spread " << c.spread);
    LognormalLatency d(c.mean, c.spread);
    CHECK(d.random());
    const Moments m = moments(d, 12345, 100000);
    CHECK(m.mean == Approx(c.mean).epsilon(0.02));
    CHECK(m.sd == Approx(c.spread).epsilon(0.05));
    CHECK(m.min > 0);  // a latency is always positive
  }
}

TEST_CASE("standard normal draws from mt19937_64 have mean 0 and deviation 1 and repeat with the seed", "[models][latency]") {
  std::mt19937_64 a(7), b(7), c(8);
  double sum = 0, sum2 = 0;
  bool differs = false;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const double z = standard_normal(a);
    CHECK(z == standard_normal(b));
    differs = differs || z != standard_normal(c);
    sum += z;
    sum2 += z * z;
  }
  CHECK(std::fabs(sum / n) < 0.01);
  CHECK(std::sqrt(sum2 / n) == Approx(1.0).epsilon(0.01));
  CHECK(differs);
  // Uniforms lie in [0, 1).
  std::mt19937_64 u(1);
  for (int i = 0; i < 1000; ++i) {
    const double x = uniform01(u);
    CHECK(x >= 0.0);
    CHECK(x < 1.0);
  }
}

TEST_CASE("a spread of 0 gives exactly the mean and draws nothing", "[models][latency]") {
  LognormalLatency d(0.05, 0.0);
  CHECK_FALSE(d.random());
  std::mt19937_64 rng(3), untouched(3);
  for (int i = 0; i < 10; ++i) CHECK(d.draw(rng) == 0.05);
  CHECK(rng() == untouched());
  // A mean of 0 is an instantaneous switch whatever the spread.
  CHECK(LognormalLatency(0.0, 0.01).draw(rng) == 0.0);
}

TEST_CASE("per-GPU latency seeds differ by scenario seed and by rank", "[models][latency]") {
  CHECK(latency_seed(0, 0) == latency_seed(0, 0));
  CHECK(latency_seed(0, 0) != latency_seed(1, 0));
  CHECK(latency_seed(0, 0) != latency_seed(0, 1));
  CHECK(latency_seed(1, 0) != latency_seed(0, 1));
}

TEST_CASE("target scaling interpolates linearly between its points and holds outside them", "[models][latency]") {
  DomainLatency d;
  d.mean_s = 0.05;
  CHECK(d.multiplier(1000) == 1.0);  // no points: no dependence on the target clock
  d.target_scaling = {{600, 3.0}, {1000, 1.0}, {2000, 2.0}};
  CHECK(d.multiplier(345) == 3.0);
  CHECK(d.multiplier(600) == 3.0);
  CHECK(d.multiplier(800) == Approx(2.0));
  CHECK(d.multiplier(1000) == 1.0);
  CHECK(d.multiplier(1500) == Approx(1.5));
  CHECK(d.multiplier(2000) == 2.0);
  CHECK(d.multiplier(2500) == 2.0);
  d.target_scaling = {{1200, 0.5}};
  CHECK(d.multiplier(300) == 0.5);
  CHECK(d.multiplier(3000) == 0.5);
}

TEST_CASE("shipped models carry the per-domain switch latency with their published means", "[models][latency]") {
  for (const char* name : {"h200", "a100-sxm4", "a40", "rtx-3080-ti"}) {
    INFO(name);
    const GpuModel m = load_gpu_model(name);
    const SwitchLatency& l = m.switch_latency();
    CHECK(l.sm.mean_s == 0.05);
    CHECK(l.mem.mean_s == 0.05);
    CHECK(l.sm.spread_s == 0);
    CHECK(l.sm.energy_j == 0);
    CHECK(l.firmware_s == 0.001);
  }
  const GpuModel b200 = load_gpu_model("b200-like");
  const SwitchLatency& b = b200.switch_latency();
  CHECK(b.sm.mean_s == 1e-4);
  CHECK(b.mem.mean_s == 1e-4);
  const GpuModel h200 = load_gpu_model("h200");
  const SwitchLatency& h = h200.switch_latency();
  REQUIRE(h.sm.target_scaling.size() == 2);
  CHECK(h.sm.multiplier(990) == 1.0);
}

TEST_CASE("a model without a memory latency uses the SM one for it", "[models][latency]") {
  const std::string path = temp_model(
      [](Json& j) {
        j["switch_latency"] = {{"sm", {{"mean_s", 0.03}, {"spread_s", 0.01}, {"energy_j", 0.2},
                                       {"target_scaling", Json::array({Json::array({345, 2.0}), Json::array({1980, 1.0})})}}},
                               {"firmware_s", 0.002}};
      },
      "mem-default");
  const GpuModel m = GpuModel::load(path);
  const SwitchLatency& l = m.switch_latency();
  CHECK(l.mem.mean_s == 0.03);
  CHECK(l.mem.spread_s == 0.01);
  CHECK(l.mem.energy_j == 0.2);
  CHECK(l.mem.target_scaling.empty());  // its points are SM clocks: not applied to memory clocks
  CHECK(l.sm.multiplier(345) == 2.0);
  CHECK(l.firmware_s == 0.002);
}

TEST_CASE("switch latency mistakes in a model file name the file and the field", "[models][latency][errors]") {
  auto expect = [](const std::function<void(Json&)>& edit, const std::string& part) {
    const std::string path = temp_model(edit, "bad");
    try {
      GpuModel::load(path);
      FAIL("expected an InputError for " << part);
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(path) != std::string::npos);
      CHECK(std::string(e.what()).find(part) != std::string::npos);
    }
  };
  auto pts = [](std::initializer_list<std::pair<double, double>> p) {
    Json a = Json::array();
    for (const auto& [f, m] : p) a.push_back(Json::array({f, m}));
    return a;
  };
  // The old single-number keys are gone from model files.
  expect([](Json& j) { j["switch_latency"]["nvml_s"] = 0.05; }, "switch_latency.nvml_s: unknown key");
  expect([](Json& j) { j["switch_latency"]["mem_nvml_s"] = 0.05; }, "switch_latency.mem_nvml_s: unknown key");
  expect([](Json& j) { j["switch_latency"].erase("sm"); }, "switch_latency.sm: missing required key");
  expect([](Json& j) { j["switch_latency"].erase("firmware_s"); }, "switch_latency.firmware_s: missing required key");
  expect([](Json& j) { j["switch_latency"]["sm"].erase("mean_s"); }, "switch_latency.sm.mean_s: missing required key");
  expect([](Json& j) { j["switch_latency"]["sm"]["spred_s"] = 0.01; }, "switch_latency.sm.spred_s: unknown key");
  expect([](Json& j) { j["switch_latency"]["sm"]["mean_s"] = -0.01; }, "switch_latency.sm.mean_s: expected 0 to 10 s");
  expect([](Json& j) { j["switch_latency"]["mem"]["spread_s"] = -1; }, "switch_latency.mem.spread_s: expected 0 to 10 s");
  expect([](Json& j) { j["switch_latency"]["mem"]["spread_s"] = "wide"; }, "switch_latency.mem.spread_s: expected a number");
  expect([](Json& j) { j["switch_latency"]["sm"]["energy_j"] = -0.5; }, "switch_latency.sm.energy_j: expected 0 to 1000 J");
  expect([](Json& j) { j["switch_latency"]["sm"]["mean_s"] = 0; j["switch_latency"]["sm"]["spread_s"] = 0.01; },
         "switch_latency.sm.spread_s: a spread needs a positive mean_s");
  expect([&](Json& j) { j["switch_latency"]["sm"]["target_scaling"] = pts({{1000, 1.0}, {900, 2.0}}); },
         "switch_latency.sm.target_scaling: expected points in strictly increasing MHz order");
  expect([&](Json& j) { j["switch_latency"]["sm"]["target_scaling"] = pts({{1000, 1.0}, {1000, 2.0}}); },
         "switch_latency.sm.target_scaling: expected points in strictly increasing MHz order");
  expect([&](Json& j) { j["switch_latency"]["sm"]["target_scaling"] = pts({{1000, 0.0}}); },
         "switch_latency.sm.target_scaling: expected [target MHz > 0, multiplier > 0] pairs (element 0)");
  expect([](Json& j) { j["switch_latency"]["sm"]["target_scaling"] = Json::array({Json::array({1000})}); },
         "switch_latency.sm.target_scaling: expected [target MHz > 0, multiplier > 0] pairs");
  expect([](Json& j) { j["switch_latency"]["sm"]["target_scaling"] = Json::array(); },
         "switch_latency.sm.target_scaling: expected at least one");
  expect([](Json& j) { j["switch_latency"]["sm"]["target_scaling"] = 2.0; },
         "switch_latency.sm.target_scaling: expected a list");
  expect([](Json& j) { j["switch_latency"]["mem"] = Json::array({0.05}); }, "switch_latency.mem: expected an object");
}
