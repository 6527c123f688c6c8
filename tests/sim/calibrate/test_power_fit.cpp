#include "sim/calibrate/power_fit.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

using namespace dvfs;
using Catch::Detail::Approx;

TEST_CASE("non-negative least squares recovers non-negative coefficients exactly", "[calibrate][power]") {
  const std::vector<std::vector<double>> a = {{1, 0, 2}, {0, 1, 1}, {1, 1, 0}, {2, 1, 1}, {1, 3, 1}};
  const std::vector<double> x = {2, 0.5, 1};
  std::vector<double> b;
  for (const auto& r : a) b.push_back(r[0] * x[0] + r[1] * x[1] + r[2] * x[2]);
  const std::vector<double> got = nonnegative_least_squares(a, b);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(got[i] == Approx(x[i]));
}

TEST_CASE("non-negative least squares clamps a coefficient the data would make negative", "[calibrate][power]") {
  const std::vector<std::vector<double>> a = {{1, 1}, {1, 2}, {1, 3}};
  const std::vector<double> b = {3, 2, 1};  // unconstrained: slope -1
  const std::vector<double> got = nonnegative_least_squares(a, b);
  CHECK(got[1] == 0);
  CHECK(got[0] == Approx(2));
}

TEST_CASE("the shipped split file keeps fit and held-out loops apart", "[calibrate][power]") {
  const std::string split = data_dir() + "/models/calibration/h200-power-split.json";
  const std::vector<std::string> fit = split_names(split, "fit", "micro"), held = split_names(split, "held_out", "micro");
  CHECK(fit.size() >= 30);
  CHECK(held.size() >= 25);
  for (const std::string& h : held) CHECK(std::find(fit.begin(), fit.end(), h) == fit.end());
  CHECK_THROWS_WITH(split_names(split, "fit", "nothing"), Catch::Contains("h200-power-split.json: fit.nothing: missing"));
}

TEST_CASE("a late-fit block's loops keep their sides, each with its recording", "[calibrate][power]") {
  // fp64_tensor_energy and unvectorised_bytes fit one coefficient each on their `fit` loops, after the joint fit
  const std::string split = data_dir() + "/models/calibration/h200-power-split.json";
  for (const char* block : {"fp64_tensor_energy", "unvectorised_bytes"}) {
    const auto fit = split_block_loops(split, block, "fit"), held = split_block_loops(split, block, "held_out");
    CHECK(!fit.empty());
    CHECK(!held.empty());
    for (const auto& [name, dir] : held) {
      CHECK(std::filesystem::exists(dir + "/run.json"));
      for (const auto& f : fit) CHECK(f.first != name);
    }
  }
}

TEST_CASE("the shipped h200 activity block is what the fit loops give", "[calibrate][power]") {
  const std::string root = data_dir();
  const PowerSuiteCalibration c = calibrate_from_power_suite(root + "/traces/recordings/h200-power",
                                                             root + "/models/calibration/h200-power-split.json",
                                                             root + "/models/calibration/h200.base.json", "test", "2026-12-01");
  const Json shipped = read_json_file(root + "/models/calibration/h200.activity.json");
  CHECK(c.model["activity"] == shipped["activity"]);
  CHECK(c.model["voltage_curve"] == shipped["voltage_curve"]);
  CHECK(c.report["in_sample_mape_pct"].get<double>() < 6.0);
}

namespace {

// A copy of the shipped split with its `block` (profiled_window unless said) changed by `edit`, written to a
// temporary file.
std::string split_with_window(const std::function<void(Json&)>& edit, const std::string& name, const char* block = "profiled_window") {
  Json doc = read_json_file(data_dir() + "/models/calibration/h200-power-split.json");
  edit(doc[block]);
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << doc.dump();
  return path;
}

}  // namespace

TEST_CASE("the window recordings are a loop's measurement only when the split makes them the measurement of record", "[calibrate][power]") {
  const std::string window = data_dir() + "/traces/recordings/h200-power-window/gemm-bf16-4096";
  const LoopRecordings shipped(data_dir() + "/models/calibration/h200-power-split.json", "SUITE");
  CHECK_FALSE(shipped.measured_over_profiled_window("gemm-bf16-4096"));  // the shipped split keeps them a diagnostic
  CHECK(shipped.dir("gemm-bf16-4096") == "SUITE/gemm-bf16-4096");
  CHECK(shipped.window_dir("gemm-bf16-4096") == window);
  CHECK(shipped.window_loops().size() == 45);
  const std::string of_record = split_with_window([](Json& pw) { pw["measurement_of_record"] = true; }, "dvfs_split_of_record.json");
  const LoopRecordings where(of_record, "SUITE");
  CHECK(where.measured_over_profiled_window("gemm-bf16-4096"));
  CHECK(where.dir("gemm-bf16-4096") == window);
  CHECK_FALSE(where.measured_over_profiled_window("gemm-bf16-1024"));  // ran at the top clock: the suite measures it
  CHECK(where.dir("gemm-bf16-1024") == "SUITE/gemm-bf16-1024");
  std::filesystem::remove(of_record);
  const std::string unsaid = split_with_window([](Json& pw) { pw.erase("measurement_of_record"); }, "dvfs_split_unsaid.json");
  CHECK_THROWS_WITH(LoopRecordings(unsaid, "SUITE"), Catch::Contains("profiled_window.measurement_of_record") && Catch::Contains("missing"));
  std::filesystem::remove(unsaid);
}

