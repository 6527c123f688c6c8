// Issue 22: `validate --perseus` predicts a run set from the models alone (no fit on it), prints that first,
// and keeps the run sets models/calibration/perseus-split.json holds out out of every fit.
#include "models/src/model_registry.hpp"
#include "models/src/stage_model.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/critical_path/perseus_validation.hpp"
#include "traces/src/gzip_file.hpp"
#include "perseus_variant.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

using namespace dvfs;
namespace fs = std::filesystem;
using Catch::Detail::Approx;

namespace {

const std::string kA100 = "a100_gpt3-xl_pp4";

// A copy of plans `plans` of a shipped run set under root/<name>/, every measured number (times, energies)
// multiplied by `scale`: what the measurement says changes, the plan definitions do not.
std::string copy_run_set(const std::string& root, const std::string& name, const std::vector<int>& plans, double scale) {
  const std::string src = data_dir() + "/traces/perseus-runs/" + name, dst = root + "/" + name;
  fs::remove_all(root);
  fs::create_directories(dst);
  for (int n : plans) {
    fs::copy_file(src + "/" + std::to_string(n) + ".sched.json.gz", dst + "/" + std::to_string(n) + ".sched.json.gz");
    Json prof = read_json_maybe_gzip(src + "/" + std::to_string(n) + ".prof.json.gz");
    for (Json& rank : prof) {
      for (const char* k : {"iter_time", "iter_energy"})
        for (Json& x : rank[k]) x = x.get<double>() * scale;
      for (auto& kv : rank["time_breakdown"].items())
        for (Json& it : kv.value())
          for (Json& x : it) x = x.get<double>() * scale;
    }
    std::ofstream(dst + "/" + std::to_string(n) + ".prof.json") << prof.dump();
  }
  return dst;
}


}  // namespace

TEST_CASE("models-only mode reads nothing from a run set's plans but their clocks", "[critical_path][perseus]") {
  PerseusValidationOptions o;
  o.frontier = false;
  o.fits = false;
  const Json a = validate_perseus(copy_run_set("/tmp/dvfs_mo_a", kA100, {2, 9, 30}, 1.0), o);
  const Json b = validate_perseus(copy_run_set("/tmp/dvfs_mo_b", kA100, {2, 9, 30}, 1.7), o);
  REQUIRE(a["variants"].size() == 1);  // --no-fits: the models-only prediction alone
  const Json &ra = test::perseus_variant(a, "models only")["rows"], &rb = test::perseus_variant(b, "models only")["rows"];
  REQUIRE(ra.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(ra[i]["predicted_iteration_s"].get<double>() == rb[i]["predicted_iteration_s"].get<double>());
    CHECK(ra[i]["predicted_energy_j"].get<double>() == rb[i]["predicted_energy_j"].get<double>());
    CHECK(rb[i]["measured_iteration_s"].get<double>() == Approx(1.7 * ra[i]["measured_iteration_s"].get<double>()));
    // The composition: predicted per rank from the models alone, measured busy time read from the run set.
    for (std::size_t s = 0; s < ra[i]["rank_busy_s"].size(); ++s) {
      CHECK(ra[i]["rank_busy_s"][s].get<double>() == rb[i]["rank_busy_s"][s].get<double>());
      CHECK(ra[i]["rank_compute_energy_j"][s].get<double>() == rb[i]["rank_compute_energy_j"][s].get<double>());
      CHECK(rb[i]["measured_rank_busy_s"][s].get<double>() == Approx(1.7 * ra[i]["measured_rank_busy_s"][s].get<double>()));
    }
  }
  CHECK(test::perseus_variant(a, "models only")["fitted_on_plans"].empty());
  fs::remove_all("/tmp/dvfs_mo_a");
  fs::remove_all("/tmp/dvfs_mo_b");
}

TEST_CASE("validate --perseus prints the models-only prediction first and labels every fitted variant with its plans", "[critical_path][perseus]") {
  PerseusValidationOptions o;
  o.frontier = false;
  const Json rep = validate_perseus(data_dir() + "/traces/perseus-runs/" + kA100, o);
  REQUIRE(rep["variants"].size() >= 2);
  CHECK(rep["variants"][0]["name"] == "models only");
  CHECK(rep["gpu"] == "a100-pcie");  // the boards the A100 run set ran on
  CHECK(rep["split_role"] == "held_out");
  for (std::size_t i = 1; i < rep["variants"].size(); ++i) {
    const std::string how = rep["variants"][i]["how"].get<std::string>();
    INFO(how);
    CHECK(how.rfind("fitted on this run set", 0) == 0);
  }
  CHECK(test::perseus_variant(rep, "board fit")["fitted_on_plans"].size() == 18);  // the even-numbered non-anchor plans
  const std::string text = format_perseus_report(rep);
  CHECK(text.find("== models only") < text.find("== measured anchor"));
}

