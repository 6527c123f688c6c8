// Driver (NVML) switch latency in the replay: per-domain draws, seeds, target-clock scaling and
// transition energy.
#include "replay_fixtures.hpp"
#include "sim/core/errors.hpp"
#include "sim/results/summary.hpp"

#include <catch2/catch.hpp>

#include <numeric>

using namespace dvfs;
using namespace dvfs::testing;

namespace {

// An NVML policy that asks for targets[i % n] before the i-th kernel.
class ScriptedPolicy : public Policy {
 public:
  ScriptedPolicy(ClockPair initial, std::vector<ClockPair> targets) : initial_(initial), targets_(std::move(targets)) {}
  std::string name() const override { return "scripted"; }
  ClockPair initial_clocks() const override { return initial_; }
  bool wants_kernel_events() const override { return true; }
  std::optional<ClockPair> before_kernel(const Kernel&, const GpuTelemetry&) override {
    return targets_[next_++ % targets_.size()];
  }

 private:
  ClockPair initial_;
  std::vector<ClockPair> targets_;
  std::size_t next_ = 0;
};

const ClockPair kTop{1980, 3201}, kLow{990, 3201}, kLowMem{1980, 2201}, kBothLow{990, 2201};

std::vector<RankOutcome> run_scripted(const Workload& wl, const GpuModel& m, std::vector<ClockPair> targets,
                                      const ReplayOptions& opts, EngineMode mode = EngineMode::local_loop) {
  PolicyFactory f = [targets](int) { return std::make_unique<ScriptedPolicy>(kTop, targets); };
  return run_engine(wl, m, f, opts, mode);
}

// n kernels of `dur_s` each, back to back.
Workload kernels(int n, double dur_s) {
  std::vector<Kernel> ks;
  for (int i = 0; i < n; ++i) ks.push_back(make_kernel(KernelClass::gemm, dur_s, 0));
  return one_step_workload(ks);
}

ReplayOptions sm_latency(double mean_s, double spread_s, double energy_j = 0) {
  ReplayOptions o;
  o.sm_latency.mean_s = mean_s;
  o.sm_latency.spread_s = spread_s;
  o.sm_latency.energy_j = energy_j;
  return o;
}

double timeline_j(const EnergyMeter& m) {
  double e = 0;
  for (const auto& p : m.timeline()) e += p.energy_j;
  return e;
}

}  // namespace

TEST_CASE("spread 0: an NVML switch takes exactly the model's mean latency", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = kernels(1, 0.2);
  // The shipped h200 latency, then a scenario override, both deterministic.
  for (double mean : {m.switch_latency().sm.mean_s, 0.03}) {
    INFO(mean);
    ReplayOptions o;
    if (mean != m.switch_latency().sm.mean_s) o = sm_latency(mean, 0);
    auto out = run_scripted(wl, m, {kLow}, o);
    CHECK(out[0].stats.clock_switches == 1);
    CHECK(out[0].stats.switches_applied == 1);
    CHECK(out[0].stats.switch_latency_s == mean);
    // The kernel ran at the old clock until the switch took effect.
    CHECK(out[0].meter.sm_residency_s()[m.sm_index(1980)] == Approx(mean).epsilon(1e-12));
  }
}

TEST_CASE("the same seed gives an identical replay, another seed other latencies", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = kernels(40, 0.2);
  const std::vector<ClockPair> toggle = {kLow, kTop};
  ReplayOptions a = sm_latency(0.05, 0.02, 0.3);
  a.seed = 7;
  ReplayOptions b = a;
  ReplayOptions c = a;
  c.seed = 8;
  auto ra = run_scripted(wl, m, toggle, a);
  auto rb = run_scripted(wl, m, toggle, b);
  auto rc = run_scripted(wl, m, toggle, c);
  CHECK(ra[0].stats.end_s == rb[0].stats.end_s);
  CHECK(ra[0].stats.switch_latency_s == rb[0].stats.switch_latency_s);
  CHECK(ra[0].meter.total_j() == rb[0].meter.total_j());
  CHECK(ra[0].meter.sm_residency_s() == rb[0].meter.sm_residency_s());
  REQUIRE(ra[0].meter.timeline().size() == rb[0].meter.timeline().size());
  for (std::size_t i = 0; i < ra[0].meter.timeline().size(); ++i)
    CHECK(ra[0].meter.timeline()[i].energy_j == rb[0].meter.timeline()[i].energy_j);

  CHECK(ra[0].stats.clock_switches == 40);
  CHECK(rc[0].stats.clock_switches == 40);
  CHECK(ra[0].stats.switch_latency_s != rc[0].stats.switch_latency_s);
  CHECK(ra[0].stats.end_s != rc[0].stats.end_s);
  // Random, not the mean every time; about the mean on average.
  CHECK(ra[0].stats.switch_latency_s != Approx(40 * 0.05).epsilon(1e-9));
  CHECK(ra[0].stats.switch_latency_s == Approx(40 * 0.05).epsilon(0.25));
}