TEST_CASE("a profiled-window loop must be on a side's list and have its recording", "[calibrate][power]") {
  const std::string unknown = split_with_window([](Json& pw) { pw["loops"].push_back("not-a-loop"); }, "dvfs_split_unknown.json");
  CHECK_THROWS_WITH(LoopRecordings(unknown, "SUITE"), Catch::Contains("profiled_window.loops") && Catch::Contains("not-a-loop"));
  const std::string missing = split_with_window([](Json& pw) { pw["loops"].push_back("gemm-bf16-1024"); }, "dvfs_split_missing.json");
  CHECK_THROWS_WITH(LoopRecordings(missing, "SUITE"), Catch::Contains("gemm-bf16-1024") && Catch::Contains("has no window recording"));
  const std::string not_list = split_with_window([](Json& pw) { pw["loops"] = "gemm-bf16-4096"; }, "dvfs_split_not_list.json");
  CHECK_THROWS_WITH(LoopRecordings(not_list, "SUITE"), Catch::Contains("profiled_window.loops") && Catch::Contains("expected a list"));
  for (const char* f : {"dvfs_split_unknown.json", "dvfs_split_missing.json", "dvfs_split_not_list.json"})
    std::filesystem::remove(std::filesystem::temp_directory_path() / f);
}

TEST_CASE("a replaced suite loop is measured by its replacement only when the split makes it the measurement of record", "[calibrate][power]") {
  const std::string random_copy = data_dir() + "/traces/recordings/h200-copy-data/copy-fp32-1g-random";
  const LoopRecordings shipped(data_dir() + "/models/calibration/h200-power-split.json", "SUITE");
  CHECK(shipped.replacement("copy-d2d-1g") == random_copy);  // the shipped split: a copy of random data (seventh round)
  CHECK(shipped.dir("copy-d2d-1g") == random_copy);
  CHECK(shipped.replacement("copy-h2d-1g").empty());
  const std::string off = split_with_window([](Json& cd) { cd["measurement_of_record"] = false; }, "dvfs_split_copy_off.json", "copy_data");
  CHECK(LoopRecordings(off, "SUITE").dir("copy-d2d-1g") == "SUITE/copy-d2d-1g");
  const std::string held = split_with_window([](Json& cd) { cd["replaces"] = {{"copy-d2h-1g", "copy-fp32-1g-random"}}; },
                                             "dvfs_split_copy_held.json", "copy_data");
  CHECK_THROWS_WITH(LoopRecordings(held, "SUITE"), Catch::Contains("copy_data.replaces") && Catch::Contains("not a fit-side"));
  const std::string gone = split_with_window([](Json& cd) { cd["replaces"] = {{"copy-d2d-1g", "no-such-recording"}}; },
                                             "dvfs_split_copy_gone.json", "copy_data");
  CHECK_THROWS_WITH(LoopRecordings(gone, "SUITE"), Catch::Contains("copy_data.replaces") && Catch::Contains("no recording"));
  const std::string unsaid = split_with_window([](Json& cd) { cd.erase("measurement_of_record"); }, "dvfs_split_copy_unsaid.json", "copy_data");
  CHECK_THROWS_WITH(LoopRecordings(unsaid, "SUITE"), Catch::Contains("copy_data.measurement_of_record") && Catch::Contains("missing"));
  for (const char* f : {"dvfs_split_copy_off.json", "dvfs_split_copy_held.json", "dvfs_split_copy_gone.json", "dvfs_split_copy_unsaid.json"})
    std::filesystem::remove(std::filesystem::temp_directory_path() / f);
}

