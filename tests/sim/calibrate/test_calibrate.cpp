#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/calibrate/calibration_date.hpp"
#include "sim/calibrate/profile_fit.hpp"
#include "sim/calibrate/recording_fit.hpp"
#include "sim/calibrate/stream_contention_fit.hpp"
#include "sim/core/errors.hpp"
#include "sim/validate/profile_check.hpp"
#include "sim/validate/validate.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <unistd.h>
#include <fstream>
#include <sstream>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

// A stage profile drawn from known parameters: voltage floor 0.80 up to a 1095 MHz knee, static
// 50 W, SM-dependent 420 W (forward) / 440 W (backward) at the top clock, 80 % of the time SM-bound.
std::string synthetic_profile(double a = 50) {
  const double fmax = 1410, v0 = 0.80, knee = 1095, b_share = 0.8;
  auto g = [&](double f) {
    const double v = f <= knee ? v0 : v0 + (1 - v0) * (f - knee) / (fmax - knee);
    return v * v * f / fmax;
  };
  std::ostringstream os;
  os << "stage,instruction,frequency,time,energy\n";
  for (int stage = 0; stage < 2; ++stage)
    for (double f = fmax; f >= 855; f -= 15)
      for (const auto& [instr, b, t0] : {std::make_tuple("forward", 420.0, 0.05), std::make_tuple("backward", 440.0, 0.1)}) {
        const double t = t0 * (1 + 0.1 * stage) * (b_share * fmax / f + 1 - b_share);
        os << stage << "," << instr << "," << f << "," << t << "," << t * (a + b * g(f)) << "\n";
      }
  const std::string path = dvfs::testing::scratch_path("dvfs_synthetic_profile_" + std::to_string(static_cast<int>(a)) + ".csv");
  std::ofstream(path) << os.str();
  return path;
}

}  // namespace

TEST_CASE("calibrate --profile recovers the parameters a synthetic profile was drawn from", "[calibrate]") {
  const ProfileCalibration c = calibrate_from_profile(
      synthetic_profile(), data_dir() + "/models/calibration/a100-sxm4.base.json", "test", "2026-01-01");
  const Json& m = c.model;
  CHECK(m["status"] == "calibrated");
  CHECK(m["voltage_curve"]["points"][0][0].get<double>() == 1095);
  CHECK(m["voltage_curve"]["points"][0][1].get<double>() == Approx(0.80));
  CHECK(m["computations"]["forward"]["time_sm"].get<double>() == Approx(0.8).margin(0.002));
  CHECK(m["computations"]["backward"]["time_sm"].get<double>() == Approx(0.8).margin(0.002));
  // static power 50 W = idle 83.6 W * (1 - a)
  CHECK(83.6 * (1 - m["power"]["idle_sm_fraction"].get<double>()) == Approx(50).margin(0.1));
  CHECK(c.fit_error.time_mape < 0.001);
  CHECK(c.fit_error.energy_mape < 0.001);
  CHECK(m["provenance"]["calibration"]["date"] == "2026-01-01");
  CHECK(m["provenance"]["/computations"]["source"] == "fit");
  // The written model reproduces the fit through the same code validate --models uses.
  const GpuModel gm = GpuModel::from_json(m, "synthetic");
  CHECK(check_profile(gm, load_stage_profile(synthetic_profile())).time_mape == Approx(c.fit_error.time_mape));
}

TEST_CASE("static power above the base's idle power becomes a clock-independent share of each computation",
          "[calibrate]") {
  // 120 W of static power against an idle power of 83.6 W: no idle share can move with the clock.
  const std::string prof = synthetic_profile(120);
  const ProfileCalibration c =
      calibrate_from_profile(prof, data_dir() + "/models/calibration/a100-sxm4.base.json", "test", "2026-01-01");
  CHECK(c.model["power"]["idle_sm_fraction"].get<double>() == 0.0);
  for (const char* k : {"forward", "backward"}) {
    const Json& cc = c.model["computations"][k];
    // D (1 - s) = A - idle at the top memory clock
    CHECK(cc["dynamic_w"].get<double>() * (1 - cc["sm_share"].get<double>()) == Approx(120 - 83.6).margin(0.5));
  }
  CHECK(c.fit_error.energy_mape < 0.001);
  CHECK(c.model["provenance"]["/power/idle_sm_fraction"]["ref"].get<std::string>().find("exceeds idle_w") != std::string::npos);
}

