// A multi-rank job holds every GPU until its last rank ends: a GPU whose rank ended earlier idles until then, and
// that idle energy counts in the job's total (it did not: an 8-rank job reported a mean power below idle).
#include "../replay_fixtures.hpp"
#include "sim/results/summary.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using namespace dvfs::testing;
using Catch::Detail::Approx;

namespace {

// Rank 0 runs a 1 ms GEMM, rank 1 a 3 ms one; no collectives tie them.
Workload two_ranks_ending_apart() {
  Workload wl = one_step_workload({make_kernel(KernelClass::gemm, 1e-3, 0)});
  Rank second = wl.ranks[0];
  second.id = 1;
  second.kernels[0].duration_s = 3e-3;
  wl.ranks.push_back(second);
  return wl;
}

}  // namespace

TEST_CASE("a GPU whose rank ends early idles until the job's last rank ends, metered as waiting", "[sim][engine][job_end]") {
  const GpuModel m = load_gpu_model("h200");
  const Workload wl = two_ranks_ending_apart();
  for (EngineMode mode : {EngineMode::local_loop, EngineMode::event}) {
    INFO((mode == EngineMode::event ? "event" : "local loop"));
    auto out = replay(wl, m, PolicySpec{"max", {}, 0}, {}, mode);
    REQUIRE(out.size() == 2);
    // The rank's own end is unchanged; the wait comes after it.
    CHECK(out[0].stats.end_s == Approx(1e-3));
    CHECK(out[0].stats.waiting_s == Approx(2e-3));
    CHECK(out[0].stats.metered_end_s() == Approx(out[1].stats.end_s));
    CHECK(out[1].stats.waiting_s == 0);
    // At fixed maximum clocks the wait draws the model's idle power at those clocks.
    const double idle_w = m.idle_power_w(m.sm_index(m.max_sm_mhz()));
    CHECK(out[0].meter.waiting_s() == Approx(2e-3));
    CHECK(out[0].meter.waiting_j() == Approx(idle_w * 2e-3));
    CHECK(out[0].meter.gap_j() == 0);
    CHECK(out[1].meter.waiting_j() == 0);
    // Every joule is in exactly one bucket: activities (by class), host gaps, the wait, clock transitions.
    for (const RankOutcome& o : out) {
      double classes = 0;
      for (double e : o.meter.class_j()) classes += e;
      CHECK(classes + o.meter.gap_j() + o.meter.waiting_j() + o.meter.switch_j() == Approx(o.meter.total_j()).epsilon(1e-12));
    }
    // The timeline covers the wait: its energy is the meter's.
    double timeline_j = 0;
    for (const TimelinePoint& p : out[0].meter.timeline()) timeline_j += p.energy_j;
    CHECK(timeline_j == Approx(out[0].meter.total_j()).epsilon(1e-12));
  }
}

TEST_CASE("the job's mean power counts the early rank's wait, so it never falls below idle", "[sim][engine][job_end]") {
  const GpuModel m = load_gpu_model("h200");
  const Workload wl = two_ranks_ending_apart();
  auto out = replay(wl, m, PolicySpec{"max", {}, 0});
  Scenario sc;
  sc.name = "job-end";
  const Json s = build_summary(sc, wl, ImportReport{}, m, out);
  const Json& t = s["totals"];
  const double idle_w = m.idle_power_w(m.sm_index(m.max_sm_mhz()));
  CHECK(t["time_s"].get<double>() == Approx(3e-3));
  CHECK(t["waiting_for_job_end_s"].get<double>() == Approx(2e-3));
  CHECK(t["gpus_waiting_for_job_end"].get<int>() == 1);
  CHECK(t["mean_power_w"].get<double>() > idle_w);
  CHECK(t["energy_j"].get<double>() == Approx(out[0].meter.total_j() + out[1].meter.total_j()));
  double phases = 0;
  for (auto& [k, v] : s["energy_by_phase_j"].items()) phases += v.get<double>();
  CHECK(phases == Approx(t["energy_j"].get<double>()).epsilon(1e-6));
  CHECK(s["energy_by_phase_j"]["waiting_for_job_end"].get<double>() == Approx(idle_w * 2e-3).epsilon(1e-4));
  // Per GPU: its own end, its wait, and its mean power over both.
  const Json& g0 = s["per_gpu"][0];
  CHECK(g0["time_s"].get<double>() == Approx(1e-3));
  CHECK(g0["waiting_for_job_end_s"].get<double>() == Approx(2e-3));
  CHECK(g0["mean_power_w"].get<double>() == Approx(g0["energy_j"].get<double>() / 3e-3).epsilon(1e-4));
  // The report says so.
  const std::string text = format_report(s);
  CHECK(text.find("1 of 2 GPUs ended before the job's last rank") != std::string::npos);
}

TEST_CASE("under the native governor the wait keeps its ticks, repeats wait once at the end, and every joule is counted once",
          "[sim][engine][job_end]") {
  const GpuModel m = load_gpu_model("h200");
  const Workload wl = two_ranks_ending_apart();
  ReplayOptions opts;
  opts.repeat = 2;
  auto out = replay(wl, m, PolicySpec{"native", {}, 0}, opts);
  REQUIRE(out.size() == 2);
  CHECK(out[0].stats.end_s == Approx(2e-3).epsilon(0.05));  // two 1 ms GEMMs (clocks may move them a little)
  CHECK(out[0].stats.metered_end_s() == Approx(out[1].stats.end_s).epsilon(1e-12));
  CHECK(out[0].meter.waiting_s() == Approx(out[1].stats.end_s - out[0].stats.end_s).epsilon(1e-9));
  CHECK(out[0].meter.waiting_j() > 0);
  for (const RankOutcome& o : out) {
    double classes = 0;
    for (double e : o.meter.class_j()) classes += e;
    CHECK(classes + o.meter.gap_j() + o.meter.waiting_j() + o.meter.switch_j() == Approx(o.meter.total_j()).epsilon(1e-12));
    double steps = 0;
    for (const StepTotals& st : o.meter.steps()) steps += st.energy_j;
    CHECK(steps + o.meter.waiting_j() <= o.meter.total_j() * (1 + 1e-12));  // the wait is in no step
  }
}
