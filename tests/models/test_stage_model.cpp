#include "models/src/model_registry.hpp"
#include "models/src/retarget.hpp"
#include "models/src/stage_model.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using Catch::Detail::Approx;

TEST_CASE("a computation predicted at its own measured clock is the measurement", "[models][stage]") {
  const GpuModel m = load_gpu_model("a100-sxm4");
  const ClassCoefficients& cc = *m.computation("forward");
  const StageMeasurement a{0.05, 24.0, {1410, 1593}};
  const StagePrediction p = predict_computation(m, cc, a, {1410, 1593});
  CHECK(p.time_s == Approx(0.05));
  CHECK(p.energy_j == Approx(24.0));
}

TEST_CASE("time scales with the SM-bound share and power with the SM-dependent part only", "[models][stage]") {
  const GpuModel m = load_gpu_model("a100-sxm4");
  ClassCoefficients cc = *m.computation("forward");
  cc.dynamic_w = 100;  // far below the cap: no capping anywhere
  const double f_top = m.max_sm_mhz(), f = 900;
  const StageMeasurement a{1.0, 300.0, {f_top, m.max_mem_mhz()}};
  const StagePrediction p = predict_computation(m, cc, a, {f, m.max_mem_mhz()});
  CHECK(p.effective_sm_mhz == f);
  CHECK(p.time_s == Approx(cc.time_sm * f_top / f + 1 - cc.time_sm));
  const double s = m.sm_independent_power_w(cc, m.max_mem_mhz());
  CHECK(p.power_w == Approx(s + (300.0 - s) * m.g_at(f) / m.g_at(f_top)));
  CHECK(p.energy_j == Approx(p.power_w * p.time_s));
}

TEST_CASE("above the cap the computation runs at the clock where its power meets the cap target", "[models][stage]") {
  const GpuModel m = load_gpu_model("a40");
  const ClassCoefficients& cc = *m.computation("forward");
  const double target = m.power_cap_w() * m.governor().target_fraction;
  const double fc = capped_sm_mhz(m, cc, m.max_sm_mhz(), m.max_mem_mhz());
  REQUIRE(fc < m.max_sm_mhz());  // the A40 profile is power-capped at its top clocks
  CHECK(m.coefficient_power_at(cc, fc, m.max_mem_mhz()) == Approx(target).epsilon(1e-9));
  CHECK(capped_sm_mhz(m, cc, 1000, m.max_mem_mhz()) == 1000);
  // Setting any clock above the capped one changes nothing.
  const StageMeasurement a{0.1, 29.0, {m.max_sm_mhz(), m.max_mem_mhz()}};
  CHECK(predict_computation(m, cc, a, {fc + 100, m.max_mem_mhz()}).time_s == Approx(0.1));
}

TEST_CASE("retargeting a computation to the same GPU changes nothing", "[models][stage]") {
  const GpuModel m = load_gpu_model("a100-sxm4");
  const ClassCoefficients& cc = *m.computation("backward");
  const StageMeasurement a{0.1, 45.0, {m.max_sm_mhz(), m.max_mem_mhz()}};
  const Retargeted r = retarget_computation(m, cc, a, m);
  CHECK(r.anchor.time_s == Approx(0.1));
  CHECK(r.anchor.energy_j == Approx(45.0));
  CHECK(r.coefficients.dynamic_w == Approx(cc.dynamic_w));
}

TEST_CASE("retargeting to a slower GPU stretches time by its compute and bandwidth ratios", "[models][stage]") {
  const GpuModel from = load_gpu_model("a100-sxm4");
  const GpuModel to = GpuModel::load(data_dir() + "/models/calibration/a40.base.json");
  ClassCoefficients cc = *from.computation("forward");
  cc.dynamic_w = 50;  // keep both GPUs below their caps
  const StageMeasurement a{1.0, 150.0, {from.max_sm_mhz(), from.max_mem_mhz()}};
  const Retargeted r = retarget_computation(from, cc, a, to);
  const double compute = from.specs().bf16_dense_tflops / to.specs().bf16_dense_tflops;
  const double memory = from.specs().mem_bandwidth_gbs / to.specs().mem_bandwidth_gbs;
  CHECK(r.anchor.time_s == Approx(cc.time_sm * compute + (1 - cc.time_sm) * memory));
  CHECK(r.anchor.clocks == to.max_clocks());
}

