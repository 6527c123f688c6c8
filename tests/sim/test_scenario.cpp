#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "traces/src/gzip_file.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation/simulation.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <vector>

using namespace dvfs;

namespace {

Json base() {
  return Json{{"name", "t"},
              {"trace", data_dir() + "/tests/fixtures/kineto_current.json"},
              {"gpu", "h200"},
              {"policy", "native"}};
}

void expect_error(const Json& doc, const std::string& field, const std::string& problem) {
  try {
    Scenario sc = parse_scenario(doc, "my.json", ".");
    simulate(sc);
    FAIL("expected an InputError for field " << field);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.rfind("my.json: " + field + ": ", 0) == 0);
    CHECK(msg.find(problem) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("the default scenario replays the shipped H200 recording under the native governor", "[scenario]") {
  Scenario sc = load_scenario(default_scenario_path());
  CHECK(sc.policy.name == "native");
  CHECK(sc.gpu == "h200");
  SimulationResult r = simulate(sc);
  const Json& s = r.summary;
  CHECK(s["trace"]["activities"] == 11172);
  REQUIRE(s["steps"].size() == 6);
  for (const auto& st : s["steps"]) {
    CHECK(st["time_s"].get<double>() > 0.25);
    CHECK(st["mean_power_w"].get<double>() > 500);
    CHECK(st["mean_power_w"].get<double>() <= 700);
    CHECK(st["kernels"] == 1862);
  }
  // Energy is fully attributed: phases + host gaps = total; classes = busy energy.
  double phases = 0, classes = 0;
  for (auto& [k, v] : s["energy_by_phase_j"].items()) phases += v.get<double>();
  for (auto& [k, v] : s["energy_by_class_j"].items()) classes += v.get<double>();
  const double total = s["totals"]["energy_j"].get<double>();
  CHECK(phases == Catch::Detail::Approx(total).epsilon(1e-9));
  CHECK(classes + s["energy_by_phase_j"]["host_gaps"].get<double>() == Catch::Detail::Approx(total).epsilon(1e-9));
  CHECK(s["energy_by_phase_j"]["backward"].get<double>() > s["energy_by_phase_j"]["forward"].get<double>());
  CHECK(s["energy_by_phase_j"]["optimizer"].get<double>() > 0);
  CHECK(s["energy_by_annotation_j"].contains("layer23.mlp"));
  double residency = 0;
  for (const auto& r2 : s["sm_clock_residency"]) residency += r2["time_s"].get<double>();
  CHECK(residency == Catch::Detail::Approx(s["totals"]["time_s"].get<double>()).epsilon(1e-9));
}

TEST_CASE("scenario mistakes are one-line errors naming file, field and expectation", "[scenario][errors]") {
  struct Case {
    std::function<void(Json&)> edit;
    std::string field, problem;
  };
  const std::vector<Case> cases = {
      {[](Json& j) { j["polcy"] = "max"; }, "polcy", "unknown key"},
      {[](Json& j) { j["repeat"] = "twice"; }, "repeat", "expected an integer"},
      {[](Json& j) { j["gpu"] = "h900"; }, "gpu", "unknown GPU \"h900\""},
      {[](Json& j) { j["policy"] = "turbo"; }, "policy", "unknown policy \"turbo\""},
      {[](Json& j) { j["policy"] = {{"name", "static"}, {"sm_mhz", 5000}, {"mem_mhz", 3201}}; }, "policy.sm_mhz",
       "not supported by h200"},
      {[](Json& j) { j["policy"] = {{"name", "static"}, {"sm_mhz", 1410}, {"mem_mhz", 1234}}; }, "policy.mem_mhz",
       "expected one of 2201 3201"},
      {[](Json& j) { j["policy"] = {{"name", "max"}, {"sm_mhz", 1410}}; }, "policy.sm_mhz", "only the static policy"},
      {[](Json& j) { j["trace"] = "/nonexistent/trace.json"; }, "trace", "not found"},
      {[](Json& j) { j["engine"] = "warp"; }, "engine", "expected \"local-loop\" or \"event\""},
      {[](Json& j) { j["policy"] = {{"name", "per-kernel"}, {"budget_pct", -1}}; }, "policy.budget_pct", "0 to 1000 %"},
      {[](Json& j) { j["policy"] = {{"name", "per-kernel"}, {"budget_pct", 1e300}}; }, "policy.budget_pct", "0 to 1000 %"},
      {[](Json& j) { j["policy"] = {{"name", "native"}, {"budget_pct", 1}}; }, "policy.budget_pct", "only the planned policies"},
      // an unknown name is named as such, not by the first key it would not take
      {[](Json& j) { j["policy"] = {{"name", "magic"}, {"budget_pct", 1}}; }, "policy.name", "unknown policy \"magic\""},
      {[](Json& j) { j["trace_gpu"] = "h900"; }, "trace_gpu", "unknown GPU \"h900\""},
      {[](Json& j) { j["switch_latency"] = {{"nvml_s", -1}}; }, "switch_latency.nvml_s", "expected 0 to 10 s"},
      {[](Json& j) { j["switch_latency"] = {{"mem_nvml_s", "slow"}}; }, "switch_latency.mem_nvml_s", "expected a number"},
      {[](Json& j) { j["switch_latency"] = {{"firmware_s", -0.1}}; }, "switch_latency.firmware_s", "expected 0 to 10 s"},
      {[](Json& j) { j["switch_latency"] = {{"firmware_s", 1e300}}; }, "switch_latency.firmware_s", "expected 0 to 10 s"},
      {[](Json& j) { j["switch_latency"] = {{"gpu_s", 0.1}}; }, "switch_latency.gpu_s", "unknown key"},
      {[](Json& j) { j["switch_latency"] = 0.05; }, "switch_latency", "expected an object"},
      {[](Json& j) { j["switch_latency"] = {{"sm", {{"mean_s", -1}}}}; }, "switch_latency.sm.mean_s", "expected 0 to 10 s"},
      {[](Json& j) { j["switch_latency"] = {{"sm", {{"spread_s", 1e300}}}}; }, "switch_latency.sm.spread_s", "expected 0 to 10 s"},
      {[](Json& j) { j["switch_latency"] = {{"sm", {{"spread_s", "wide"}}}}; }, "switch_latency.sm.spread_s",
       "expected a number"},
      {[](Json& j) { j["switch_latency"] = {{"mem", {{"energy_j", -2}}}}; }, "switch_latency.mem.energy_j", "expected 0 to 1000 J"},
      {[](Json& j) { j["switch_latency"] = {{"sm", {{"sigma", 1}}}}; }, "switch_latency.sm.sigma", "unknown key"},
      {[](Json& j) { j["switch_latency"] = {{"sm", 0.05}}; }, "switch_latency.sm", "expected an object"},
      {[](Json& j) { j["switch_latency"] = {{"sm", {{"target_scaling", {{1500, 1.0}, {1000, 2.0}}}}}}; },
       "switch_latency.sm.target_scaling", "strictly increasing"},
      {[](Json& j) { j["switch_latency"] = {{"mem", {{"target_scaling", {{1500, -1.0}}}}}}; },
       "switch_latency.mem.target_scaling", "multiplier > 0"},
      {[](Json& j) { j["switch_latency"] = {{"sm", {{"mean_s", 0}, {"spread_s", 0.01}}}}; }, "switch_latency.sm.spread_s",
       "positive mean_s"},
      {[](Json& j) { j["switch_latency"] = {{"sm", {{"mean_s", 0.01}}}, {"nvml_s", 0.02}}; }, "switch_latency.nvml_s",
       "either sm or nvml_s"},
      {[](Json& j) { j["seed"] = -1; }, "seed", "expected a non-negative integer, got -1"},
      {[](Json& j) { j["seed"] = 1.5; }, "seed", "expected a non-negative integer, got number"},
      {[](Json& j) { j["seed"] = "42"; }, "seed", "expected a non-negative integer, got string"},
      {[](Json& j) { j["output"] = {{"timeline_interval_s", 0}}; }, "output.timeline_interval_s", "positive"},
      {[](Json& j) { j.erase("gpu"); }, "gpu", "missing"},
      // a cluster only places the collectives of several ranks: with one, or beside a synthetic job, it changed nothing
      {[](Json& j) { j["cluster"] = {{"gpus_per_node", 4}}; }, "cluster", "this trace has one rank"},
      {[](Json& j) { j["synthetic"] = {{"model", "llama-3.2-3b"}}; j["cluster"] = {{"gpus_per_node", 4}}; }, "cluster",
       "a synthetic job takes its cluster inside `synthetic`"},
  };
  for (const Case& c : cases) {
    Json j = base();
    c.edit(j);
    expect_error(j, c.field, c.problem);
  }
}

TEST_CASE("a device, a directory or an empty path where a file belongs is refused, not read until memory runs out",
          "[scenario][errors]") {
  Json j = base();
  j["trace"] = "/dev/zero";  // read until std::bad_alloc (exit 3)
  CHECK_THROWS_WITH(parse_scenario(j, "my.json", "."), Catch::Contains("my.json: trace: not a regular file: /dev/zero"));
  j["trace"] = "";
  CHECK_THROWS_WITH(parse_scenario(j, "my.json", "."), Catch::Contains("my.json: trace: expected a path, got an empty string"));
  CHECK_THROWS_WITH(read_json_file("/dev/zero"), Catch::Contains("/dev/zero: is not a regular file"));
  CHECK_THROWS_WITH(read_json_file("/tmp"), Catch::Contains("/tmp: is a directory (expected a readable JSON file)"));
  CHECK_THROWS_WITH(read_maybe_gzip("/dev/zero"), Catch::Contains("/dev/zero: is not a regular file"));
}

TEST_CASE("a malformed trace named by a scenario reports the trace file", "[scenario][errors]") {
  Json j = base();
  j["trace"] = data_dir() + "/tests/fixtures/truncated.json.gz";
  try {
    simulate(parse_scenario(j, "my.json", "."));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("truncated.json.gz: truncated gzip") != std::string::npos);
  }
}

TEST_CASE("scenario switch latency overrides the model key by key, and the old shorthands still work", "[scenario][latency]") {
  Json j = base();
  j["seed"] = 12;
  j["switch_latency"] = {{"sm", {{"spread_s", 0.01}, {"target_scaling", {{990, 2.0}, {1980, 1.0}}}}},
                         {"mem", {{"mean_s", 0.02}, {"energy_j", 0.1}}},
                         {"firmware_s", 0.002}};
  Scenario sc = parse_scenario(j, "my.json", ".");
  CHECK(sc.replay.seed == 12);
  GpuModel m = load_gpu_model("h200");
  SwitchLatency l = m.switch_latency();
  sc.replay.sm_latency.apply_to(l.sm);
  sc.replay.mem_latency.apply_to(l.mem);
  CHECK(l.sm.mean_s == m.switch_latency().sm.mean_s);  // not overridden: the model's
  CHECK(l.sm.spread_s == 0.01);
  CHECK(l.sm.multiplier(990) == 2.0);
  CHECK(l.sm.energy_j == m.switch_latency().sm.energy_j);
  CHECK(l.mem.mean_s == 0.02);
  CHECK(l.mem.spread_s == m.switch_latency().mem.spread_s);
  CHECK(l.mem.energy_j == 0.1);
  CHECK(sc.replay.firmware_latency_s == 0.002);

  // The older shorthands set a deterministic mean.
  Json old = base();
  old["switch_latency"] = {{"nvml_s", 0.03}, {"mem_nvml_s", 0.04}, {"firmware_s", 0.0}};
  Scenario so = parse_scenario(old, "my.json", ".");
  CHECK(so.replay.sm_latency.mean_s == 0.03);
  CHECK(so.replay.sm_latency.spread_s == 0.0);
  CHECK(so.replay.mem_latency.mean_s == 0.04);
  CHECK(so.replay.mem_latency.spread_s == 0.0);
  CHECK(so.replay.firmware_latency_s == 0.0);
  CHECK(so.replay.seed == 0);  // default
  CHECK(parse_scenario(base(), "my.json", ".").replay.sm_latency.empty());

  // The seed is reported, and a scenario with a spread replays the same way twice.
  SimulationResult a = simulate(sc), b = simulate(sc);
  CHECK(a.summary["seed"] == 12);
  CHECK(a.summary.dump() == b.summary.dump());
  CHECK(a.summary["totals"].contains("switch_energy_j"));
  CHECK(a.summary["per_gpu"][0].contains("switch_energy_j"));
  CHECK(a.summary["per_gpu"][0].contains("switch_latency_s"));
}
