#include "sim/validate/work_beyond_peak.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

Kernel counted(double seconds, std::uint32_t name, float memory_tbps, float tensor_tflops = 0,
               TensorPrecision p = TensorPrecision::none) {
  Kernel k;
  k.duration_s = seconds;
  k.name_id = name;
  k.memory_tbps = memory_tbps;
  k.tensor_tflops = tensor_tflops;
  k.tensor_precision = p;
  k.work = WorkSource::shapes;
  return k;
}

}  // namespace

TEST_CASE("kernels counted faster than the part's bandwidth or tensor peak are listed, most time first", "[validate][activity]") {
  Workload wl;
  wl.names = {"bag", "gemm", "fp8 gemm", "copy", "prior"};
  Rank r;
  r.kernels = {counted(1e-3, 0, 37.0f),                                  // a table counted as streamed
               counted(2e-3, 1, 1.0f, 800.0f, TensorPrecision::bf16),    // a big GEMM: below the peak
               counted(1e-3, 2, 1.0f, 1500.0f, TensorPrecision::fp8),    // fp8 peaks at twice bf16
               counted(3e-3, 3, 4.5f),                                   // near the bandwidth, within the margin
               counted(3e-3, 4, 0.0f)};
  r.kernels[4].work = WorkSource::unknown;
  r.kernels.push_back(counted(2e-3, 1, 1.0f, 1300.0f, TensorPrecision::bf16));  // the same GEMM name, beyond the peak
  r.kernels.push_back(counted(1e-3, 3, 6.0f));  // an L2-resident NCCL exchange: its calls' own bytes, not an estimate
  r.kernels.back().work = WorkSource::transfer_bytes;
  wl.ranks.push_back(r);
  GpuSpecs h200;
  h200.bf16_dense_tflops = 989;
  h200.mem_bandwidth_gbs = 4800;
  const Json j = work_beyond_peak(wl, h200);
  CHECK(j["checked"].get<bool>());
  CHECK(j["kernels"].get<std::size_t>() == 2);
  CHECK(j["share_of_kernel_time"].get<double>() == Approx(3e-3 / 13e-3));
  REQUIRE(j["top"].size() == 2);
  CHECK(j["top"][0]["name"] == "gemm");
  CHECK(j["top"][0]["tensor_tflops"].get<double>() == Approx(1300.0));
  CHECK(j["top"][1]["name"] == "bag");
  // a part without datasheet figures checks nothing
  const Json none = work_beyond_peak(wl, GpuSpecs{});
  CHECK_FALSE(none["checked"].get<bool>());
  CHECK(none["kernels"].get<std::size_t>() == 0);
}
