// NCCL kernels replayed beside the compute they overlapped (sim/engine/stream_overlap.hpp) against the busy union.
#include "models/src/collective_cost.hpp"
#include "models/src/model_registry.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/stream_overlap.hpp"
#include "sim/policies/policy_factory.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/multi_rank.hpp"
#include "../../traces/rank_trace_fixtures.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

// The all-reduce of 100 MB on stream 20 takes 16 blocks per SM's worth of the GPU: 0.12 of it.
const std::string kAllReduceArgs = std::string(R"("blocks per SM": 0.12, )") + testing::allreduce_args(25000000);

// GEMM A runs 0-2 ms; the all-reduce starts 0.1 ms into it (recorded 1 ms); GEMM B runs 2-3 ms. Without the
// all-reduce: the same two GEMMs.
Workload two_ranks(bool with_allreduce, double gemm_a_us = 2000) {
  std::vector<RankTrace> parts;
  for (int r = 0; r < 2; ++r) {
    std::vector<testing::RankEvent> evs = {{"ampere_bf16_gemm", 0, gemm_a_us, ""}, {"ampere_bf16_gemm", 2000, 1000, ""}};
    if (with_allreduce) evs.insert(evs.begin() + 1, {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", 100, 1000, kAllReduceArgs});
    parts.push_back(testing::rank_part(r, evs));
  }
  return merge_rank_workloads(std::move(parts));
}

struct Totals {
  double seconds = 0, energy_j = 0;
};

// On two nodes (the all-reduce crosses the NICs: it lasts longer than the GEMM it overlaps).
Totals replay(const Workload& wl, StreamOverlap mode, EngineMode engine = EngineMode::local_loop) {
  Totals t;
  for (const RankOutcome& r : testing::replay(wl, testing::two_nodes(), false, mode, engine)) {
    t.seconds = std::max(t.seconds, r.stats.end_s);
    t.energy_j += r.meter.total_j();
  }
  return t;
}

}  // namespace

TEST_CASE("A kernel beside a collective runs at the contended rate only while the collective runs", "[engine][stream-overlap]") {
  // Wholly beside: 1 s of work at half speed.
  BesideCollective b = kernel_beside_collective(0, 1, 0, 10, 0.5);
  CHECK(b.seconds == Approx(2));
  CHECK(b.overlapped_s == Approx(2));
  // The collective ends after 1 s: 0.5 s of work done beside it, 0.5 s alone.
  b = kernel_beside_collective(0, 1, 0, 1, 0.5);
  CHECK(b.seconds == Approx(1.5));
  CHECK(b.overlapped_s == Approx(1));
  // It starts 0.25 s in: 0.25 alone, then 0.75 of work at half speed.
  b = kernel_beside_collective(0, 1, 0.25, 10, 0.5);
  CHECK(b.seconds == Approx(1.75));
  CHECK(b.overlapped_s == Approx(1.5));
  // Before or after it: alone.
  CHECK(kernel_beside_collective(0, 1, 2, 3, 0.5).seconds == Approx(1));
  CHECK(kernel_beside_collective(4, 1, 2, 3, 0.5).overlapped_s == 0);
}

TEST_CASE("Beside a collective, a pair over the power limit runs at the clock that brings it to the limit", "[engine][stream-overlap]") {
  OverlapWindow w;
  w.cap_factor = 1;
  w.power_clock_exponent = 2;
  w.clock_time_share = 0.4;
  const CapThrottle under = throttle_to_cap(650, 100, 700, w);
  CHECK(under.time_factor == 1);
  CHECK(under.power_factor == 1);
  // 800 W of dynamic power over a 600 W allowance: f^2 = 0.75.
  const CapThrottle over = throttle_to_cap(900, 100, 700, w);
  CHECK(over.power_factor == Approx(0.75));
  CHECK(100 + 800 * over.power_factor == Approx(700));
  CHECK(over.time_factor == Approx(0.6 + 0.4 / std::sqrt(0.75)));
}

TEST_CASE("The importer keeps the spans the busy union clipped; the plan windows a collective with the compute it overlapped",
          "[engine][stream-overlap]") {
  Workload wl = two_ranks(true);
  Rank& r = wl.ranks[0];
  REQUIRE(r.kernels.size() == 3);
  REQUIRE(r.clipped.size() == 1);
  CHECK(r.clipped[0].kernel == 1);
  CHECK(r.clipped[0].start_s == Approx(100e-6));
  CHECK(r.clipped[0].duration_s == Approx(1000e-6));
  CHECK(r.kernels[1].duration_s == 0);  // the busy union: the all-reduce ended under GEMM A
  const GpuModel m = load_gpu_model("h200");
  const ContentionModel cm = load_contention_model(contention_model_path("h200"));
  const std::vector<OverlapWindow> w = plan_stream_overlap(r, cm, m);
  REQUIRE(w.size() == 1);
  CHECK(w[0].first == 0);
  CHECK(w[0].collective == 1);
  CHECK(w[0].last == 1);  // GEMM B started after the all-reduce ended
  CHECK(w[0].offset_s == Approx(100e-6));
  CHECK(w[0].compute_rate < 1);
  CHECK(w[0].compute_rate > 0.5);
  // GEMM A's alone time: the 1 ms beside the recorded all-reduce did compute_rate of its work.
  CHECK(r.kernels[0].duration_s == Approx(1000e-6 + 1000e-6 * w[0].compute_rate));
  CHECK(r.kernels[1].duration_s == Approx(1000e-6));
  CHECK(plan_stream_overlap(wl.ranks[1], cm, m).size() == 1);
  Workload single = two_ranks(false);
  CHECK(single.ranks[0].clipped.empty());
  CHECK(plan_stream_overlap(single.ranks[0], cm, m).empty());
}

TEST_CASE("An all-reduce beside a GEMM: shorter than the busy union, longer than the compute alone", "[engine][stream-overlap]") {
  const Workload wl = two_ranks(true);
  const Totals overlap = replay(wl, StreamOverlap::contention);
  const Totals busy = replay(wl, StreamOverlap::busy_union);
  // The compute alone: GEMM A at its alone duration (the millisecond beside the recorded all-reduce ran at the
  // contention model's rate), GEMM B.
  Rank planned = wl.ranks[0];
  const double rate = plan_stream_overlap(planned, load_contention_model(contention_model_path("h200")), load_gpu_model("h200"))
                          .at(0).compute_rate;
  const Totals alone = replay(two_ranks(false, 1000 + 1000 * rate), StreamOverlap::contention);
  // The busy union runs the whole all-reduce after GEMM A (as recorded, 2 ms) and before GEMM B.
  const Totals recorded = replay(two_ranks(false), StreamOverlap::contention);
  const double collective_s = busy.seconds - recorded.seconds;
  INFO("overlap " << overlap.seconds << " s " << overlap.energy_j << " J, busy union " << busy.seconds << " s " << busy.energy_j
                  << " J, compute alone " << alone.seconds << " s " << alone.energy_j << " J, all-reduce " << collective_s << " s");
  CHECK(collective_s > 1e-3);
  CHECK(overlap.seconds < busy.seconds);
  CHECK(overlap.seconds > alone.seconds);
  // Beside it: the all-reduce from 0.1 ms in, or GEMM A slowed while it runs, whichever ends later; then GEMM B.
  CHECK(overlap.seconds >= 0.1e-3 + collective_s + 1e-3 - 1e-9);
  CHECK(overlap.seconds <= alone.seconds + collective_s + 1e-9);
  // Energies: the same compute work in each; the all-reduce adds its own; beside, the static power is paid for less
  // time than in the busy union.
  CHECK(overlap.energy_j > alone.energy_j);
  CHECK(busy.energy_j > overlap.energy_j);
  // The pair is held at the power limit (700 W, x1.01 the contention model's settling factor) or, where the GEMM alone
  // already drew more (the max policy runs no firmware loop), at the GEMM's power: never above both.
  CHECK(overlap.energy_j / overlap.seconds <= std::max(700 * 1.01 * 2, alone.energy_j / alone.seconds) * (1 + 1e-9));
  // Event by event, the same replay.
  const Totals event = replay(wl, StreamOverlap::contention, EngineMode::event);
  CHECK(event.seconds == Approx(overlap.seconds).epsilon(1e-12));
  CHECK(event.energy_j == Approx(overlap.energy_j).epsilon(1e-12));
  // The option switches back: busy-union gives the serial replay again; a trace without overlaps gives the same in both.
  CHECK(replay(wl, StreamOverlap::busy_union).seconds == Approx(busy.seconds).epsilon(1e-12));
  const Totals alone_busy = replay(two_ranks(false), StreamOverlap::busy_union);
  CHECK(alone_busy.seconds == Approx(recorded.seconds).epsilon(1e-12));
  CHECK(alone_busy.energy_j == Approx(recorded.energy_j).epsilon(1e-12));
}

TEST_CASE("stream_overlap names", "[engine][stream-overlap]") {
  StreamOverlap s = StreamOverlap::busy_union;
  REQUIRE(stream_overlap_from_string("contention", s));
  CHECK(s == StreamOverlap::contention);
  REQUIRE(stream_overlap_from_string("busy-union", s));
  CHECK(s == StreamOverlap::busy_union);
  CHECK_FALSE(stream_overlap_from_string("busy_union", s));
  CHECK(std::string(to_string(StreamOverlap::busy_union)) == "busy-union");
}