TEST_CASE("GPUs of one scenario draw different latencies from their own streams", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = kernels(10, 0.2);
  Rank second = wl.ranks[0];
  second.id = 1;
  wl.ranks.push_back(second);
  auto out = run_scripted(wl, m, {kLow, kTop}, sm_latency(0.05, 0.02));
  REQUIRE(out.size() == 2);
  CHECK(out[0].stats.clock_switches == out[1].stats.clock_switches);
  CHECK(out[0].stats.switch_latency_s != out[1].stats.switch_latency_s);
}

TEST_CASE("target scaling multiplies the latency by the factor at the target clock", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = kernels(10, 0.5);
  ReplayOptions o = sm_latency(0.05, 0);
  o.sm_latency.target_scaling = TargetScaling{{990, 2.0}, {1980, 1.0}};
  auto out = run_scripted(wl, m, {kLow, kTop}, o);
  CHECK(out[0].stats.clock_switches == 10);
  CHECK(out[0].stats.switch_latency_s == Approx(5 * 0.1 + 5 * 0.05).epsilon(1e-12));
  // Interpolated target: 1485 MHz lies halfway, multiplier 1.5.
  auto mid = run_scripted(kernels(1, 0.5), m, {ClockPair{1485, 3201}}, o);
  CHECK(mid[0].stats.switch_latency_s == Approx(0.075).epsilon(1e-12));
  // With a spread the factor scales the whole distribution: the mean moves with it.
  ReplayOptions r = sm_latency(0.01, 0.005);
  r.sm_latency.target_scaling = TargetScaling{{1000, 3.0}};
  auto many = run_scripted(kernels(2000, 0.2), m, {kLow, kTop}, r);
  CHECK(many[0].stats.switch_latency_s / 2000 == Approx(0.03).epsilon(0.05));
}

TEST_CASE("memory clock changes draw the memory latency, and both domains take the larger", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = kernels(1, 0.5);
  ReplayOptions o = sm_latency(0.05, 0);
  o.mem_latency.mean_s = 0.02;
  o.mem_latency.spread_s = 0.0;
  CHECK(run_scripted(wl, m, {kLowMem}, o)[0].stats.switch_latency_s == 0.02);
  CHECK(run_scripted(wl, m, {kBothLow}, o)[0].stats.switch_latency_s == 0.05);
  o.mem_latency.mean_s = 0.08;
  CHECK(run_scripted(wl, m, {kBothLow}, o)[0].stats.switch_latency_s == 0.08);
}

TEST_CASE("transition energy adds exactly switches applied times energy_j to the total", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = kernels(12, 0.2);
  const std::vector<ClockPair> toggle = {kLow, kTop};
  for (double spread : {0.0, 0.02}) {
    INFO("spread " << spread);
    ReplayOptions without = sm_latency(0.05, spread, 0.0);
    ReplayOptions with = sm_latency(0.05, spread, 0.75);
    auto a = run_scripted(wl, m, toggle, without);
    auto b = run_scripted(wl, m, toggle, with);
    REQUIRE(b[0].stats.switches_applied == 12);
    CHECK(a[0].stats.end_s == b[0].stats.end_s);  // energy only, no time
    CHECK(b[0].stats.switch_energy_j == Approx(12 * 0.75).epsilon(1e-12));
    CHECK(b[0].meter.switch_j() == Approx(12 * 0.75).epsilon(1e-12));
    CHECK(b[0].meter.total_j() - a[0].meter.total_j() == Approx(12 * 0.75).epsilon(1e-9));
    CHECK(b[0].meter.steps()[0].energy_j - a[0].meter.steps()[0].energy_j == Approx(12 * 0.75).epsilon(1e-9));
    CHECK(timeline_j(b[0].meter) == Approx(b[0].meter.total_j()).epsilon(1e-12));
    // Not in any kernel class, annotation set or host gap.
    CHECK(std::accumulate(b[0].meter.class_j().begin(), b[0].meter.class_j().end(), 0.0) ==
          Approx(std::accumulate(a[0].meter.class_j().begin(), a[0].meter.class_j().end(), 0.0)).epsilon(1e-12));
    CHECK(b[0].meter.gap_j() == a[0].meter.gap_j());
  }
  // A switch of both domains charges both energies.
  ReplayOptions both = sm_latency(0.05, 0, 0.5);
  both.mem_latency.energy_j = 0.25;
  auto c = run_scripted(kernels(1, 0.2), m, {kBothLow}, both);
  CHECK(c[0].stats.switch_energy_j == 0.75);
}

