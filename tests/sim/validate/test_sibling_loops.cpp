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
  CHECK(message(block({"no-such-loop"})).find("h100_held_out_loops.loops: no loop recording") != std::string::npos);
  CHECK(message(block(Json::array())).find("non-empty list") != std::string::npos);
  Json unknown = block({"tiny-100x64k"});
  unknown["h100_held_out_loops"]["model"] = "h999";
  CHECK(message(unknown).find("h999") != std::string::npos);
  Json idle = block({"tiny-100x64k"});
  idle["h100_held_out_loops"]["idle_folders"] = {"traces/recordings/nowhere"};
  CHECK(message(idle).find("h100_held_out_loops.idle_folders") != std::string::npos);
}
