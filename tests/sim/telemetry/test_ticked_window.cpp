// A control loop's telemetry window (sim/telemetry/ticked_window.hpp): ticks every period, the period's
// energy entering the window.
#include "sim/telemetry/ticked_window.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;

TEST_CASE("ticked window: a default window never ticks", "[sim][telemetry]") {
  TickedWindow w;
  CHECK(std::isinf(w.next_tick_s()));
  CHECK(w.empty());
}

TEST_CASE("ticked window: each tick pushes the period's energy and returns its mean power", "[sim][telemetry]") {
  // 10 ms periods, a 40 ms window that starts at 100 W.
  TickedWindow w(0.01, 0.04, 100.0);
  CHECK(w.next_tick_s() == 0.01);
  CHECK(w.mean_power_w() == Approx(100.0));
  w.add(2.0);
  w.add(1.0);  // 3 J over the period: 300 W
  CHECK(w.tick() == Approx(300.0));
  CHECK(w.next_tick_s() == Approx(0.02));
  CHECK(w.mean_power_w() == Approx(150.0));  // (300 + 3 x 100) / 4
  CHECK(w.tick() == 0.0);                    // nothing drawn in the next period
  CHECK(w.mean_power_w() == Approx(125.0));  // (300 + 0 + 2 x 100) / 4
}
