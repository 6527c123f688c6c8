#include "replay_fixtures.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using namespace dvfs::testing;

// The local loop touches SimGrid once per stream; event mode makes every segment a SimGrid event.
// Both must give the same replay: this is what licenses the fast path.
TEST_CASE("local-loop and event-by-event modes agree on the real H200 trace", "[sim][engine]") {
  GpuModel model = load_gpu_model("h200");
  LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-gpt3xl");
  for (const char* policy : {"native", "recorded", "max"}) {
    INFO(policy);
    Scenario sc;
    sc.name = "modes";
    sc.policy.name = policy;
    sc.mode = EngineMode::local_loop;
    SimulationResult local = simulate(sc, trace, model);
    sc.mode = EngineMode::event;
    SimulationResult event = simulate(sc, trace, model);
    const auto& a = local.summary;
    const auto& b = event.summary;
    CHECK(b["totals"]["time_s"].get<double>() == Catch::Detail::Approx(a["totals"]["time_s"].get<double>()).epsilon(1e-7));
    CHECK(b["totals"]["energy_j"].get<double>() == Catch::Detail::Approx(a["totals"]["energy_j"].get<double>()).epsilon(1e-7));
    CHECK(b["totals"]["clock_switches"] == a["totals"]["clock_switches"]);
    REQUIRE(a["steps"].size() == b["steps"].size());
    for (std::size_t i = 0; i < a["steps"].size(); ++i) {
      CHECK(b["steps"][i]["time_s"].get<double>() == Catch::Detail::Approx(a["steps"][i]["time_s"].get<double>()).epsilon(1e-6));
      CHECK(b["steps"][i]["energy_j"].get<double>() == Catch::Detail::Approx(a["steps"][i]["energy_j"].get<double>()).epsilon(1e-6));
    }
    // SimGrid's clock ends where the local loop says the stream ends.
    CHECK(a["per_gpu"][0]["simgrid_end_s"].get<double>() == Catch::Detail::Approx(a["per_gpu"][0]["time_s"].get<double>()).epsilon(1e-9));
    CHECK(b["per_gpu"][0]["simgrid_end_s"].get<double>() == Catch::Detail::Approx(b["per_gpu"][0]["time_s"].get<double>()).epsilon(1e-9));
  }
}

TEST_CASE("several GPUs replay side by side on their own SimGrid hosts", "[sim][engine]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = one_step_workload({make_kernel(KernelClass::gemm, 1e-3, 0)});
  Rank second = wl.ranks[0];
  second.id = 1;
  second.kernels[0].duration_s = 3e-3;
  wl.ranks.push_back(second);
  for (EngineMode mode : {EngineMode::local_loop, EngineMode::event}) {
    auto out = replay(wl, m, PolicySpec{"max", {}, 0}, {}, mode);
    REQUIRE(out.size() == 2);
    CHECK(out[0].stats.end_s == Catch::Detail::Approx(1e-3));
    CHECK(out[1].stats.end_s == Catch::Detail::Approx(3e-3));
    CHECK(out[1].simgrid_end_s == Catch::Detail::Approx(3e-3));
  }
}

TEST_CASE("the same scenario gives byte-identical summaries", "[sim][engine]") {
  Scenario sc = load_scenario(default_scenario_path());
  SimulationResult a = simulate(sc);
  SimulationResult b = simulate(sc);
  CHECK(a.summary.dump(2) == b.summary.dump(2));
  CHECK(a.timeline_csv() == b.timeline_csv());
}
