#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/kareus/kareus.hpp"
#include "sim/simulation/kareus_study.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/synthetic_run.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>

using namespace dvfs;

namespace {

SyntheticRun small_tp_run(const std::string& gpu = "h200") {
  SyntheticRun r;
  r.model = "gpt3-xl";
  r.layout = {2, 2, 1};  // TP 2 x PP 2: TP all-reduces in every layer
  r.microbatches = 4;
  r.gpu = gpu;
  r.cluster = default_cluster_spec();
  return r;
}

double collective_time(const KernelPipeline& kp) {
  double t = 0;
  for (const Rank& s : kp.stages)
    for (const Kernel& k : s.kernels) t += k.collective ? k.duration_s : 0.0;
  return t;
}

double compute_time(const KernelPipeline& kp) {
  double t = 0;
  for (const Rank& s : kp.stages)
    for (const Kernel& k : s.kernels) t += k.collective ? 0.0 : k.duration_s;
  return t;
}

ContentionModel shipped_contention() { return load_contention_model(data_dir() + "/models/contention/h200-streams.json"); }

}  // namespace

TEST_CASE("Kareus's identity setting leaves the pipeline as synthesised; overlap hides collective time behind longer compute",
          "[kareus]") {
  const SynthesizedJob job = synthesize_job(small_tp_run());
  const KareusKnobs knobs;
  const ContentionModel m = shipped_contention();
  const KernelPipeline same = kareus_program(job.kp, KareusSetting{}, knobs, m, job.bound, job.wl.names);
  CHECK(collective_time(same) == Approx(collective_time(job.kp)));
  CHECK(compute_time(same) == Approx(compute_time(job.kp)));
  REQUIRE(collective_time(job.kp) > 0);
  const KernelPipeline over = kareus_program(job.kp, KareusSetting{2, 20, 1.0}, knobs, m, job.bound, job.wl.names);
  CHECK(collective_time(over) < collective_time(job.kp));
  CHECK(compute_time(over) > compute_time(job.kp));  // nano-batch overhead and the SMs the collectives take
  // Without overlap, fewer SMs than saturate the collective only slow it.
  const KernelPipeline few = kareus_program(job.kp, KareusSetting{1, 4, 0.0}, knobs, m, job.bound, job.wl.names);
  CHECK(collective_time(few) == Approx(collective_time(job.kp) * knobs.comm_sms_saturating / 4));
}

TEST_CASE("Property: Kareus's frontier is never above Perseus's at equal iteration time, whatever the knobs and contention",
          "[kareus][property]") {
  const SynthesizedJob job = synthesize_job(small_tp_run());
  std::mt19937 rng(19);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 3; ++trial) {
    KareusKnobs knobs;
    knobs.nano_batches = {1 + static_cast<int>(u(rng) * 4)};
    knobs.comm_sms = {1 + static_cast<int>(u(rng) * 20)};
    knobs.overlap_windows = {u(rng)};
    knobs.nano_batch_overhead = 0.1 * u(rng);
    ContentionModel m = shipped_contention();
    m.overlap_gain = 0.3 * u(rng);
    const KareusFrontier kf = kareus_frontier(job.kp, job.wl.names, job.bound, job.opts, knobs, m);
    REQUIRE(kf.settings.front().identity());
    for (const auto& [t, e] : kf.frontiers.front().points) {
      INFO("trial " << trial << " time " << t);
      CHECK(energy_at_time(kf.envelope, t) <= e * (1 + 1e-12));
    }
  }
}

TEST_CASE("The kareus policy is in the registry as a pipeline policy and runs a synthetic scenario's iteration", "[kareus]") {
  const PolicyEntry* e = policy_registry().find("kareus");
  REQUIRE(e != nullptr);
  CHECK(e->kind == PolicyKind::pipeline);
  SyntheticRun r = small_tp_run();
  r.policy = "kareus";
  const Json out = run_synthetic(r);
  CHECK(out["critical_path"]["policy"] == "kareus");
  const Json& k = out["critical_path"]["kareus"];
  CHECK(k["kareus_energy_at_target_j"].get<double>() <= k["perseus_energy_at_target_j"].get<double>());
  CHECK(out["iteration_s"].get<double>() > 0);
}

TEST_CASE("Kareus study: at iso-time Kareus needs no more energy than Perseus, Perseus no more than both off", "[kareus]") {
  const Json s = kareus_study(small_tp_run());
  CHECK(s["iso_time"]["kareus_j"].get<double>() <= s["iso_time"]["perseus_j"].get<double>());
  CHECK(s["iso_time"]["perseus_j"].get<double>() <= s["both_off"]["energy_j"].get<double>() * (1 + 1e-9));
  CHECK(s["iso_energy"]["kareus_s"].get<double>() <= s["iso_energy"]["perseus_s"].get<double>() * (1 + 1e-9));
}

TEST_CASE("A bad Kareus knob file names the field", "[kareus]") {
  Json j = read_json_file(default_kareus_knobs_path());
  j["comm_sms"] = {0, 21};
  const std::string path = dvfs::testing::scratch_path("dvfs-test-kareus-knobs.json");
  std::ofstream(path) << j.dump();
  try {
    load_kareus_knobs(path);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(std::string(e.what()).find("comm_sms") != std::string::npos);
  }
}
