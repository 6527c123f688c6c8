#include "sim/validate/repeat_recordings.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

Json loop_row(const std::string& name, const char* kind, double watts, double native_err) {
  return {{"loop", name}, {"kind", kind}, {"measured_mean_power_w", watts}, {"native", {{"energy_error_pct", native_err}}}};
}

Json repeated(const std::string& name, double spread, double mean_err) {
  return {{"loop", name}, {"kind", "held-out"}, {"regime", loop_regime(name)}, {"recordings", Json::array()},
          {"spread_pct", spread}, {"mean_native_energy_error_pct", mean_err}};
}

}  // namespace

TEST_CASE("a loop's regime follows the split rule's name prefixes", "[validate][repeat]") {
  CHECK(loop_regime("gemm-bf16-1024") == "tensor");
  CHECK(loop_regime("attn-fwd-s2048") == "tensor");
  CHECK(loop_regime("conv-7x7-s2-3c-224-b64") == "convolution");
  CHECK(loop_regime("duty-5ms-80pct") == "duty_and_launch_bound");
  CHECK(loop_regime("tiny-100x64k") == "duty_and_launch_bound");
  CHECK(loop_regime("memset-2g") == "stores_and_copies");
  CHECK(loop_regime("convert-fp32-fp16-128m") == "stores_and_copies");
  CHECK(loop_regime("copy-d2h-1g") == "stores_and_copies");
  CHECK(loop_regime("rmsnorm-fp32-fwdbwd") == "streaming_and_reductions");
  CHECK(loop_regime("adamw-fused-200m") == "streaming_and_reductions");
}

TEST_CASE("held-out loops are scored against all their recordings beside the figure of record", "[validate][repeat]") {
  const Json loops = {loop_row("gemm-bf16-1024", "held-out", 232, -8.9), loop_row("memset-2g", "held-out", 401, 9.1),
                      loop_row("convert-fp32-fp16-128m", "held-out", 673, -8.2), loop_row("gelu-bf16", "held-out", 690, 1.0),
                      loop_row("add-bf16", "in-sample", 596, 30.0)};
  // add-bf16 is in-sample: repeated, but neither in the held-out figures nor in a regime's spread
  const Json rows = {repeated("gemm-bf16-1024", 23.8, -10.7), repeated("memset-2g", 1.5, 8.3),
                     repeated("convert-fp32-fp16-128m", 11.3, -1.3), repeated("add-bf16", 2.4, 3.1)};
  const Json s = repeated_loop_summary(loops, rows);
  CHECK(s["held_out_loops"] == 4);
  CHECK(s["repeated_held_out_loops"] == 3);
  CHECK(s["of_record"]["native_energy_abs_error_mean_pct"].get<double>() == Approx((8.9 + 9.1 + 8.2 + 1.0) / 4));
  CHECK(s["of_record"]["native_within_8_pct"] == 1);
  // an unrepeated loop keeps its one error; a repeated one counts its recordings' mean
  CHECK(s["against_all_recordings"]["native_energy_abs_error_mean_pct"].get<double>() == Approx((10.7 + 8.3 + 1.3 + 1.0) / 4));
  CHECK(s["against_all_recordings"]["native_within_8_pct"] == 2);
  CHECK(s["spread_by_regime"]["stores_and_copies"]["loops"] == 2);
  CHECK(s["spread_by_regime"]["stores_and_copies"]["median_spread_pct"].get<double>() == Approx((1.5 + 11.3) / 2));
  CHECK(s["spread_by_regime"]["stores_and_copies"]["max_spread_pct"].get<double>() == Approx(11.3));
  CHECK(s["spread_by_regime"]["tensor"]["loops"] == 1);
  CHECK_FALSE(s["spread_by_regime"].contains("streaming_and_reductions"));
  std::ostringstream os;
  Json shown = rows;
  for (Json& r : shown) r["recordings"] = {{{"measured_mean_power_w", 400.0}, {"native_energy_error_pct", 1.0}}};
  format_repeated_loops(os, shown, s);
  CHECK(os.str().find("against the mean over each loop's recordings") != std::string::npos);
  CHECK(os.str().find("stores_and_copies (2 held-out loops): median 6.4 %, largest 11.3 %") != std::string::npos);
  CHECK(os.str().find("tensor (1 held-out loop): median 23.8 %") != std::string::npos);
}

