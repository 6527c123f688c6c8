#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/pipeline/perseus_runs.hpp"
#include "sim/pipeline/pipeline.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;
using Catch::Detail::Approx;

TEST_CASE("1F1B runs warm-up forwards, then one forward one backward, then the remaining backwards", "[pipeline]") {
  const auto ops = one_f_one_b(1, 4, 6);  // stage 1 of 4: two warm-up forwards
  std::string order;
  for (const auto& op : ops) order += (op.backward ? "B" : "F") + std::to_string(op.microbatch) + " ";
  CHECK(order == "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
  CHECK(one_f_one_b(3, 4, 6).front().backward == false);
  CHECK(one_f_one_b(3, 4, 6)[1].backward == true);  // the last stage alternates at once
}

TEST_CASE("a uniform pipeline takes (micro-batches + stages - 1) x (forward + backward)", "[pipeline]") {
  PipelineWorkload wl;
  wl.stages = 4;
  wl.microbatches = 8;
  wl.forward_s.assign(4, std::vector<double>(8, 1.0));
  wl.backward_s.assign(4, std::vector<double>(8, 2.0));
  const PipelineResult r = simulate_pipeline(wl);
  CHECK(r.iteration_s == Approx((8 + 4 - 1) * 3.0));
  for (int s = 0; s < 4; ++s) CHECK(r.stage_busy_s[static_cast<std::size_t>(s)] == Approx(24.0));
  // A transfer latency on every hop delays the pipeline's fill and drain.
  wl.p2p_latency_s = 0.1;
  CHECK(simulate_pipeline(wl).iteration_s > r.iteration_s);
}

TEST_CASE("a slow stage sets the pipeline's pace and the others wait on it", "[pipeline]") {
  PipelineWorkload wl;
  wl.stages = 3;
  wl.microbatches = 10;
  wl.forward_s.assign(3, std::vector<double>(10, 1.0));
  wl.backward_s.assign(3, std::vector<double>(10, 2.0));
  for (auto& f : wl.forward_s[1]) f = 2.0;  // stage 1 is a straggler on the forward pass
  const PipelineResult r = simulate_pipeline(wl);
  CHECK(r.iteration_s >= 10 * 4.0);  // at least the slow stage's own work
  CHECK(r.stage_blocked_s[2] > r.stage_blocked_s[1]);
}

TEST_CASE("inconsistent pipeline workloads are errors naming the field", "[pipeline]") {
  PipelineWorkload wl;
  wl.stages = 2;
  wl.microbatches = 2;
  wl.forward_s.assign(2, std::vector<double>(2, 1.0));
  wl.backward_s.assign(2, std::vector<double>(3, 1.0));
  CHECK_THROWS_WITH(simulate_pipeline(wl, "w"), Catch::Contains("w: backward: expected one duration per micro-batch"));
  wl.backward_s.assign(2, std::vector<double>(2, -1.0));
  CHECK_THROWS_WITH(simulate_pipeline(wl, "w"), Catch::Contains("expected durations >= 0 s"));
}

TEST_CASE("the measured Perseus all-max-clock pipelines are predicted within 3 %", "[pipeline][validation]") {
  for (const char* run : {"a100_gpt3-xl_pp4", "a40_gpt3-2.7b_pp8"}) {
    INFO(run);
    const Json rep = validate_perseus_runs(data_dir() + "/traces/perseus-runs/" + run, {0, 1}, 0.0);
    CHECK(rep["rows"].size() == 6);
    for (const auto& r : rep["rows"]) CHECK(std::fabs(r["error_pct"].get<double>()) <= 3.0);
  }
}