// The figures the README and docs/validation.md quote (issue 22's targets: 3 % / 6 % models only).
TEST_CASE("models only: the held-out A100 run set within 3 % time and 6 % energy; the 3D A40 set from a models-made anchor", "[critical_path][perseus][validation]") {
  PerseusValidationOptions o;
  o.frontier = false;
  o.fits = false;
  const Json a100 = validate_perseus(data_dir() + "/traces/perseus-runs/" + kA100, o);
  const Json& m = test::perseus_variant(a100, "models only");
  CHECK(m["plans"].get<int>() == 38);
  CHECK(m["time_mape_pct"].get<double>() <= 3.0);
  CHECK(m["energy_mape_pct"].get<double>() <= 6.0);
  // The 3D set has no all-max plan: the anchor comes from the workload, 16 ranks fold to 4 stages of 4 GPUs.
  const Json d3 = validate_perseus(data_dir() + "/traces/perseus-runs/a40_gpt3-6.7b_dp2pp4tp2", o);
  CHECK(d3["stages"] == 4);
  CHECK(d3["gpus_per_stage"] == 4);
  CHECK(d3.contains("fits_skipped"));
  const Json& m3 = test::perseus_variant(d3, "models only");
  CHECK(m3["plans"].get<int>() == 25);
  CHECK(m3["time_mape_pct"].get<double>() <= 3.0);
  CHECK(m3["energy_mape_pct"].get<double>() <= 6.0);
  // A40 GPT-3 2.7B: time met; energy missed (the a40 model puts the anchor at ~1478 MHz, the boards ran ~1575).
  const Json a40 = validate_perseus(data_dir() + "/traces/perseus-runs/a40_gpt3-2.7b_pp8", o);
  CHECK(test::perseus_variant(a40, "models only")["time_mape_pct"].get<double>() <= 3.0);
  CHECK(test::perseus_variant(a40, "models only")["energy_mape_pct"].get<double>() <= 9.0);
}

TEST_CASE("a100-pcie loads and sustains ~1185 MHz under its 300 W limit when 1410 MHz is asked for", "[models][perseus]") {
  const GpuModel pcie = load_gpu_model("a100-pcie"), sxm = load_gpu_model("a100-sxm4");
  CHECK(pcie.power_cap_w() == 300.0);
  CHECK(pcie.max_sm_mhz() == 1410.0);
  CHECK(pcie.max_mem_mhz() == 1512.0);
  const Json& cal = pcie.provenance()["calibration"];
  const double table_clock = cal["sustained_sm_mhz_at_cap"].get<double>();  // on the 15 MHz table
  for (const char* pass : {"forward", "backward"}) {
    const ClassCoefficients& cc = *pcie.computation(pass);
    const double f = capped_sm_mhz(pcie, cc, 1410, pcie.max_mem_mhz());
    INFO(pass);
    CHECK(f >= 1150);
    CHECK(f <= 1250);
    CHECK(f >= table_clock);
    CHECK(f < table_clock + 30.0);
    CHECK(f == Approx(cal["capped_sm_mhz_per_computation"][pass].get<double>()).margin(0.1));
    CHECK(pcie.coefficient_power_at(cc, f, pcie.max_mem_mhz()) <= 300.0 * pcie.governor().target_fraction + 1e-6);
    // Same chip: below the cap the two boards run a computation at the same clock in the same time.
    CHECK(pcie.time_shape(cc, 1000, pcie.max_mem_mhz()) == Approx(sxm.time_shape(*sxm.computation(pass), 1000, sxm.max_mem_mhz())));
  }
  // The SXM model under its 500 W cap barely caps the same computations (a100-sxm4 describes another board).
  CHECK(capped_sm_mhz(sxm, *sxm.computation("forward"), 1410, sxm.max_mem_mhz()) > 1350);
}

TEST_CASE("perseus-split.json: every shipped run set listed once; nothing held out is fitted", "[models][perseus]") {
  const Json split = read_json_file(data_dir() + "/models/calibration/perseus-split.json");
  std::set<std::string> held, dev, shipped;
  for (const Json& n : split["held_out"]) held.insert(n.get<std::string>());
  for (const Json& n : split["development"]) dev.insert(n.get<std::string>());
  REQUIRE_FALSE(held.empty());
  for (const auto& e : fs::directory_iterator(data_dir() + "/traces/perseus-runs"))
    if (e.is_directory()) shipped.insert(e.path().filename().string());
  for (const std::string& s : shipped) {
    INFO(s);
    CHECK(held.count(s) + dev.count(s) == 1);
  }
  // a100-pcie: the workloads of held-out run sets are printed, never fitted; the model's P0 is the fitted median.
  const GpuModel pcie = load_gpu_model("a100-pcie");
  const Json& cal = pcie.provenance()["calibration"];
  std::vector<double> fitted;
  for (const auto& kv : cal["per_workload"].items()) {
    bool held_workload = false;
    for (const std::string& h : held) held_workload = held_workload || h.find("_" + kv.key() + "_") != std::string::npos;
    INFO(kv.key());
    CHECK(kv.value()["fitted"].get<bool>() == !held_workload);
    if (!held_workload) fitted.push_back(kv.value()["p0_w"].get<double>());
  }
  REQUIRE(fitted.size() == 4);
  std::sort(fitted.begin(), fitted.end());
  CHECK(cal["p0_w"].get<double>() == Approx(0.5 * (fitted[1] + fitted[2])));
  // The workload model's fitted constants name only development run sets.
  const Json wl = read_json_file(data_dir() + "/traces/perseus-baselines/workloads.json");
  for (const auto& kv : wl["pipeline_model"]["provenance"].items()) {
    const std::string ref = kv.value().get<std::string>();
    for (const std::string& h : held) CHECK(ref.find(h) == std::string::npos);
  }
}