TEST_CASE("calibrate --profile refuses a profile whose power falls with the clock, naming the profile", "[calibrate]") {
  std::ostringstream os;
  os << "stage,instruction,frequency,time,energy\n";
  for (double f = 1410; f >= 855; f -= 15) os << "0,forward," << f << ",0.05," << 0.05 * (700 - 0.3 * f) << "\n";
  const std::string path = dvfs::testing::scratch_path("dvfs_falling.csv");
  std::ofstream(path) << os.str();
  try {
    calibrate_from_profile(path, data_dir() + "/models/calibration/a100-sxm4.base.json", "test", "2026-01-01");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).rfind(path + ": energy: no physically meaningful power fit", 0) == 0);
  }
}

TEST_CASE("the shipped A100 and A40 models meet the held-out targets on the BLOOM profiles", "[calibrate][validation]") {
  for (const auto& [gpu, tag] : {std::make_pair("a100-sxm4", "a100_sxm"), std::make_pair("a40", "a40")}) {
    INFO(gpu);
    const GpuModel m = load_gpu_model(gpu);
    CHECK(m.provenance()["calibration"]["data"] == std::string("gpt3-175b+") + tag + "_bf16.csv");
    const ProfileError e =
        check_profile(m, load_stage_profile(data_dir() + "/traces/profiles/perseus/bloom+" + tag + "_bf16.csv"));
    CHECK(e.points == (std::string(tag) == "a40" ? 4 * 59 : 4 * 37));  // 4 distinct series: stages 0-6 are copies
    CHECK(e.time_mape <= 0.03);
    CHECK(e.energy_mape <= 0.05);
  }
}

TEST_CASE("a model without the profile's computation is an error naming the field", "[calibrate]") {
  const GpuModel h = load_gpu_model("h200");
  try {
    check_profile(h, load_stage_profile(data_dir() + "/traces/profiles/perseus/bloom+a40_bf16.csv"));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("computations.forward: model h200 has no computation \"forward\"") != std::string::npos);
  }
}

TEST_CASE("calibrate --profile rejects clocks the base model does not support", "[calibrate]") {
  try {
    calibrate_from_profile(data_dir() + "/traces/profiles/perseus/gpt3-175b+a40_bf16.csv",
                           data_dir() + "/models/calibration/a100-sxm4.base.json", "test", "2026-01-01");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("frequency: profile clocks 855-1740 MHz lie outside") != std::string::npos);
  }
}

TEST_CASE("calibrate --recording fits class time shares from natural clock changes and meets the counter energy",
          "[calibrate]") {
  const std::string rec = data_dir() + "/traces/recordings/h200-gpt3xl";
  const RecordingCalibration c = calibrate_from_recording(rec, data_dir() + "/models/calibration/h200.base.json", "test", "2026-01-01");
  const Json& gemm = c.report["classes"]["gemm"];
  CHECK(gemm["used"] == true);
  CHECK(gemm["kernels"].get<std::size_t>() >= 1000);
  CHECK(gemm["standard_error"].get<double>() < 0.15);
  CHECK(c.model["classes"]["gemm"]["time_sm"].get<double>() == Approx(gemm["time_sm_fit"].get<double>()).margin(0.0005));
  CHECK(c.report["classes"]["communication"]["used"] == false);  // no collective in a one-GPU trace
  CHECK(c.model["provenance"]["/classes/gemm/time_sm"]["source"] == "fit");
  // The recorded-clock replay of the written model meets the measured energy (that is the fit).
  const Json v = validate_recording(load_validation_recording(rec), GpuModel::from_json(c.model, "fit"));
  CHECK(std::fabs(v["clock_sources"][1]["total"]["energy_error_pct"].get<double>()) < 0.2);
}