TEST_CASE("each repeat folder's held-out loops are summarised alone: error, and shift from the shipped power", "[validate][repeat]") {
  auto rec = [](const std::string& folder, double watts, double err) {
    return Json{{"folder", folder}, {"measured_mean_power_w", watts}, {"native_energy_error_pct", err}};
  };
  Json a = repeated("memset-2g", 0, 0), b = repeated("mul-fp32", 0, 0), c = repeated("add-bf16", 0, 0);
  a["recordings"] = {rec("traces/recordings/h200-power/memset-2g", 400, 9.0), rec("set/card2/memset-2g", 476, -8.5),
                     rec("set/day2/memset-2g", 404, 7.0)};
  b["recordings"] = {rec("traces/recordings/h200-power/mul-fp32", 600, 3.0), rec("set/card2/mul-fp32", 606, -2.0)};
  c["kind"] = "in-sample";  // not a held-out loop: in no folder's figures
  c["recordings"] = {rec("shipped/add-bf16", 600, 1.0), rec("set/card2/add-bf16", 900, 50.0)};
  const Json loops = {loop_row("memset-2g", "held-out", 400, 9.0), loop_row("mul-fp32", "held-out", 600, 3.0),
                      loop_row("add-bf16", "in-sample", 600, 1.0)};
  const Json s = repeated_loop_summary(loops, Json{a, b, c});
  REQUIRE(s["by_repeat_folder"].size() == 2);
  const Json& card2 = s["by_repeat_folder"][0];
  CHECK(card2["folder"] == "set/card2");
  CHECK(card2["held_out_loops"] == 2);
  CHECK(card2["native_energy_abs_error_mean_pct"].get<double>() == Approx((8.5 + 2.0) / 2));
  CHECK(card2["native_within_8_pct"] == 1);
  CHECK(card2["steady_power_shift_median_pct"].get<double>() == Approx((19.0 + 1.0) / 2));
  CHECK(card2["steady_power_within_3_pct_of_shipped"] == 1);
  CHECK(s["by_repeat_folder"][1]["folder"] == "set/day2");
  CHECK(s["by_repeat_folder"][1]["steady_power_within_3_pct_of_shipped"] == 1);
  std::ostringstream os;
  format_repeated_loops(os, Json{a, b, c}, s);
  CHECK(os.str().find("set/card2 alone (2 held-out loops): |native energy error| mean 5.25 % (1 within 8 %); steady power "
                      "against the shipped recording: median +10.0 %, 1 within 3 %") != std::string::npos);
}

TEST_CASE("a loop's other recordings are found in the split's repeat folders and priced from their own data", "[validate][repeat]") {
  const GpuModel h200 = load_gpu_model("h200");
  const Json split = {{"repeat_held_out", {{"folders", {"traces/recordings/h200-power-21/repeat-a/micro",
                                                        "traces/recordings/h200-power-21/repeat-b/micro"}}}}};
  // idle has no kernel: each recording's measured idle power against the model's idle power
  const Json loops = {loop_row("idle", "in-sample", 123.2, 0.2), loop_row("gelu-bf16", "held-out", 690, 1.0)};
  const Json rows = repeated_loop_rows(split, "split.json", loops, h200);
  REQUIRE(rows.size() == 1);  // gelu-bf16 has no repeat there: no row
  const Json& r = rows[0];
  CHECK(r["loop"] == "idle");
  REQUIRE(r["recordings"].size() == 3);
  CHECK(r["recordings"][1]["folder"] == "traces/recordings/h200-power-21/repeat-a/micro/idle");
  for (const Json& x : r["recordings"]) CHECK(x["measured_mean_power_w"].get<double>() == Approx(123.2).margin(1.0));
  const double w1 = r["recordings"][1]["measured_mean_power_w"].get<double>();
  CHECK(r["recordings"][1]["native_energy_error_pct"].get<double>() == Approx(100.0 * (h200.idle_w() - w1) / w1));
  CHECK(r["spread_pct"].get<double>() < 1.0);
  // a split without the block: nothing repeated
  CHECK(repeated_loop_rows(Json::object(), "split.json", loops, h200).empty());
}

