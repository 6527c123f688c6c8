// Engine invariants as property tests (issue 17): over generated workloads -- random kernel sequences
// (classes, durations, host gaps, recorded clocks from the model's table, some with work rates for the
// activity power model), split into steps that tile the run -- on several GPU models, policies, engine
// modes and repeat counts, with a fixed seed:
//  - per-step times and energies partition the run's totals (and so do classes + host gaps + switches);
//  - power never drops below the GPU's idle power while it is powered (timeline bins, steps, kernels);
//  - energy is the integral of power over the timeline (the meter's bins and timeline.csv's columns);
//  - identical inputs give identical result files (summary.json, timeline.csv), byte for byte.
#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/policies/registry.hpp"
#include "sim/results/summary.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/simulation/simulation.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace dvfs;

namespace {

struct Case {
  std::string model;
  PolicySpec policy;
  ReplayOptions replay;
  EngineMode mode = EngineMode::local_loop;
  Workload workload;
  std::string describe() const {
    std::ostringstream os;
    os << model << " / " << policy.name << (policy.clocks ? " " + std::to_string(policy.clocks->sm_mhz) : std::string())
       << " / " << (mode == EngineMode::event ? "event" : "local-loop") << " / repeat " << replay.repeat << " / "
       << workload.ranks[0].kernels.size() << " kernels, " << workload.ranks[0].steps.size() << " steps";
    return os.str();
  }
};

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

double uniform(std::mt19937_64& rng, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
bool chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }

Kernel random_kernel(std::mt19937_64& rng, const GpuModel& m) {
  Kernel k;
  k.cls = static_cast<KernelClass>(std::uniform_int_distribution<int>(0, kKernelClassCount - 1)(rng));
  k.kind = k.cls == KernelClass::copy && chance(rng, 0.5) ? ActivityKind::memcpy : ActivityKind::kernel;
  k.duration_s = std::exp(uniform(rng, std::log(2e-6), std::log(5e-3)));  // 2 us .. 5 ms, log-uniform
  const double g = uniform(rng, 0, 1);
  k.gap_before_s = g < 0.3 ? 0.0 : g < 0.95 ? uniform(rng, 0, 2e-3) : uniform(rng, 5e-3, 40e-3);
  k.recorded_sm_mhz = static_cast<float>(pick(rng, m.sm_clocks_mhz()));
  k.recorded_mem_mhz = static_cast<float>(pick(rng, m.mem_clocks_mhz()));
  k.sm_fill = chance(rng, 0.8) ? 1.0f : static_cast<float>(uniform(rng, 0.05, 1.0));
  if (chance(rng, 0.3)) {  // work rates: the activity power model prices these where the model has it
    k.work = k.kind == ActivityKind::memcpy ? WorkSource::copy_engine : WorkSource::shapes;
    k.tensor_precision = static_cast<TensorPrecision>(std::uniform_int_distribution<int>(0, kTensorPrecisionCount - 1)(rng));
    k.tensor_tflops = k.tensor_precision == TensorPrecision::none ? 0.0f : static_cast<float>(uniform(rng, 0, 800));
    k.fma_tflops = static_cast<float>(uniform(rng, 0, 30));
    k.alu_tops = static_cast<float>(uniform(rng, 0, 20));
    k.memory_tbps = static_cast<float>(uniform(rng, 0, 4));
  }
  return k;
}

// Kernels split into steps whose leads and tails take up every host gap between them, so the steps
// tile the replay from t = 0 to its end.
Workload random_workload(std::mt19937_64& rng, const GpuModel& m) {
  Workload wl;
  wl.source = "generated";
  wl.names = {"k"};
  Rank r;
  r.device_name = m.display_name();
  const int n = std::uniform_int_distribution<int>(1, 60)(rng);
  for (int i = 0; i < n; ++i) r.kernels.push_back(random_kernel(rng, m));
  const int nsteps = std::uniform_int_distribution<int>(1, std::min(n, 5))(rng);
  std::vector<int> firsts = {0};
  while (static_cast<int>(firsts.size()) < nsteps) {
    const int f = std::uniform_int_distribution<int>(1, n - 1)(rng);
    if (std::find(firsts.begin(), firsts.end(), f) == firsts.end()) firsts.push_back(f);
  }
  std::sort(firsts.begin(), firsts.end());
  double t = 0;
  for (int s = 0; s < nsteps; ++s) {
    Step st;
    st.label = "step" + std::to_string(s);
    st.first_kernel = firsts[s];
    st.last_kernel = s + 1 < nsteps ? firsts[s + 1] - 1 : n - 1;
    const double gap = r.kernels[st.first_kernel].gap_before_s;
    if (s == 0) {
      st.lead_s = gap;
    } else {  // the gap is the previous step's tail, then this step's lead
      const double tail = uniform(rng, 0, 1) * gap;
      r.steps.back().tail_s = tail;
      st.lead_s = gap - tail;
    }
    for (int i = st.first_kernel; i <= st.last_kernel; ++i) r.kernels[i].step = s;
    r.steps.push_back(st);
  }
  r.steps.back().tail_s = chance(rng, 0.5) ? uniform(rng, 0, 1e-3) : 0.0;
  for (const Kernel& k : r.kernels) {
    t += k.gap_before_s;
    r.recorded_start_s.push_back(t);
    t += k.duration_s;
  }
  wl.ranks.push_back(std::move(r));
  return wl;
}

PolicySpec random_policy(std::mt19937_64& rng, const GpuModel& m) {
  std::vector<std::string> names = policy_registry().names(PolicyKind::online);
  for (const std::string& p : policy_registry().names(PolicyKind::planned)) names.push_back(p);
  PolicySpec spec;
  spec.name = pick(rng, names);
  const PolicyEntry& e = policy_registry().at(spec.name, "test", "policy");
  if (e.accepts("sm_mhz")) spec.clocks = ClockPair{pick(rng, m.sm_clocks_mhz()), m.max_mem_mhz()};
  if (e.accepts("power_cap_w") && chance(rng, 0.5)) spec.power_cap_w = uniform(rng, 0.5, 1.0) * m.power_cap_w();
  if (e.accepts("budget_pct")) spec.budget_pct = pick(rng, std::vector<double>{0, 5, 10, 25});
  return spec;
}

std::vector<Case> generated_cases(std::size_t count) {
  std::mt19937_64 rng(17);  // fixed: the same cases on every run
  const std::vector<std::string> models = {"h200", "a100-sxm4", "rtx-3080-ti", "b200-like", "a40"};
  std::vector<Case> cases;
  for (std::size_t i = 0; i < count; ++i) {
    Case c;
    c.model = models[i % models.size()];
    const GpuModel m = load_gpu_model(c.model);
    c.policy = random_policy(rng, m);
    c.replay.repeat = chance(rng, 0.25) ? 2 : 1;
    c.replay.timeline_interval_s = pick(rng, std::vector<double>{1e-3, 2.5e-3, 1e-2});
    c.replay.seed = rng();
    if (chance(rng, 0.3)) c.replay.firmware_latency_s = uniform(rng, 0, 2e-3);
    c.mode = chance(rng, 0.3) ? EngineMode::event : EngineMode::local_loop;
    c.workload = random_workload(rng, m);
    cases.push_back(std::move(c));
  }
  return cases;
}

SimulationResult run_case(const Case& c, const GpuModel& m) {
  Scenario sc;
  sc.name = "property";
  sc.gpu = c.model;
  sc.policy = c.policy;
  sc.replay = c.replay;
  sc.mode = c.mode;
  LoadedTrace trace;
  trace.workload = c.workload;
  trace.report.schema = "generated";
  return simulate(sc, trace, m);
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

double lowest_idle_w(const GpuModel& m) {
  double lo = m.idle_power_w(0);
  for (std::size_t i = 0; i < m.sm_clocks_mhz().size(); ++i) lo = std::min(lo, m.idle_power_w(static_cast<int>(i)));
  return lo;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = generated_cases(40);
  return c;
}

}  // namespace

TEST_CASE("engine invariants: steps, classes and host gaps partition the run's time and energy", "[sim][property]") {
  for (const Case& c : cases()) {
    INFO(c.describe());
    const GpuModel m = load_gpu_model(c.model);
    const SimulationResult r = run_case(c, m);
    REQUIRE(r.outcomes.size() == 1);
    const RankOutcome& o = r.outcomes[0];
    const EnergyMeter& meter = o.meter;
    const double end = o.stats.end_s, total = meter.total_j();
    REQUIRE(end > 0);
    REQUIRE(meter.steps().size() == c.workload.ranks[0].steps.size() * static_cast<std::size_t>(c.replay.repeat));

    double step_t = 0, step_j = 0, step_busy = 0, prev_end = 0;
    std::uint64_t step_kernels = 0;
    for (const StepTotals& st : meter.steps()) {
      CHECK(st.start_s == Approx(prev_end).margin(1e-12));  // steps follow one another without a hole
      CHECK(st.end_s >= st.start_s);
      prev_end = st.end_s;
      step_t += st.end_s - st.start_s;
      step_j += st.energy_j;
      step_busy += st.busy_s;
      step_kernels += st.kernels;
    }
    CHECK(prev_end == Approx(end).epsilon(1e-12).margin(1e-12));
    CHECK(step_t == Approx(end).epsilon(1e-9));
    CHECK(step_j == Approx(total).epsilon(1e-9));
    CHECK(step_busy == Approx(meter.busy_s()).epsilon(1e-9).margin(1e-15));
    CHECK(step_kernels == o.stats.kernel_events);

    double class_j = 0, class_s = 0, residency = 0;
    for (double e : meter.class_j()) class_j += e;
    for (double s : meter.class_s()) class_s += s;
    for (double s : meter.sm_residency_s()) residency += s;
    CHECK(class_j + meter.gap_j() + meter.switch_j() == Approx(total).epsilon(1e-9));
    CHECK(class_s + meter.gap_s() == Approx(end).epsilon(1e-9));
    CHECK(class_s == Approx(meter.busy_s()).epsilon(1e-9).margin(1e-15));
    CHECK(residency == Approx(end).epsilon(1e-9));

    // summary.json says the same (its figures are rounded to 1e-9)
    const Json& s = r.summary;
    double summary_step_j = 0, summary_step_t = 0;
    for (const Json& st : s["steps"]) {
      summary_step_j += st["energy_j"].get<double>();
      summary_step_t += st["time_s"].get<double>();
    }
    const double rounding = 1e-9 * static_cast<double>(s["steps"].size() + 1);
    CHECK(summary_step_j == Approx(s["totals"]["energy_j"].get<double>()).epsilon(1e-9).margin(rounding));
    CHECK(summary_step_t == Approx(s["totals"]["time_s"].get<double>()).epsilon(1e-9).margin(rounding));
  }
}

TEST_CASE("engine invariants: power never drops below idle while the GPU is powered", "[sim][property]") {
  for (const Case& c : cases()) {
    INFO(c.describe());
    const GpuModel m = load_gpu_model(c.model);
    const double idle = lowest_idle_w(m);
    // every generated kernel, at every clock pair of the table, draws at least the idle power of its SM clock
    for (const Kernel& k : c.workload.ranks[0].kernels)
      for (std::size_t f = 0; f < m.sm_clocks_mhz().size(); ++f)
        for (std::size_t mem = 0; mem < m.mem_clocks_mhz().size(); ++mem)
          REQUIRE(m.kernel_power_w(k, static_cast<int>(f), static_cast<int>(mem)) >= m.idle_power_w(static_cast<int>(f)));

    const SimulationResult r = run_case(c, m);
    const RankOutcome& o = r.outcomes[0];
    const double tol = 1e-9 * idle;
    for (const StepTotals& st : o.meter.steps())
      if (st.end_s > st.start_s) CHECK(st.energy_j / (st.end_s - st.start_s) >= idle - tol);
    const TimelineColumns tl = timeline_columns(r.outcomes);
    REQUIRE(!tl.power_w.empty());
    for (std::size_t i = 0; i < tl.power_w.size(); ++i) {
      INFO("timeline interval " << i << " at " << tl.t_s[i] << " s");
      CHECK(tl.power_w[i] >= idle - tol);
    }
  }
}

TEST_CASE("engine invariants: energy is the integral of power over the timeline", "[sim][property]") {
  for (const Case& c : cases()) {
    INFO(c.describe());
    const GpuModel m = load_gpu_model(c.model);
    const SimulationResult r = run_case(c, m);
    const RankOutcome& o = r.outcomes[0];
    const double total = o.meter.total_j(), end = o.stats.end_s, dt = c.replay.timeline_interval_s;

    double bins_j = 0;
    for (const TimelinePoint& p : o.meter.timeline()) bins_j += p.energy_j;
    CHECK(bins_j == Approx(total).epsilon(1e-9));

    // timeline.csv's columns: mean power per interval (the last one partial) and cumulative energy
    const TimelineColumns tl = timeline_columns(r.outcomes);
    REQUIRE(tl.t_s.size() == static_cast<std::size_t>(std::ceil(end / dt - 1e-9)));
    double integral = 0;
    for (std::size_t i = 0; i < tl.power_w.size(); ++i) {
      const double width = std::min(dt, end - static_cast<double>(i) * dt);
      integral += tl.power_w[i] * width;
      CHECK(tl.energy_j[i] == Approx(integral).epsilon(1e-6));
    }
    CHECK(integral == Approx(total).epsilon(1e-6));
    CHECK(r.summary["totals"]["energy_j"].get<double>() == Approx(total).epsilon(1e-9).margin(1e-9));
  }
}

TEST_CASE("engine invariants: identical inputs give byte-identical summary.json and timeline.csv", "[sim][property]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(dvfs::testing::scratch_path("dvfs-property"));
  for (std::size_t i = 0; i < cases().size(); i += 2) {  // every other case: two replays each
    const Case& c = cases()[i];
    INFO(c.describe());
    const GpuModel m = load_gpu_model(c.model);
    write_results(run_case(c, m), (dir / "a").string());
    write_results(run_case(c, m), (dir / "b").string());
    const std::string a = file_bytes((dir / "a" / "summary.json").string());
    REQUIRE(!a.empty());
    CHECK(a == file_bytes((dir / "b" / "summary.json").string()));
    CHECK(file_bytes((dir / "a" / "timeline.csv").string()) == file_bytes((dir / "b" / "timeline.csv").string()));
  }
  fs::remove_all(dir);
}

TEST_CASE("engine invariants: local-loop and event modes agree on ranks joined by a collective", "[sim][property]") {
  const GpuModel m = load_gpu_model("h200");
  Workload wl;
  wl.source = "generated";
  wl.names = {"k"};
  wl.groups = {{0, 1}};
  wl.group_names = {"dp"};
  wl.group_sizes = {2};
  wl.collectives = {CollectiveCall{CollectiveKind::all_reduce, 256e6, 0, -1}};
  for (int id = 0; id < 2; ++id) {
    Rank r;
    r.id = id;
    for (int i = 0; i < 3; ++i) {
      Kernel k;
      k.cls = i == 1 ? KernelClass::communication : KernelClass::gemm;
      k.duration_s = (id + 1) * 1e-3;
      k.gap_before_s = 1e-4;
      k.recorded_sm_mhz = 1980;
      k.recorded_mem_mhz = 3201;
      k.collective = i == 1 ? 1 : 0;
      r.kernels.push_back(k);
    }
    r.recorded_start_s = {0, 0, 0};
    wl.ranks.push_back(std::move(r));
  }
  auto end_of = [&](EngineMode mode) {
    Case c;
    c.model = "h200";
    c.policy = PolicySpec{"max", {}, 0};
    c.mode = mode;
    c.workload = wl;
    const std::vector<RankOutcome> out = run_case(c, m).outcomes;
    return std::vector<double>{out[0].stats.end_s, out[1].stats.end_s, out[0].meter.total_j(), out[1].meter.total_j()};
  };
  const std::vector<double> local = end_of(EngineMode::local_loop), event = end_of(EngineMode::event);
  for (std::size_t i = 0; i < local.size(); ++i) CHECK(event[i] == Approx(local[i]).epsilon(1e-9));
}