TEST_CASE("calibrate --stream-pairs refuses an empty fit list and a pair listed twice, naming the split file", "[calibrate][stream-pairs][split]") {
  // Both were fit: an empty list wrote a model whose provenance said it was fit on the pairs; a repeated pair weighed twice.
  const std::string pairs = data_dir() + "/traces/recordings/h200-stream-pairs";
  Json split = read_json_file(data_dir() + "/models/calibration/stream-pairs-split.json");
  const auto refused = [&](const Json& doc, const std::string& name) {
    const std::string path = dvfs::testing::scratch_path(name);
    std::ofstream(path) << doc.dump();
    try {
      calibrate_stream_contention(pairs, path, "h200", "test", "2026-12-01");
    } catch (const InputError& e) {
      std::remove(path.c_str());
      return std::string(e.what());
    }
    std::remove(path.c_str());
    return std::string("accepted");
  };
  Json empty = split;
  empty["fit"] = Json::array();
  CHECK_THAT(refused(empty, "dvfs_pairs_empty.json"), Catch::Contains("dvfs_pairs_empty.json: fit: expected at least one pair to fit"));
  Json twice = split;
  twice["fit"].push_back(split["fit"][0]);
  CHECK_THAT(refused(twice, "dvfs_pairs_twice.json"),
             Catch::Contains("dvfs_pairs_twice.json: fit: \"gemm4096+add\" is listed twice (elements 0 and 4): expected each pair once"));
  Json held_twice = split;
  held_twice["held_out"].push_back(split["held_out"][1]);
  CHECK_THAT(refused(held_twice, "dvfs_pairs_held_twice.json"), Catch::Contains("held_out: \"gemm8192+layernorm\" is listed twice"));
}

TEST_CASE("calibrate --profile blames the profile row whose power no cap target can fit, not the base model", "[calibrate][profile-rows]") {
  // The A100 profile with the 1395 MHz rows' times halved: ~955 W on a 500 W cap. The message named
  // a100-sxm4.base.json native_governor.target_fraction (a valid 0.98 there).
  std::ifstream in(data_dir() + "/traces/profiles/perseus/gpt3-175b+a100_sxm_bf16.csv");
  std::ostringstream out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(",1395,") != std::string::npos) {
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
      cells[3] = std::to_string(std::stod(cells[3]) / 2);  // stage,instruction,frequency,time,energy
      line = cells[0] + "," + cells[1] + "," + cells[2] + "," + cells[3] + "," + cells[4];
    }
    out << line << "\n";
  }
  const std::string path = dvfs::testing::scratch_path("dvfs_a100_halved_1395.csv");
  std::ofstream(path) << out.str();
  std::string message;
  try {
    calibrate_from_profile(path, data_dir() + "/models/calibration/a100-sxm4.base.json", "test", "2026-11-29");
  } catch (const InputError& e) {
    message = e.what();
  }
  std::remove(path.c_str());
  CHECK_THAT(message, Catch::Contains("dvfs_a100_halved_1395.csv: row 5: energy / time = ") &&
                          Catch::Contains("x the power cap of a100-sxm4 (500 W): no cap target fits it"));
  CHECK_THAT(message, !Catch::Contains("a100-sxm4.base.json"));
}

TEST_CASE("calibrate refuses a calendar date that does not exist before writing it into provenance", "[calibrate][date]") {
  // 2026-02-30 passed the old check (any day 1-31) and was written as the model's calibration date.
  const std::string base = data_dir() + "/models/calibration/a100-sxm4.base.json";
  CHECK_THROWS_WITH(calibrate_from_profile(synthetic_profile(), base, "test", "2026-02-30"),
                    "--date: expected a date YYYY-MM-DD that exists (month 2 of 2026 has 28 days), got \"2026-02-30\"");
  CHECK_THROWS_WITH(check_calibration_date("2025-02-29"), Catch::Contains("month 2 of 2025 has 28 days"));
  CHECK_THROWS_WITH(check_calibration_date("2026-04-31"), Catch::Contains("month 4 of 2026 has 30 days"));
  CHECK_THROWS_WITH(check_calibration_date("2026-13-01"), Catch::Contains("expected a date YYYY-MM-DD"));
  CHECK_THROWS_WITH(check_calibration_date("2026-1-011"), Catch::Contains("expected a date YYYY-MM-DD"));
  CHECK_NOTHROW(check_calibration_date("2024-02-29"));  // a leap year
  CHECK_NOTHROW(check_calibration_date("2000-02-29"));
  CHECK_THROWS(check_calibration_date("1900-02-29"));
  CHECK_NOTHROW(check_calibration_date("2026-12-31"));
  const ProfileCalibration ok = calibrate_from_profile(synthetic_profile(), base, "test", "2024-02-29");
  CHECK(ok.model["provenance"]["calibration"]["date"] == "2024-02-29");
}