TEST_CASE("retargeting a trace to the GPU it was recorded on leaves every kernel time unchanged", "[models][retarget]") {
  const GpuModel h = load_gpu_model("h200");
  Workload wl;
  Rank r;
  for (float mem : {3201.0f, 2201.0f})
    for (float sm : {1980.0f, 1500.0f})
      for (KernelClass c : {KernelClass::gemm, KernelClass::copy, KernelClass::elementwise}) {
        Kernel k;
        k.cls = c;
        k.duration_s = 1e-3;
        k.recorded_sm_mhz = sm;
        k.recorded_mem_mhz = mem;
        r.kernels.push_back(k);
      }
  wl.ranks.push_back(r);
  Workload moved = wl;
  const RetargetReport rep = retarget_workload(moved, h, h);
  CHECK(rep.compute_ratio == 1.0);
  for (std::size_t i = 0; i < wl.ranks[0].kernels.size(); ++i)
    for (int si : {0, 50, static_cast<int>(h.sm_clocks_mhz().size()) - 1})
      for (int mi = 0; mi < static_cast<int>(h.mem_clocks_mhz().size()); ++mi)
        CHECK(h.kernel_time_s(moved.ranks[0].kernels[i], si, mi) ==
              Approx(h.kernel_time_s(wl.ranks[0].kernels[i], si, mi)).epsilon(1e-12));
}

TEST_CASE("retargeting by work to the same GPU changes nothing", "[models][stage][work]") {
  const GpuModel m = load_gpu_model("a100-sxm4");
  const ClassCoefficients& cc = *m.computation("forward");
  const StageMeasurement a{0.05, 24.0, {m.max_sm_mhz(), m.max_mem_mhz()}};
  const Retargeted r = retarget_computation_by_work(m, cc, a, 5e9, 0.8, m);
  CHECK(r.anchor.time_s == Approx(0.05));
  CHECK(r.anchor.energy_j == Approx(24.0));
}

TEST_CASE("retargeting by work: a computation's bytes decide how much of it moves with bandwidth", "[models][stage][work]") {
  const GpuModel from = load_gpu_model("a100-sxm4");
  const GpuModel to = GpuModel::load(data_dir() + "/models/calibration/a40.base.json");
  ClassCoefficients cc = *from.computation("forward");
  cc.dynamic_w = 50;  // keep both GPUs below their caps
  const StageMeasurement a{0.1, 20.0, {from.max_sm_mhz(), from.max_mem_mhz()}};
  const double compute_ratio = from.specs().bf16_dense_tflops / to.specs().bf16_dense_tflops;
  const double memory_ratio = from.specs().mem_bandwidth_gbs / to.specs().mem_bandwidth_gbs;
  // No bytes: all of it is SM-bound and stretches by the tensor throughput ratio.
  CHECK(retarget_computation_by_work(from, cc, a, 0, 0.8, to).anchor.time_s == Approx(0.1 * compute_ratio));
  // Bytes worth 40 % of the measured time at 80 % of the A100's bandwidth: that part moves by bandwidth.
  const double bytes = 0.04 * 0.8 * from.specs().mem_bandwidth_gbs * 1e9;
  const Retargeted r = retarget_computation_by_work(from, cc, a, bytes, 0.8, to);
  CHECK(r.anchor.time_s == Approx(0.06 * compute_ratio + 0.04 * memory_ratio));
  CHECK(r.coefficients.time_sm == Approx(0.06 * compute_ratio / r.anchor.time_s));
  // More bytes than the measured time allows: the whole measurement is memory time, no more.
  CHECK(retarget_computation_by_work(from, cc, a, 100 * bytes, 0.8, to).anchor.time_s == Approx(0.1 * memory_ratio));
  CHECK_THROWS_AS(retarget_computation_by_work(from, cc, a, bytes, 0, to), std::invalid_argument);
}

TEST_CASE("the memory efficiency fit recovers the efficiency its samples were made with", "[models][stage][work]") {
  std::vector<MemoryTimeSample> s;
  for (double gb : {1.0, 3.0, 7.0}) s.push_back({gb * 1e9 / (0.7 * 2000e9), gb * 1e9, 2000});
  CHECK(fit_memory_efficiency(s) == Approx(0.7));
  CHECK_THROWS_AS(fit_memory_efficiency({}), std::invalid_argument);
}
