#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/critical_path/perseus_validation.hpp"
#include "sim/critical_path/plan_file.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>  // getpid: temp files of their own when tests run in parallel (ctest -j, other checkouts)

using namespace dvfs;

namespace {
std::string runs(const char* set) { return data_dir() + "/traces/perseus-runs/" + set; }

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = dvfs::testing::scratch_path("dvfs_cp_test_" + name);
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("every shipped Perseus plan is Merak's 1F1B instruction list with each non-computation carrying the clock before it", "[critical_path]") {
  for (const char* set : {"a100_gpt3-xl_pp4", "a40_gpt3-2.7b_pp8"}) {
    const PerseusRunSet rs = find_perseus_runs(runs(set));
    CHECK(rs.plans.size() >= 31);
    for (int n : rs.plans) {
      const ClockPlanFile plan = read_clock_plan(rs.sched_file(n));
      const int S = static_cast<int>(plan.ranks.size());
      const int M = S == 4 ? 128 : 256;
      for (int s = 0; s < S; ++s) {
        const auto ins = merak_instructions(s, S, M);
        const auto& ps = plan.ranks[static_cast<std::size_t>(s)].power_states_mhz;
        INFO(set << " plan " << n << " rank " << s);
        REQUIRE(ps.size() == ins.size());
        std::size_t first = 0;
        while (ins[first] != MerakInstruction::forward) ++first;
        double cur = ps[first];
        for (std::size_t i = 0; i < ins.size(); ++i) {
          if (ins[i] == MerakInstruction::forward || ins[i] == MerakInstruction::backward) cur = ps[i];
          else CHECK(ps[i] == cur);
        }
      }
      // The computations come out in dvfs-sim's 1F1B order, one clock each.
      PlanLayout layout = PlanLayout::per_computation;
      const auto clocks = computation_clocks(plan, S, M, 1, PipelineSchedule::one_f_one_b, &layout);
      CHECK(layout == PlanLayout::merak_1f1b);
      for (const auto& c : clocks) CHECK(c.size() == static_cast<std::size_t>(2 * M));
    }
  }
  // The counts the artifact shows: 4 stages x 128 micro-batches.
  CHECK(merak_instructions(0, 4, 128).size() == 518);
  CHECK(merak_instructions(1, 4, 128).size() == 520);
  CHECK(merak_instructions(2, 4, 128).size() == 518);
  CHECK(merak_instructions(3, 4, 128).size() == 516);
}

TEST_CASE("a plan written per computation or as Merak instructions reads back to the same clocks", "[critical_path]") {
  const int S = 3, M = 5;
  std::vector<std::vector<double>> clocks(S);
  for (int s = 0; s < S; ++s)
    for (int i = 0; i < 2 * M; ++i) clocks[static_cast<std::size_t>(s)].push_back(900 + 15 * ((s * 7 + i) % 9));
  for (PlanLayout layout : {PlanLayout::per_computation, PlanLayout::merak_1f1b}) {
    ClockPlanFile plan = plan_from_computation_clocks(clocks, S, M, layout);
    const std::string path = write_temp("roundtrip.json", clock_plan_to_json(plan).dump());
    const ClockPlanFile back = read_clock_plan(path);
    PlanLayout seen = PlanLayout::per_computation;
    CHECK(computation_clocks(back, S, M, 1, PipelineSchedule::one_f_one_b, &seen) == clocks);
    CHECK(seen == layout);
    std::remove(path.c_str());
  }
}

TEST_CASE("malformed plans are errors naming the file, the rank's field and what was expected", "[critical_path]") {
  const std::string bad_order = write_temp("order.json", R"([{"rank": 1, "power_states": [1410]}])");
  CHECK_THROWS_WITH(read_clock_plan(bad_order), Catch::Contains(bad_order) && Catch::Contains("[0].rank") &&
                                                    Catch::Contains("expected ranks in order"));
  const std::string not_clock = write_temp("clock.json", R"([{"rank": 0, "power_states": [1410, "fast"]}])");
  CHECK_THROWS_WITH(read_clock_plan(not_clock), Catch::Contains("[0].power_states") && Catch::Contains("entry 1"));
  const std::string unknown = write_temp("key.json", R"([{"rank": 0, "power_states": [1410], "freq": 1}])");
  CHECK_THROWS_AS(read_clock_plan(unknown), InputError);
  const std::string truncated = write_temp("trunc.json", R"([{"rank": 0, "power_st)");
  CHECK_THROWS_WITH(read_clock_plan(truncated), Catch::Contains("malformed JSON"));
  // Wrong instruction count for the pipeline: neither one per computation nor Merak's list.
  const std::string short_plan = write_temp("count.json", R"([{"rank": 0, "power_states": [1410, 1410, 1410]},
                                                              {"rank": 1, "power_states": [1410, 1410, 1410, 1410]}])");
  CHECK_THROWS_WITH(computation_clocks(read_clock_plan(short_plan), 2, 2, 1, PipelineSchedule::one_f_one_b),
                    Catch::Contains("[0].power_states") && Catch::Contains("expected 4 entries (one per computation) or") &&
                        Catch::Contains("got 3"));
  CHECK_THROWS_WITH(computation_clocks(read_clock_plan(short_plan), 3, 2, 1, PipelineSchedule::one_f_one_b),
                    Catch::Contains("expected 3 ranks"));
  for (const auto& p : {bad_order, not_clock, unknown, truncated, short_plan}) std::remove(p.c_str());
}

TEST_CASE("a plan clock the GPU model does not have is an error naming the plan and the rank", "[critical_path]") {
  const PerseusRunSet rs = find_perseus_runs(runs("a100_gpt3-xl_pp4"));
  const GpuModel m = load_gpu_model("a100-sxm4");
  const PerseusPrediction p = build_perseus_prediction(rs, m, m.idle_w(), 0);
  ClockPlanFile plan = read_clock_plan(rs.sched_file(37));
  const auto ins = merak_instructions(2, 4, 128);
  std::size_t fwd = 0;
  while (ins[fwd] != MerakInstruction::forward) ++fwd;
  plan.ranks[2].power_states_mhz[fwd] = 1412;  // stage 2's first forward, not on the 15 MHz grid
  plan.file = "37.sched.json";
  CHECK_THROWS_WITH(perseus_plan_options(p, plan, m), Catch::Contains("37.sched.json") && Catch::Contains("[2].power_states") &&
                                                          Catch::Contains("1412") && Catch::Contains("not an SM clock of a100-sxm4"));
}

TEST_CASE("a plan read back with clocks beyond any integer writes them as numbers", "[critical_path]") {
  // fuzz/findings/plan-clock-1e308.json: the writer converted every whole clock to long (UB for 1e308).
  const std::string path = write_temp("huge.json", R"([{"rank": 0, "power_states": [1e308, 1410, 1410.5]}])");
  const ClockPlanFile plan = read_clock_plan(path);
  const Json j = clock_plan_to_json(plan);
  CHECK(j[0]["power_states"][0].get<double>() == 1e308);
  CHECK(j[0]["power_states"][1].is_number_integer());
  CHECK(j[0]["power_states"][1].get<long>() == 1410);
  CHECK(j[0]["power_states"][2].get<double>() == 1410.5);
  std::remove(path.c_str());
}
