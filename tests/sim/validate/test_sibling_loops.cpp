#include "sim/validate/sibling_loops.hpp"

#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

Json block(Json loops) {
  return {{"h100_held_out_loops",
           {{"model", "h100-sxm"},
            {"folder", "traces/recordings/h100-power-22/micro"},
            {"idle_folders", {"traces/recordings/h100-power-22/idle-before/micro/idle"}},
            {"loops", std::move(loops)}}}};
}

std::string message(const Json& split) {
  try {
    sibling_loop_checks(split, "split.json", "h100_held_out_loops");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("loops recorded on another card are priced under that card's model, all held out", "[validate][sibling]") {
  const Json c = sibling_loop_checks(block({"tiny-100x64k"}), "split.json", "h100_held_out_loops");
  CHECK(c["model"] == "h100-sxm");
  REQUIRE(c["loops"].size() == 1);
  const Json& l = c["loops"][0];
  CHECK(l["kind"] == "held-out");
  CHECK(l["regime"] == "duty_and_launch_bound");
  CHECK(l["recording"] == "traces/recordings/h100-power-22/micro/tiny-100x64k");
  CHECK(l["measured_mean_power_w"].get<double>() > 100);
  REQUIRE(c["idle"].size() == 1);
  const Json& i = c["idle"][0];
  CHECK(i["error_pct"].get<double>() ==
        Approx(100.0 * (i["model_idle_w"].get<double>() - i["measured_mean_power_w"].get<double>()) / i["measured_mean_power_w"].get<double>()));
  const Json& s = c["summary"];
  CHECK(s["native_energy_abs_error"]["count"] == 1);
  CHECK(s["native_energy_abs_error"]["mean_pct"].get<double>() == Approx(std::fabs(l["native"]["energy_error_pct"].get<double>())));
  CHECK(s["native_by_regime"].contains("duty_and_launch_bound"));
  std::ostringstream os;
  format_sibling_loops(os, c);
  CHECK(os.str().find("shipped h100-sxm model (never fit on that card's data)") != std::string::npos);
  CHECK(sibling_loop_checks(Json::object(), "split.json", "h100_held_out_loops").is_null());
}

TEST_CASE("a malformed sibling-loop block is refused naming the split file and the field", "[validate][sibling]") {
  CHECK(message(block({"no-such-loop"})).find("h100_held_out_loops.loops: no recording (run.json)") != std::string::npos);
  CHECK(message(block(Json::array())).find("non-empty list") != std::string::npos);
  Json unknown = block({"tiny-100x64k"});
  unknown["h100_held_out_loops"]["model"] = "h999";
  CHECK(message(unknown).find("h999") != std::string::npos);
  Json idle = block({"tiny-100x64k"});
  idle["h100_held_out_loops"]["idle_folders"] = {"traces/recordings/nowhere"};
  CHECK(message(idle).find("h100_held_out_loops.idle_folders") != std::string::npos);
}

namespace {

Json workload_block(Json workloads, bool recorded = true) {
  Json b = {{"model", "h100-sxm"}, {"workloads", std::move(workloads)}};
  if (recorded) b["folder"] = "traces/recordings/h200-unseen-5";  // any folder of recordings serves the mechanics
  return {{"h100_whole_workloads", b}};
}

// validate --models' workload row reduced to the fields the sibling table reads, its error set by the model's name
Json fake_row(const std::string& rel, const GpuModel& model) {
  const double err = model.name() == "h100-sxm" ? -9.0 : 0.0;
  return {{"recording", rel}, {"total_energy_error_pct", err}, {"recorded_clocks_total_energy_error_pct", err / 2},
          {"shapes_withheld_total_energy_error_pct", 12.0}, {"measured_window_s", 0.8}, {"measured_mean_power_w", 294.5},
          {"simulated_mean_power_w", 268.0}};
}

}  // namespace

TEST_CASE("workloads recorded on another card are priced under that card's model beside their home-card row", "[validate][sibling]") {
  const Json home = Json::array({{{"recording", "traces/recordings/h200-unseen-5/dcgan-train-b256"}, {"total_energy_error_pct", -3.4}},
                                 {{"recording", "traces/recordings/h200-unseen-5/unet-seg-train-b16"}, {"total_energy_error_pct", -6.5}}});
  const Json c = sibling_workload_checks(workload_block({"dcgan-train-b256"}), "split.json", "h100_whole_workloads", home, fake_row);
  CHECK(c["model"] == "h100-sxm");
  REQUIRE(c["workloads"].size() == 1);
  const Json& w = c["workloads"][0];
  CHECK(w["recording"] == "traces/recordings/h200-unseen-5/dcgan-train-b256");
  CHECK(w["total_energy_error_pct"].get<double>() == Approx(-9.0));  // priced under the block's model
  CHECK(w["home_total_energy_error_pct"].get<double>() == Approx(-3.4));  // matched by name, not the other row
  const Json& s = c["summary"];
  CHECK(s["native_energy_abs_error"]["mean_pct"].get<double>() == Approx(9.0));
  CHECK(s["native_within_8_pct"] == 0);
  CHECK(s["recorded_within_8_pct"] == 1);
  CHECK(s["shapes_withheld_within_8_pct"] == 0);
  std::ostringstream os;
  format_sibling_workloads(os, c);
  CHECK(os.str().find("dcgan-train-b256") != std::string::npos);
  CHECK(os.str().find("native mean 9.00 %, max 9.00 % (0 of 1 within 8 %)") != std::string::npos);
  // not recorded yet (no folder), or no block: nothing to print
  CHECK(sibling_workload_checks(workload_block({"dcgan-train-b256"}, false), "split.json", "h100_whole_workloads", home, fake_row).is_null());
  CHECK(sibling_workload_checks(Json::object(), "split.json", "h100_whole_workloads", home, fake_row).is_null());
}

TEST_CASE("a sibling-workload block naming a missing recording is refused naming the split file and the field", "[validate][sibling]") {
  try {
    sibling_workload_checks(workload_block({"no-such-job"}), "split.json", "h100_whole_workloads", Json::array(), fake_row);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("h100_whole_workloads.workloads: no recording (run.json)") != std::string::npos);
    CHECK(std::string(e.what()).find("h100_whole_workloads.workloads") != std::string::npos);
    CHECK(std::string(e.what()).find("split.json") != std::string::npos);
  }
}

TEST_CASE("a later set listed by path in a sibling-workload block is read from its own folder and named in the header", "[validate][sibling]") {
  // home rows by name: wavenet-b8 has one; dcgan-train-b256 has two (two folders), so none is taken
  const Json home = Json::array({{{"recording", "traces/recordings/h200-unseen-6/wavenet-b8"}, {"total_energy_error_pct", -7.8}},
                                 {{"recording", "traces/recordings/h200-unseen-5/dcgan-train-b256"}, {"total_energy_error_pct", -3.4}},
                                 {{"recording", "traces/recordings/elsewhere/dcgan-train-b256"}, {"total_energy_error_pct", 1.0}}});
  const Json c = sibling_workload_checks(workload_block({"dcgan-train-b256", "traces/recordings/h200-unseen-6/wavenet-b8"}), "split.json",
                                         "h100_whole_workloads", home, fake_row);
  REQUIRE(c["workloads"].size() == 2);
  CHECK(c["workloads"][0]["recording"] == "traces/recordings/h200-unseen-5/dcgan-train-b256");
  CHECK(c["workloads"][0]["home_total_energy_error_pct"].is_null());  // ambiguous: two rows of that name
  CHECK(c["workloads"][1]["recording"] == "traces/recordings/h200-unseen-6/wavenet-b8");  // the path as given
  CHECK(c["workloads"][1]["home_total_energy_error_pct"].get<double>() == Approx(-7.8));
  CHECK(c["summary"]["native_energy_abs_error"]["count"] == 2);
  std::ostringstream os;
  format_sibling_workloads(os, c);
  CHECK(os.str().find("(traces/recordings/h200-unseen-5, traces/recordings/h200-unseen-6; split h100_whole_workloads)") != std::string::npos);
  CHECK(os.str().find("\nwavenet-b8 ") != std::string::npos);
}
