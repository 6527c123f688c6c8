#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/critical_path/perseus_validation.hpp"
#include "traces/src/gzip_file.hpp"
#include "perseus_variant.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>  // getpid: temp files of their own when tests run in parallel (ctest -j, other checkouts)

using namespace dvfs;
using Catch::Detail::Approx;

// The figures of the README's Validation table. The model as calibrated misses the energy target on
// both sets; the board fit (each board's clock ceiling and the run set's time share, fitted on the
// even-numbered plans' times only) meets both targets, on the held-out odd-numbered plans too.
TEST_CASE("Perseus measured runs: the board fit predicts every plan's time within 2 % and energy within 5 %, held out too", "[critical_path][validation]") {
  PerseusValidationOptions o;
  o.frontier = false;
  const Json a40 = validate_perseus(data_dir() + "/traces/perseus-runs/a40_gpt3-2.7b_pp8", o);
  CHECK(a40["plans"].size() == 31);
  const Json& a40m = test::perseus_variant(a40, "measured anchor");  // the A40 model as calibrated on the measured all-max anchor
  CHECK(a40m["rows"].size() == 31);
  CHECK(a40m["time_mape_pct"].get<double>() <= 2.0);
  CHECK(a40m["energy_mape_pct"].get<double>() > 5.0);  // missed: the anchor's clock (see the next test)
  CHECK(a40m["energy_mape_pct"].get<double>() <= 8.0);
  const Json a100 = validate_perseus(data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4", o);
  CHECK(a100["plans"].size() == 38);
  CHECK(a100["anchor_plans"] == Json::array({0, 1}));
  CHECK(a100["gpu"] == "a100-pcie");
  CHECK(test::perseus_variant(a100, "measured anchor")["time_mape_pct"].get<double>() <= 2.0);  // the PCIe board's model (SXM: 13.4 %)
  for (const Json* rep : {&a40, &a100}) {
    const Json& fit = test::perseus_variant(*rep, "board fit");
    INFO((*rep)["runs"]);
    CHECK(fit["time_mape_pct"].get<double>() <= 2.0);
    CHECK(fit["time_mape_held_out_pct"].get<double>() <= 2.0);
    CHECK(fit["energy_mape_pct"].get<double>() <= 5.0);
    CHECK(fit["energy_mape_held_out_pct"].get<double>() <= 5.0);
    CHECK(fit["held_out_plans"].get<int>() >= 14);
    // One table step off on every board still meets the energy target; energy moves with the ceiling.
    for (const Json& s : fit["ceiling_sensitivity"]) CHECK(s["energy_mape_pct"].get<double>() <= 5.0);
    // The ceiling alone (the model's time share) is worse on energy than ceiling and share together.
    CHECK(test::perseus_variant(*rep, "cap-clock fit")["energy_mape_pct"].get<double>() > fit["energy_mape_pct"].get<double>());
    // A property of the boards and the workload: the same within one table step on every subset.
    const Json& subsets = (*rep)["board_fit_by_subset"];
    REQUIRE(subsets.size() == 4);
    for (const Json& sub : subsets) {
      INFO(sub["fitted_on"]);
      for (std::size_t r = 0; r < sub["rank_cap_clock_mhz"].size(); ++r)
        CHECK(std::fabs(sub["rank_cap_clock_mhz"][r].get<double>() - fit["rank_cap_clock_mhz"][r].get<double>()) <= 15.0 + 1e-9);
      CHECK(std::fabs(sub["time_sm"].get<double>() - fit["time_sm"].get<double>()) <= 0.05);
    }
  }
}

// Why the model as calibrated over-predicts energy: it puts the anchor (every computation at the
// requested highest clock) at the clock where the GPT-3 175B profile's computations meet the power cap,
// while these runs' times stop falling at higher clocks (their computations draw less); the anchor's
// busy power is referred to g(f) there, so every lowered computation's power comes out too high.
TEST_CASE("Perseus runs: the boards ran above the model's capped clock at \"max\", with less of the time scaling with 1/f", "[critical_path][validation]") {
  PerseusValidationOptions o;
  o.frontier = false;
  const Json a40 = validate_perseus(data_dir() + "/traces/perseus-runs/a40_gpt3-2.7b_pp8", o);
  const Json& m = test::perseus_variant(a40, "measured anchor");
  const Json& fit = test::perseus_variant(a40, "board fit");
  const GpuModel model = load_gpu_model("a40");
  CHECK(m["anchor_sm_mhz"]["forward"].get<double>() < 1500);
  for (const Json& c : fit["rank_cap_clock_mhz"]) {
    CHECK(c.get<double>() > m["anchor_sm_mhz"]["forward"].get<double>() + 50);
    CHECK(c.get<double>() < model.max_sm_mhz());
  }
  CHECK(fit["time_sm"].get<double>() < model.computation("forward")->time_sm - 0.03);
  // Every rank's energy over-predicted by the model; the fit leaves no rank off by more than 8 %.
  for (const Json& r : m["per_rank"]) CHECK(r["energy_error_mean_pct"].get<double>() > 2.0);
  for (const Json& r : fit["per_rank"]) CHECK(std::fabs(r["energy_error_mean_pct"].get<double>()) < 8.0);
  // The waiting ranks' busy power at the anchor (P_blocking for the rest of the iteration) is above
  // the 300 W board limit that caps their computations: the non-busy time at "max" costs more than P_blocking.
  CHECK(m["per_rank"][0]["busy_power_w"].get<double>() > model.power_cap_w());
  CHECK(m["per_rank"][0]["busy_share"].get<double>() < 0.85);
  CHECK(m["per_rank"][7]["busy_share"].get<double>() > 0.95);
}

namespace {

// A synthetic run set: 2 stages x 4 micro-batches, each plan one clock per rank, times generated by the
// stage model's time shape with share `b` and per-rank ceilings.
std::string write_synthetic_runs(double b, const std::vector<double>& ceilings, const std::vector<std::vector<double>>& plan_clocks) {
  const std::string dir = dvfs::testing::scratch_path("dvfs_cp_board_fit");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const int M = 4;
  const double ta[2][2] = {{0.10, 0.30}, {0.12, 0.33}};  // [stage][backward]
  auto shape = [b](double f) { return b * 1740.0 / f + 1 - b; };
  for (std::size_t n = 0; n < plan_clocks.size(); ++n) {
    Json sched = Json::array(), prof = Json::array();
    for (int s = 0; s < 2; ++s) {
      const double f = plan_clocks[n][static_cast<std::size_t>(s)], fe = ceilings[static_cast<std::size_t>(s)];
      const double k = shape(std::min(f, fe)) / shape(fe);
      sched.push_back({{"rank", s}, {"power_states", std::vector<double>(2 * M, f)}});
      Json fw = Json::array(), bw = Json::array(), ld = Json::array(), it = Json::array(), en = Json::array();
      for (int i = 0; i < 3; ++i) {
        fw.push_back(std::vector<double>(M, ta[s][0] * k));
        bw.push_back(std::vector<double>(M, ta[s][1] * k));
        ld.push_back(Json::array());
        const double busy = M * (ta[s][0] + ta[s][1]) * k;
        it.push_back(busy / 0.8);
        en.push_back(250 * busy + 70 * busy / 4);
      }
      prof.push_back({{"rank", s}, {"iter_time", it}, {"iter_energy", en},
                      {"time_breakdown", {{"forward", fw}, {"backward", bw}, {"load", ld}}}});
    }
    std::ofstream(dir + "/" + std::to_string(n) + ".sched.json") << sched.dump();
    std::ofstream(dir + "/" + std::to_string(n) + ".prof.json") << prof.dump();
  }
  return dir;
}

}  // namespace

TEST_CASE("fit_board_response recovers each rank's clock ceiling and the pooled time share from times alone", "[critical_path]") {
  // Plans 0 and 1 at the highest clock (the anchor); each rank has clocks below and above its ceiling.
  const std::vector<std::vector<double>> clocks = {{1740, 1740}, {1740, 1740}, {1200, 1350}, {1455, 1620}, {1005, 1530}, {1650, 1110}};
  const std::string dir = write_synthetic_runs(0.3, {1500, 1560}, clocks);
  const PerseusRunSet rs = find_perseus_runs(dir);
  REQUIRE(rs.plans.size() == 6);
  const GpuModel m = load_gpu_model("a40");
  const PerseusPrediction base = build_perseus_prediction(rs, m, 70.4, 0);
  REQUIRE(base.anchor_plans == std::vector<int>({0, 1}));
  const BoardResponse r = fit_board_response(rs, {2, 3, 4, 5}, base, m, true, true);
  CHECK(r.rank_cap_clock_mhz == std::vector<double>({1500, 1560}));
  CHECK(r.time_sm == Approx(0.3).margin(1e-9));
  CHECK(r.rms_pct < 1e-6);
  CHECK(r.bins == 16);  // 2 ranks x 2 passes x 4 clocks
  CHECK(r.cap_clock_mhz == 1560);  // the busiest rank's (stage 1: the longer computations set the iteration)
  // One ceiling for both ranks cannot fit both exactly; without the share the model's 0.408 stays.
  const BoardResponse pooled = fit_board_response(rs, {2, 3, 4, 5}, base, m, true, false);
  CHECK(pooled.rank_cap_clock_mhz.empty());
  CHECK(pooled.rms_pct > 0.01);
  const BoardResponse ceiling_only = fit_board_response(rs, {2, 3, 4, 5}, base, m, false, false);
  CHECK(ceiling_only.time_sm < 0);
  // The fitted response reproduces the generated times in the prediction's curves.
  const PerseusPrediction p = build_perseus_prediction(rs, m, 70.4, r.cap_clock_mhz, 0, r.time_sm, r.rank_cap_clock_mhz);
  CHECK(p.rank_cap_clock_mhz == r.rank_cap_clock_mhz);
  const ComputationCurve& c = p.curves[static_cast<std::size_t>(p.dag.nodes()[static_cast<std::size_t>(p.node_of[1][0])].curve)];
  const double at_max = c.options[static_cast<std::size_t>(c.option_at_sm_mhz(1740))].time_s;
  const double at_1110 = c.options[static_cast<std::size_t>(c.option_at_sm_mhz(1110))].time_s;
  const double at_1620 = c.options[static_cast<std::size_t>(c.option_at_sm_mhz(1620))].time_s;
  CHECK(at_1110 / at_max == Approx((0.3 * 1740 / 1110 + 0.7) / (0.3 * 1740 / 1560 + 0.7)).epsilon(1e-12));
  CHECK(at_1620 == Approx(at_max).epsilon(1e-12));  // above the ceiling: no faster
  CHECK_THROWS_AS(build_perseus_prediction(rs, m, 70.4, 0, 0, -1, {1500}), InputError);  // one ceiling per rank
  std::filesystem::remove_all(dir);
}

TEST_CASE("through the same model, our frontier's plans use no more energy than Perseus's plans at equal iteration time", "[critical_path][validation]") {
  const Json rep = validate_perseus(data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4", PerseusValidationOptions{});
  for (const Json& v : rep["variants"]) {
    INFO(v["name"]);
    if (v["name"] == "cap-clock fit" || v["name"] == "measured anchor") {
      CHECK_FALSE(v.contains("frontier"));  // frontiers: models only and the board fit
      continue;
    }
    const Json& f = v["frontier"];
    CHECK(f["vs_perseus"].size() == (v["name"] == "models only" ? 38u : 36u));  // models only: no plan is an anchor
    for (const Json& c : f["vs_perseus"]) {
      CHECK(c["ours_iteration_s"].get<double>() <= c["perseus_iteration_s"].get<double>() * (1 + 1e-9));
      CHECK(c["energy_diff_pct"].get<double>() <= 0.5);
    }
    // No slowdown: the fastest iteration time, less energy than every instruction at the top clock.
    CHECK(f["no_slowdown"]["iteration_s"].get<double>() <= f["all_max"]["iteration_s"].get<double>() * (1 + 1e-9));
    CHECK(f["no_slowdown"]["energy_saved_pct"].get<double>() > 5);
  }
}

TEST_CASE("validate --perseus fails with one line for a directory without plans or an unknown GPU", "[critical_path]") {
  CHECK_THROWS_WITH(validate_perseus(data_dir() + "/traces/profiles/perseus", PerseusValidationOptions{}),
                    Catch::Contains("expected plans N.sched.json"));
  PerseusValidationOptions o;
  o.gpu = "no-such-gpu";
  CHECK_THROWS_AS(validate_perseus(data_dir() + "/traces/perseus-runs/a40_gpt3-2.7b_pp8", o), InputError);
}

TEST_CASE("a run set the workloads file does not describe says why it gets no models-only prediction, and which plans "
          "had no measurement", "[critical_path][errors]") {
  namespace fs = std::filesystem;
  const dvfs::testing::ScratchDir scratch("dvfs-perseus");
  const std::string src = data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4", dir = scratch / "my-runs";
  fs::create_directory(dir);
  for (const char* f : {"0.sched.json.gz", "0.prof.json.gz", "1.sched.json.gz", "1.prof.json.gz", "2.sched.json.gz", "3.sched.json.gz",
                        "3.prof.json.gz", "4.prof.json.gz"})
    fs::copy_file(src + "/" + f, dir + "/" + f);
  PerseusValidationOptions o;
  o.gpu = "a100-pcie";
  o.frontier = false;
  const Json r = validate_perseus(dir, o);
  CHECK(r["plans"] == Json::array({0, 1, 3}));
  CHECK(r["plans_without_measurement"] == Json::array({2}));
  CHECK(r["measurements_without_plan"] == Json::array({4}));  // was skipped without a word
  CHECK_THAT(format_perseus_report(r), Catch::Contains("measurements N.prof.json with no N.sched.json beside them, not compared: [4]"));
  CHECK_THAT(r["models_only_skipped"].get<std::string>(), Catch::Contains("no run_sets.\"my-runs\"") && Catch::Contains("--workloads"));
  CHECK(r["variants"].front()["name"] == "measured anchor");
  // without an all-max plan either, nothing can be predicted: one line naming both ways out
  fs::remove(dir + "/0.prof.json.gz");
  fs::remove(dir + "/1.prof.json.gz");
  CHECK_THROWS_WITH(validate_perseus(dir, o), Catch::Contains("the anchor of a measured-anchor prediction; or no run_sets.\"my-runs\""));
}

TEST_CASE("our plans written in Perseus's N.sched.json format read back to the same iteration time and energy", "[critical_path]") {
  const PerseusRunSet rs = find_perseus_runs(data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4");
  const GpuModel m = load_gpu_model("a100-sxm4");
  const PerseusPrediction p = build_perseus_prediction(rs, m, m.idle_w(), 1185, 855);
  FrontierOptions fo;
  fo.p_blocking_w = p.p_blocking_w;
  const Frontier f = solve_frontier(p.dag, p.curves, fo);
  const IterationPlan ours = plan_for_time(p.dag, p.curves, f, 1.02 * fastest_plan(p.dag, p.curves, p.p_blocking_w).time_s);
  const std::string path = dvfs::testing::scratch_path("dvfs_cp_ours.sched.json");
  write_clock_plan(path, perseus_plan_file(p, ours));
  const ClockPlanFile back = read_clock_plan(path);
  CHECK(back.ranks[1].power_states_mhz.size() == 520);  // Merak's instruction list, as Perseus's runtime reads it
  const IterationPlan again = evaluate_plan(p.dag, p.curves, perseus_plan_options(p, back, m), p.p_blocking_w);
  CHECK(again.time_s == Approx(ours.time_s).epsilon(1e-12));
  CHECK(again.energy_j == Approx(ours.energy_j).epsilon(1e-12));
  std::remove(path.c_str());
}

TEST_CASE("a Perseus run with a time beyond a day, a plan number beyond an int or a clock the board lacks is one error naming file and field", "[critical_path][errors]") {
  namespace fs = std::filesystem;
  const dvfs::testing::ScratchDir scratch("dvfs-perseus-bad");
  const std::string src = data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4", dir = scratch / "runs";
  fs::create_directory(dir);
  for (const char* f : {"0.sched.json.gz", "0.prof.json.gz", "1.sched.json.gz"}) fs::copy_file(src + "/" + f, dir + "/" + f);
  // plan 1 measured with one micro-batch's forward at 1e300 s: fit_board_response crashed (segmentation fault)
  Json prof = Json::parse(read_maybe_gzip(src + "/1.prof.json.gz"));
  prof[2]["time_breakdown"]["forward"][1][0] = 1e300;
  std::ofstream(dir + "/1.prof.json") << prof.dump();
  PerseusValidationOptions o;
  o.gpu = "a100-pcie";
  o.frontier = false;
  CHECK_THROWS_WITH(validate_perseus(dir, o), Catch::Contains("1.prof.json: [2].time_breakdown.forward: expected numbers from 0 to 86400 s"));
  prof[2]["time_breakdown"]["forward"][1][0] = 0.01;
  prof[0]["iter_energy"][1] = 1e300;
  std::ofstream(dir + "/1.prof.json") << prof.dump();
  CHECK_THROWS_WITH(validate_perseus(dir, o), Catch::Contains("1.prof.json: [0].iter_energy: expected numbers from 0 to"));
  fs::remove(dir + "/1.prof.json");
  // a plan number of 23 digits: "internal error: stoi"
  fs::copy_file(src + "/1.sched.json.gz", dir + "/12345678901234567890123.sched.json.gz");
  CHECK_THROWS_WITH(validate_perseus(dir, o), Catch::Contains("12345678901234567890123.sched.json.gz: expected a plan number N of at most 9 digits"));
  fs::remove(dir + "/12345678901234567890123.sched.json.gz");
  // Stage 0's first instruction is a data load, not a computation: its clock was dropped unread, 5000 MHz passed.
  fs::copy_file(src + "/1.prof.json.gz", dir + "/1.prof.json.gz");
  Json sched = Json::parse(read_maybe_gzip(src + "/1.sched.json.gz"));
  sched[0]["power_states"][0] = 5000;
  fs::remove(dir + "/1.sched.json.gz");
  std::ofstream(dir + "/1.sched.json") << sched.dump();
  CHECK_THROWS_WITH(validate_perseus(dir, o), Catch::Contains("1.sched.json: [0].power_states: entry 0: clock 5000") &&
                                                  Catch::Contains("is not an SM clock of a100-pcie"));
}