TEST_CASE("a superseded switch and a firmware switch charge no transition energy", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  // 990 is asked for, then 1980 again 1 ms later, long before the 50 ms switch lands: the 990 target
  // never takes effect and the request back to 1980 changes nothing, so nothing is charged.
  Workload back = one_step_workload({make_kernel(KernelClass::gemm, 1e-3, 0), make_kernel(KernelClass::gemm, 0.3, 0)});
  auto none = run_scripted(back, m, {kLow, kTop}, sm_latency(0.05, 0, 1.0));
  CHECK(none[0].stats.clock_switches == 2);
  CHECK(none[0].stats.switches_applied == 0);
  CHECK(none[0].stats.switch_energy_j == 0);
  CHECK(none[0].meter.switch_j() == 0);
  CHECK(none[0].meter.sm_residency_s()[m.sm_index(1980)] == Approx(none[0].stats.end_s));
  // Three requests in quick succession: only the last one lands and is charged.
  Workload wl = one_step_workload({make_kernel(KernelClass::gemm, 1e-3, 0), make_kernel(KernelClass::gemm, 1e-3, 0),
                                   make_kernel(KernelClass::gemm, 0.3, 0)});
  auto out = run_scripted(wl, m, {kLow, kTop, kLow}, sm_latency(0.05, 0, 1.0));
  CHECK(out[0].stats.clock_switches == 3);
  CHECK(out[0].stats.switches_applied == 1);
  CHECK(out[0].stats.switch_energy_j == 1.0);
  CHECK(out[0].stats.switch_latency_s == Approx(0.15).epsilon(1e-12));  // every request counts its latency

  // The recorded-clock policy switches through the firmware: no transition energy.
  Workload rec = one_step_workload({make_kernel(KernelClass::gemm, 1e-3, 0, 1980), make_kernel(KernelClass::gemm, 1e-3, 0, 990)});
  ReplayOptions o = sm_latency(0.05, 0, 1.0);
  auto r = replay(rec, m, PolicySpec{"recorded", {}, 0}, o);
  CHECK(r[0].stats.clock_switches == 1);
  CHECK(r[0].stats.switch_energy_j == 0);
  CHECK(r[0].stats.switch_latency_s == m.switch_latency().firmware_s);
}

TEST_CASE("local-loop and event modes agree with random latencies and transition energy", "[sim][latency][engine]") {
  GpuModel m = load_gpu_model("h200");
  std::vector<Kernel> ks;
  for (int i = 0; i < 200; ++i) ks.push_back(make_kernel(i % 3 ? KernelClass::elementwise : KernelClass::gemm, 2e-3 + 1e-4 * (i % 7), 1e-3));
  Workload wl = one_step_workload(ks);
  ReplayOptions o = sm_latency(0.004, 0.003, 0.2);
  o.mem_latency.mean_s = 0.002;
  o.mem_latency.spread_s = 0.002;
  o.seed = 42;
  const std::vector<ClockPair> script = {kLow, kTop, kBothLow, kLowMem, kTop, ClockPair{1485, 3201}};
  auto local = run_scripted(wl, m, script, o, EngineMode::local_loop);
  auto event = run_scripted(wl, m, script, o, EngineMode::event);
  CHECK(local[0].stats.clock_switches == event[0].stats.clock_switches);
  CHECK(local[0].stats.switches_applied == event[0].stats.switches_applied);
  CHECK(local[0].stats.switch_latency_s == event[0].stats.switch_latency_s);
  CHECK(local[0].stats.switch_energy_j == event[0].stats.switch_energy_j);
  CHECK(local[0].stats.switches_applied > 0);
  CHECK(local[0].stats.switches_applied < local[0].stats.clock_switches);  // some were superseded
  CHECK(event[0].stats.end_s == Approx(local[0].stats.end_s).epsilon(1e-9));  // SimGrid's clock: rounding only
  CHECK(event[0].meter.total_j() == Approx(local[0].meter.total_j()).epsilon(1e-9));
}

TEST_CASE("the summary reports switch latency and transition energy per GPU and in total", "[sim][latency]") {
  GpuModel m = load_gpu_model("h200");
  Workload wl = kernels(6, 0.2);
  Scenario sc;
  sc.name = "latency";
  sc.replay = sm_latency(0.05, 0.01, 0.5);
  sc.replay.seed = 3;
  auto out = run_scripted(wl, m, {kLow, kTop}, sc.replay);
  Json s = build_summary(sc, wl, ImportReport{}, m, out);
  CHECK(s["seed"] == 3);
  CHECK(s["totals"]["clock_switches"] == 6);
  CHECK(s["totals"]["switch_energy_j"].get<double>() == Approx(3.0));
  CHECK(s["per_gpu"][0]["switch_energy_j"].get<double>() == Approx(3.0));
  CHECK(s["per_gpu"][0]["switch_latency_s"].get<double>() == Approx(out[0].stats.switch_latency_s).margin(1e-9));
  CHECK(s["totals"]["switch_latency_s"].get<double>() == Approx(out[0].stats.switch_latency_s).margin(1e-9));
  // Energy stays fully attributed: phases + host gaps + switches = total.
  double phases = 0;
  for (auto& [k, v] : s["energy_by_phase_j"].items()) phases += v.get<double>();
  CHECK(s["energy_by_phase_j"]["clock_switches"].get<double>() == Approx(3.0));
  CHECK(phases == Approx(s["totals"]["energy_j"].get<double>()).epsilon(1e-9));
  CHECK(format_report(s).find("3.000 J of transition energy") != std::string::npos);
}
