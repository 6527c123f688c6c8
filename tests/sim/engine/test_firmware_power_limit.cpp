// The firmware power-limit loop (sim/engine/firmware_power_limit.hpp): a ceiling over the SM clock that
// the native governor's step moves on the windowed power.
#include "models/src/model_registry.hpp"
#include "sim/engine/firmware_power_limit.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;

TEST_CASE("firmware power limit: idle until started, the ceiling at the top clock", "[sim][firmware]") {
  const GpuModel m = load_gpu_model("h200");
  FirmwarePowerLimit f(m, m.power_cap_w());
  const int top = static_cast<int>(m.sm_clocks_mhz().size()) - 1;
  CHECK(f.ceiling() == top);
  CHECK(std::isinf(f.next_tick_s()));
  f.start(m.idle_power_w(top));
  CHECK(f.next_tick_s() == m.governor().control_period_s);
}

TEST_CASE("firmware power limit: power over the cap lowers the ceiling, low power raises it again", "[sim][firmware]") {
  const GpuModel m = load_gpu_model("h200");
  const double period = m.governor().control_period_s;
  FirmwarePowerLimit f(m, m.power_cap_w());
  const int top = static_cast<int>(m.sm_clocks_mhz().size()) - 1;
  f.start(m.idle_power_w(top));
  // Drawing twice the cap for a whole window brings the ceiling below the top.
  for (int i = 0; i < 200 && f.ceiling() == top; ++i) {
    f.add(2 * m.power_cap_w() * period);
    f.tick(top);
  }
  const int low = f.ceiling();
  CHECK(low < top);
  // A policy clock below the ceiling is where a step down starts from.
  f.add(2 * m.power_cap_w() * period);
  CHECK(f.tick(0) == 0);
  // At idle power the ceiling climbs back to the top.
  for (int i = 0; i < 10000 && f.ceiling() < top; ++i) {
    f.add(m.idle_power_w(0) * period);
    f.tick(top);
  }
  CHECK(f.ceiling() == top);
}
