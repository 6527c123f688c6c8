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

// A copy of the shipped split with its profiled_window block changed by `edit`, written to a temporary file.
std::string split_with_window(const std::function<void(Json&)>& edit, const std::string& name) {
  Json doc = read_json_file(data_dir() + "/models/calibration/h200-power-split.json");
  edit(doc["profiled_window"]);
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
