#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/validate/profile_check.hpp"
#include "sim/validate/stage_workloads.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>
#include <string>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

std::string profile_path(const std::string& name) { return data_dir() + "/traces/profiles/perseus/" + name; }
std::string workloads_path() { return data_dir() + "/traces/profiles/perseus/stage_workloads.json"; }

}  // namespace

TEST_CASE("the shipped stage workload describes every computation of both Perseus profiles", "[validate][retarget]") {
  for (const std::string w : {"gpt3-175b", "bloom"}) {
    const StageWorkload wl = load_stage_workload(workloads_path(), w);
    const StageProfile p = load_stage_profile(profile_path(w + "+a100_sxm_bf16.csv"));
    for (const auto& s : p.series) {
      REQUIRE(wl.count(s.stage) == 1);
      const ComputationWork work = computation_work(wl.at(s.stage), s.instruction);
      CHECK(work.flops > 0);
      CHECK(work.bytes > 0);
    }
  }
}

TEST_CASE("retargeting by work predicts the target from the source alone: scaling the target's rows only rescales the error",
          "[validate][retarget]") {
  const GpuModel from = load_gpu_model("a100-sxm4");
  const GpuModel to = GpuModel::load(data_dir() + "/models/calibration/a40.base.json");
  const StageProfile src = load_stage_profile(profile_path("bloom+a100_sxm_bf16.csv"));
  const StageWorkload wl = load_stage_workload(workloads_path(), "bloom");
  const double eta = fit_retarget_memory_efficiency(from, {{&src, &wl}});
  StageProfile target = load_stage_profile(profile_path("bloom+a40_bf16.csv"));
  const ProfileError e1 = check_retarget_by_work(from, src, wl, eta, to, target);
  for (auto& s : target.series)
    for (auto& p : s.points) p.time_s *= 2;
  const ProfileError e2 = check_retarget_by_work(from, src, wl, eta, to, target);
  REQUIRE(e1.series.size() == e2.series.size());
  for (std::size_t i = 0; i < e1.series.size(); ++i)  // prediction / measurement halves: same predictions
    CHECK(e2.series[i].time_bias == Approx((1 + e1.series[i].time_bias) / 2 - 1));
}

TEST_CASE("the A100 profiles' memory efficiency is a physical fraction only without activation recomputation",
          "[validate][retarget]") {
  // The documented reason stage_workloads.json says recompute: false (A100 rows only).
  const GpuModel from = load_gpu_model("a100-sxm4");
  const StageProfile g = load_stage_profile(profile_path("gpt3-175b+a100_sxm_bf16.csv"));
  const StageProfile b = load_stage_profile(profile_path("bloom+a100_sxm_bf16.csv"));
  for (int recompute : {0, 1}) {
    const StageWorkload gw = load_stage_workload(workloads_path(), "gpt3-175b", recompute);
    const StageWorkload bw = load_stage_workload(workloads_path(), "bloom", recompute);
    const double eta = fit_retarget_memory_efficiency(from, {{&g, &gw}, {&b, &bw}});
    if (recompute)
      CHECK(eta > 1.0);
    else
      CHECK((eta > 0.5 && eta <= 1.0));
  }
}

TEST_CASE("a malformed stage workload is refused naming the file and the field", "[validate][retarget]") {
  const std::string path = dvfs::testing::scratch_path("dvfs_test_stage_workloads.json");
  {
    std::ofstream f(path);
    f << R"({"workloads": {"w": {"hidden": 1024, "heads": 16, "seq": 512, "micro_batch": 1, "tp": 2, "vocab": 1000,
              "stages": [{"stages": [0, 1], "layers": -2}]}}})";
  }
  try {
    load_stage_workload(path, "w");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);
    CHECK(std::string(e.what()).find("layers") != std::string::npos);
  }
  CHECK_THROWS_AS(load_stage_workload(path, "missing"), InputError);
  std::remove(path.c_str());
}
