#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/critical_path/perseus_validation.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {
const Json& variant(const Json& rep, const std::string& name) {
  for (const Json& v : rep["variants"])
    if (v["name"] == name) return v;
  FAIL("no variant " << name);
  return rep;
}
}  // namespace

// The figures of the README's Validation table (energy: the 5 % target is missed, see there; these
// bounds pin down what the model does today so that a change shows).
TEST_CASE("Perseus measured runs: every plan's iteration time within 2 %, energy within 8 % (target 5 %, missed)", "[critical_path][validation]") {
  PerseusValidationOptions o;
  o.frontier = false;
  const Json a40 = validate_perseus(data_dir() + "/traces/perseus-runs/a40_gpt3-2.7b_pp8", o);
  CHECK(a40["plans"].size() == 31);
  const Json& a40m = variant(a40, "model");  // the A40 model as calibrated: no fit on these runs
  CHECK(a40m["rows"].size() == 31);
  CHECK(a40m["time_mape_pct"].get<double>() <= 2.0);
  CHECK(a40m["energy_mape_pct"].get<double>() <= 8.0);
  const Json a100 = validate_perseus(data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4", o);
  CHECK(a100["plans"].size() == 38);
  CHECK(a100["anchor_plans"] == Json::array({0, 1}));
  // A100 PCIe boards with the SXM model: only once the board's clock ceiling is known (fitted on the
  // even plans) does the time come within the target, on the held-out odd plans too.
  const Json& fit = variant(a100, "cap-clock fit");
  CHECK(fit["time_mape_pct"].get<double>() <= 2.0);
  CHECK(fit["time_mape_held_out_pct"].get<double>() <= 2.0);
  CHECK(fit["energy_mape_pct"].get<double>() <= 8.0);
  CHECK(fit["cap_clock_mhz"].get<double>() < 1410);
}

TEST_CASE("through the same model, our frontier's plans use no more energy than Perseus's plans at equal iteration time", "[critical_path][validation]") {
  const Json rep = validate_perseus(data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4", PerseusValidationOptions{});
  for (const Json& v : rep["variants"]) {
    INFO(v["name"]);
    const Json& f = v["frontier"];
    CHECK(f["vs_perseus"].size() == 36);
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

TEST_CASE("our plans written in Perseus's N.sched.json format read back to the same iteration time and energy", "[critical_path]") {
  const PerseusRunSet rs = find_perseus_runs(data_dir() + "/traces/perseus-runs/a100_gpt3-xl_pp4");
  const GpuModel m = load_gpu_model("a100-sxm4");
  const PerseusPrediction p = build_perseus_prediction(rs, m, m.idle_w(), 1185, 855);
  FrontierOptions fo;
  fo.p_blocking_w = p.p_blocking_w;
  const Frontier f = solve_frontier(p.dag, p.curves, fo);
  const IterationPlan ours = plan_for_time(p.dag, p.curves, f, 1.02 * fastest_plan(p.dag, p.curves, p.p_blocking_w).time_s);
  const std::string path = "/tmp/dvfs_cp_ours.sched.json";
  write_clock_plan(path, perseus_plan_file(p, ours));
  const ClockPlanFile back = read_clock_plan(path);
  CHECK(back.ranks[1].power_states_mhz.size() == 520);  // Merak's instruction list, as Perseus's runtime reads it
  const IterationPlan again = evaluate_plan(p.dag, p.curves, perseus_plan_options(p, back, m), p.p_blocking_w);
  CHECK(again.time_s == Approx(ours.time_s).epsilon(1e-12));
  CHECK(again.energy_j == Approx(ours.energy_j).epsilon(1e-12));
  std::remove(path.c_str());
}