TEST_CASE("a 3D run set folds to its pipeline stages: a stage's energy is its GPUs' sum, its clocks its first rank's", "[critical_path][perseus]") {
  PerseusRunSet rs = find_perseus_runs(data_dir() + "/traces/perseus-runs/a40_gpt3-6.7b_dp2pp4tp2");
  const PerseusMeasurement raw = load_perseus_measurement(rs.prof_file(3));
  rs.stages = 4;
  const PerseusMeasurement& m = rs.measurement(3);
  CHECK(raw.stages == 16);
  CHECK(m.stages == 4);
  CHECK(m.gpus_per_stage == 4);
  double e_raw = 0, e = 0;
  for (const auto& r : raw.energy_j) e_raw += r[2];
  for (const auto& r : m.energy_j) e += r[2];
  CHECK(e == Approx(e_raw));
  CHECK(m.energy_j[3][2] == Approx(raw.energy_j[3][2] + raw.energy_j[7][2] + raw.energy_j[11][2] + raw.energy_j[15][2]));
  CHECK(rs.schedule(3).ranks.size() == 4);
  CHECK_THROWS_AS(fold_to_stages(raw, 5), InputError);
}

// The A40 GPT-3 2.7B miss decomposed (docs/validation.md, issue 22, s9_22): per rank and plan, the energy error is
// P_blocking x (predicted - measured waiting) + busy power x (predicted - measured busy time) + the busy power's own
// error over the measured busy time. The waiting is priced right on 8 stages as on 4; the busy power carries the miss.
TEST_CASE("models only: a plan's energy is its ranks' computations plus P_blocking over their waiting; the 2.7B's miss is busy power", "[critical_path][perseus][validation]") {
  PerseusValidationOptions o;
  o.frontier = false;
  o.fits = false;
  const Json rep = validate_perseus(data_dir() + "/traces/perseus-runs/a40_gpt3-2.7b_pp8", o);
  const Json& v = test::perseus_variant(rep, "models only");
  const double pb = rep["p_blocking_w"].get<double>(), g = rep["gpus_per_stage"].get<double>();
  double blocking = 0, busy_time = 0, busy_power = 0, wait_pred = 0, wait_meas = 0;
  int n = 0;
  for (const Json& row : v["rows"]) {
    const double tp = row["predicted_iteration_s"].get<double>(), tm = row["measured_iteration_s"].get<double>();
    double sum = 0, terms[3] = {0, 0, 0};
    for (std::size_t s = 0; s < row["rank_busy_s"].size(); ++s) {
      const double c = row["rank_compute_energy_j"][s].get<double>(), b = row["rank_blocking_energy_j"][s].get<double>();
      const double bp = row["rank_busy_s"][s].get<double>(), bm = row["measured_rank_busy_s"][s].get<double>();
      CHECK(b == Approx(pb * (tp - bp)));
      sum += g * (c + b);
      const double pred = g * (c + b), meas = pred / (1 + row["rank_energy_error_pct"][s].get<double>() / 100);
      const double p_meas = (meas / g - pb * (tm - bm)) / bm;  // the rank's measured busy power
      terms[0] += pb * ((tp - bp) - (tm - bm));
      terms[1] += (c / bp) * (bp - bm);
      terms[2] += (c / bp - p_meas) * bm;
      if (!row["anchor"].get<bool>() && row["plan"].get<int>() > 1) wait_pred += tp - bp, wait_meas += tm - bm;
    }
    CHECK(sum == Approx(row["predicted_energy_j"].get<double>()).epsilon(1e-9));
    if (row["plan"].get<int>() <= 1) continue;  // the all-max plans: the anchor's condition
    const double me = row["measured_energy_j"].get<double>();
    CHECK(100 * g * (terms[0] + terms[1] + terms[2]) / me == Approx(row["energy_error_pct"].get<double>()).margin(1e-6));
    blocking += 100 * g * terms[0] / me, busy_time += 100 * g * terms[1] / me, busy_power += 100 * g * terms[2] / me, ++n;
  }
  REQUIRE(n == 29);
  CHECK(std::fabs(blocking / n) < 0.5);   // -0.20 points
  CHECK(std::fabs(busy_time / n) < 1.0);  // +0.54
  CHECK(busy_power / n > 6.0);            // +7.79 of the mean +8.14 %
  CHECK(wait_pred / wait_meas == Approx(1.0).margin(0.06));  // 21.7 s vs 22.6 s per GPU and plan
}
