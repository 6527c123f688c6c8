// The memory clock is a real dimension: a (SM, memory) pair moves both time and power.
#include "replay_fixtures.hpp"
#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using namespace dvfs::testing;
using Catch::Detail::Approx;

TEST_CASE("a lower memory clock slows memory-bound kernels, barely touches GEMMs and lowers power", "[memory-clock]") {
  const GpuModel m = load_gpu_model("rtx-3080-ti");
  REQUIRE(m.mem_clocks_mhz().size() > 2);
  const double f = 1500, m_hi = m.max_mem_mhz(), m_lo = 5001;
  REQUIRE(m.mem_index(m_lo) >= 0);
  auto run = [&](KernelClass c, double mem) {
    Workload wl = one_step_workload({make_kernel(c, 1e-3, 0, static_cast<float>(m.max_sm_mhz()), static_cast<float>(m_hi))});
    PolicySpec spec;
    spec.name = "static";
    spec.clocks = ClockPair{f, mem};
    auto out = replay(wl, m, spec);
    return std::make_pair(out[0].stats.end_s, out[0].meter.total_j() / out[0].stats.end_s);
  };
  const auto copy_hi = run(KernelClass::copy, m_hi), copy_lo = run(KernelClass::copy, m_lo);
  const auto gemm_hi = run(KernelClass::gemm, m_hi), gemm_lo = run(KernelClass::gemm, m_lo);
  const ClassCoefficients& cc = m.coefficients(KernelClass::copy);
  // time = d (b_sm f_rec/f + b_mem m_rec/m + rest): the copy's memory share stretches by m_hi/m_lo.
  CHECK(copy_lo.first - copy_hi.first == Approx(1e-3 * cc.time_mem * (m_hi / m_lo - 1)));
  CHECK(copy_lo.first / copy_hi.first > gemm_lo.first / gemm_hi.first);
  CHECK(copy_lo.second < copy_hi.second);  // the memory share of dynamic power scales with m
  CHECK(gemm_lo.second < gemm_hi.second);
}

TEST_CASE("a GPU with one memory clock accepts only that one", "[memory-clock]") {
  const GpuModel a100 = load_gpu_model("a100-sxm4");
  CHECK(a100.mem_clocks_mhz() == std::vector<double>{1593});
  CHECK_NOTHROW(a100.check_supported({1410, 1593}, "s.json", "policy"));
  try {
    a100.check_supported({1410, 1215}, "s.json", "policy");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "s.json: policy.mem_mhz: memory clock 1215 MHz is not supported by a100-sxm4 (expected one of 1593 MHz)");
  }
}