TEST_CASE("the gapless recordings measure the capped loops only when the split makes them the measurement of record", "[calibrate][power]") {
  const std::string gapless = data_dir() + "/traces/recordings/h200-power-gapless/gemm-bf16-4096";
  const LoopRecordings shipped(data_dir() + "/models/calibration/h200-power-split.json", "SUITE");
  CHECK(shipped.recorded_gapless("gemm-bf16-4096"));
  CHECK_FALSE(shipped.measured_gapless("gemm-bf16-4096"));  // a diagnostic: the refit on them was not kept
  CHECK(shipped.gapless_dir("gemm-bf16-4096") == gapless);
  CHECK_FALSE(shipped.recorded_gapless("gemm-bf16-1024"));  // ran at the top clock: not one of the capped loops
  const std::string on = split_with_window([](Json& g) { g["measurement_of_record"] = true; }, "dvfs_split_gapless_on.json", "gapless_window");
  const LoopRecordings where(on, "SUITE");
  CHECK(where.dir("gemm-bf16-4096") == gapless);
  CHECK(where.dir("gemm-bf16-1024") == "SUITE/gemm-bf16-1024");
  const std::string elsewhere = split_with_window(
      [](Json& g) { g["measurement_of_record"] = true, g["folder"] = "traces/recordings/no-such-folder"; }, "dvfs_split_gapless_gone.json", "gapless_window");
  CHECK_THROWS_WITH(LoopRecordings(elsewhere, "SUITE"), Catch::Contains("gapless_window.folder") && Catch::Contains("has no gapless recording"));
  for (const char* f : {"dvfs_split_gapless_on.json", "dvfs_split_gapless_gone.json"})
    std::filesystem::remove(std::filesystem::temp_directory_path() / f);
}

TEST_CASE("calibrate --power-suite refuses a split that lists a loop twice, on both sides, or with an unknown key in a block it reads",
          "[calibrate][power][split]") {
  const std::string root = data_dir();
  const auto calibrate = [&](const std::string& split) {
    return calibrate_from_power_suite(root + "/traces/recordings/h200-power", split, root + "/models/calibration/h200.base.json", "test",
                                      "2026-12-01");
  };
  // Each was accepted: a repeated fit loop weighted twice, a loop fit and then scored as held out, a typo'd list ignored.
  const std::string twice = split_with_window([](Json& fit) { fit["micro"].push_back(fit["micro"][1]); }, "dvfs_split_twice.json", "fit");
  CHECK_THROWS_WITH(calibrate(twice), Catch::Contains("dvfs_split_twice.json: fit.micro: \"gemm-bf16-8192\" is listed twice (also in fit.micro)"));
  const std::string across = split_with_window([](Json& fit) { fit["micro_family"].push_back(fit["micro"][1]); }, "dvfs_split_across.json", "fit");
  CHECK_THROWS_WITH(calibrate(across), Catch::Contains("fit.micro_family: \"gemm-bf16-8192\" is listed twice (also in fit.micro)"));
  const std::string both = split_with_window([](Json& held) { held["micro"].push_back("gemm-bf16-8192"); }, "dvfs_split_both.json", "held_out");
  CHECK_THROWS_WITH(calibrate(both), Catch::Contains("dvfs_split_both.json: held_out.micro: \"gemm-bf16-8192\" is also in fit.micro: "
                                                     "expected each loop on one side only"));
  const std::string typo = split_with_window([](Json& fit) { fit["micro_storez"] = fit["micro_stores"], fit.erase("micro_stores"); },
                                             "dvfs_split_typo.json", "fit");
  CHECK_THROWS_WITH(calibrate(typo), Catch::Contains("dvfs_split_typo.json: fit.micro_storez: unknown key (expected one of: micro,"));
  const std::string window_typo = split_with_window([](Json& pw) { pw["measurement_of_recrod"] = true; }, "dvfs_split_window_typo.json");
  CHECK_THROWS_WITH(calibrate(window_typo), Catch::Contains("profiled_window.measurement_of_recrod: unknown key"));
  const std::string late = split_with_window([](Json& b) { b["held_out"].push_back(b["fit"][0]); }, "dvfs_split_late.json", "fp64_tensor_energy");
  CHECK_THROWS_WITH(calibrate(late), Catch::Contains("fp64_tensor_energy.held_out: \"") && Catch::Contains("is also in fp64_tensor_energy.fit"));
  // The blocks calibrate does not read (the rounds' rules and outcomes) stay free-form. (That the shipped split
  // calibrates to the shipped coefficients is the CTest calibrated_models_match_their_derivation: a whole fit, too
  // slow to repeat here under the sanitizers.)
  const std::string notes = split_with_window([](Json& b) { b["any_note"] = "kept"; }, "dvfs_split_notes.json", "fft_work");
  CHECK_NOTHROW(check_power_split(read_json_file(notes), notes));
  CHECK_THROWS_WITH(check_power_split(read_json_file(typo), typo), Catch::Contains("fit.micro_storez: unknown key"));
  for (const char* f : {"dvfs_split_twice.json", "dvfs_split_across.json", "dvfs_split_both.json", "dvfs_split_typo.json",
                        "dvfs_split_window_typo.json", "dvfs_split_late.json", "dvfs_split_notes.json"})
    std::filesystem::remove(std::filesystem::temp_directory_path() / f);
}