TEST_CASE("a malformed or missing repeat folder is refused naming the split file and the field", "[validate][repeat]") {
  const GpuModel h200 = load_gpu_model("h200");
  const Json loops = {loop_row("idle", "in-sample", 123.2, 0.2)};
  auto message = [&](const Json& split) {
    try {
      repeated_loop_rows(split, "split.json", loops, h200);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string missing = message({{"repeat_held_out", {{"folders", {"traces/recordings/no-such-folder"}}}}});
  CHECK(missing.find("split.json") != std::string::npos);
  CHECK(missing.find("repeat_held_out.folders") != std::string::npos);
  CHECK(missing.find("no recording folder") != std::string::npos);
  CHECK(message({{"repeat_held_out", {{"folders", Json::array()}}}}).find("non-empty list") != std::string::npos);
  CHECK(message({{"repeat_held_out", {{"folders", {5}}}}}).find("element 0") != std::string::npos);
  CHECK(message({{"repeat_held_out", Json::object()}}).find("repeat_held_out.folders") != std::string::npos);
}

TEST_CASE("a held-out whole workload recorded again is set beside its shipped row", "[validate][repeat]") {
  const Json shipped = {{"recording", "traces/recordings/h200-unseen-6/gat-300k"}, {"measured_mean_power_w", 271.6},
                        {"measured_window_s", 20.4}, {"total_energy_error_pct", 73.7}};
  std::vector<std::string> priced;
  auto price = [&](const std::string& rel) {
    priced.push_back(rel);
    return Json{{"measured_mean_power_w", 285.18}, {"measured_window_s", 20.1}, {"total_energy_error_pct", 65.0}};
  };
  // the folder here is the shipped set's own, so that the repeat's directory exists; the price is a stand-in
  Json split = {{"repeat_missed_workloads", {{"workloads", {"h200-unseen-6/gat-300k"}}}}};
  CHECK(repeated_workload_rows(split, "split.json", Json::array({shipped}), price).empty());  // no folder: not recorded yet
  split["repeat_missed_workloads"]["folder"] = "traces/recordings/h200-unseen-6";
  const Json rows = repeated_workload_rows(split, "split.json", Json::array({shipped}), price);
  REQUIRE(rows.size() == 1);
  CHECK(priced == std::vector<std::string>{"traces/recordings/h200-unseen-6/gat-300k"});
  CHECK(rows[0]["shift_pct"].get<double>() == Approx(5.0));
  CHECK(rows[0]["shipped"]["total_energy_error_pct"].get<double>() == Approx(73.7));
  std::ostringstream os;
  format_repeated_workloads(os, rows);
  CHECK(os.str().find("h200-unseen-6/gat-300k") != std::string::npos);
  CHECK(os.str().find("+5.0 %") != std::string::npos);
  // a listed workload validate --models does not price, or a repeat that is not there: refused, naming the field
  auto message = [&](const Json& doc, const Json& rows_in) {
    try {
      repeated_workload_rows(doc, "split.json", rows_in, price);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(split, Json::array()).find("repeat_missed_workloads.workloads") != std::string::npos);
  Json elsewhere = split;
  elsewhere["repeat_missed_workloads"]["folder"] = "traces/recordings/no-such-folder";
  CHECK(message(elsewhere, Json::array({shipped})).find("no repeat of h200-unseen-6/gat-300k") != std::string::npos);
  Json bare = split;
  bare["repeat_missed_workloads"]["workloads"] = {"gat-300k"};
  CHECK(message(bare, Json::array({shipped})).find("set/name") != std::string::npos);
}
