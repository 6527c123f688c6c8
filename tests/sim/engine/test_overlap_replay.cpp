#include "sim/engine/overlap_replay.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;

namespace {

ContentionModel no_cap_model(double gain) {
  ContentionModel m;
  m.overlap_gain = gain;
  m.cap_factor = 1.0;
  return m;
}

StreamActivity act(double s, double w, double sm, double mem) {
  StreamActivity a;
  a.alone_s = s;
  a.alone_power_w = w;
  a.demand = {sm, mem};
  return a;
}

}  // namespace

TEST_CASE("Kernels that fit side by side on the SMs overlap fully: the streams end with the longer one", "[overlap-replay]") {
  const GpuEnvelope gpu{100, 10000};
  const std::vector<std::vector<StreamActivity>> streams = {{act(1e-3, 400, 0.4, 0.1), act(1e-3, 400, 0.4, 0.1)},
                                                            {act(0.5e-3, 300, 0.3, 0.1)}};
  const OverlapResult r = replay_concurrent(no_cap_model(0), gpu, streams);
  CHECK(r.seconds == Approx(2e-3));
  CHECK(r.end_s[1][0] == Approx(0.5e-3));
  // Energy: static once; each kernel's dynamic part over its own time.
  CHECK(r.energy_j == Approx(100 * 2e-3 + 300 * 2e-3 + 200 * 0.5e-3));
}

TEST_CASE("Full-grid kernels without an overlap gain take as long together as one after the other, like the busy union",
          "[overlap-replay]") {
  const GpuEnvelope gpu{100, 10000};
  const std::vector<std::vector<StreamActivity>> streams = {{act(2e-3, 500, 1, 0.2)}, {act(1e-3, 300, 1, 0.2), act(1e-3, 300, 1, 0.2)}};
  const OverlapResult o = replay_concurrent(no_cap_model(0), gpu, streams);
  const OverlapResult u = replay_busy_union(no_cap_model(0), gpu, streams, {{0, 0}, {1, 0}, {1, 1}});
  CHECK(o.seconds == Approx(4e-3));
  CHECK(u.seconds == Approx(4e-3));
  CHECK(o.energy_j == Approx(u.energy_j));
  CHECK(u.end_s[1][1] == Approx(4e-3));
}

TEST_CASE("An overlap gain shortens a compute-bound stream beside a memory-bound one below the busy union", "[overlap-replay]") {
  const GpuEnvelope gpu{100, 10000};
  const std::vector<std::vector<StreamActivity>> streams = {{act(2e-3, 600, 1, 0.1)}, {act(2e-3, 500, 1, 0.9)}};
  const OverlapResult o = replay_concurrent(no_cap_model(0.2), gpu, streams);
  const OverlapResult u = replay_busy_union(no_cap_model(0.2), gpu, streams, {{0, 0}, {1, 0}});
  CHECK(o.seconds < u.seconds);
  CHECK(o.seconds == Approx(4e-3 / (1 + 0.2 * 0.8)));
}

TEST_CASE("Under a power cap the overlapped timeline's mean power settles at the cap", "[overlap-replay]") {
  ContentionModel m = no_cap_model(0);
  m.clock_time_share = 0.4;
  m.power_clock_exponent = 2.5;
  const GpuEnvelope gpu{100, 500};
  const std::vector<std::vector<StreamActivity>> streams = {{act(1e-3, 450, 0.6, 0.1)}, {act(1e-3, 400, 0.4, 0.1)}};
  const OverlapResult r = replay_concurrent(m, gpu, streams);  // 100 + 350 + 300 = 750 W uncapped
  CHECK(r.energy_j / r.seconds == Approx(500).epsilon(1e-6));
  CHECK(r.seconds > r.unsettled_seconds);
}
