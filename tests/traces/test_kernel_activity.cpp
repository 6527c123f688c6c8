#include "traces/src/kernel_activity.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

OperatorCall op(const std::string& name, std::vector<std::vector<std::int64_t>> dims, std::vector<std::string> types,
                std::vector<std::string> concrete = {}) {
  OperatorCall o;
  o.name = name;
  o.dims = std::move(dims);
  o.types = std::move(types);
  o.concrete = std::move(concrete);
  if (o.concrete.empty()) o.concrete.assign(o.dims.size(), "");
  return o;
}

OperatorWork work_of(const OperatorCall& o, const std::string& kernel = "nvjet_sm90_tst_256x128") {
  const std::optional<OperatorWork> w = operator_work(o, {&kernel});
  REQUIRE(w);
  return *w;
}

}  // namespace

TEST_CASE("a bf16 matrix product is 2 M N K tensor-core FLOPs and its operands' bytes", "[traces][activity]") {
  const OperatorWork w = work_of(op("aten::mm", {{64, 128}, {128, 32}}, {"c10::BFloat16", "c10::BFloat16"}));
  CHECK(w.tensor_flops == Approx(2.0 * 64 * 32 * 128));
  CHECK(w.precision == TensorPrecision::bf16);
  CHECK(w.fma_flops == 0);
  CHECK(w.bytes == Approx(2.0 * (64 * 128 + 128 * 32 + 64 * 32)));
}

TEST_CASE("fp32 GEMMs run on CUDA cores unless the kernel is a TF32 one", "[traces][activity]") {
  const OperatorCall o = op("aten::addmm", {{32}, {16, 8}, {8, 32}}, {"float", "float", "float"});
  const OperatorWork fp32 = work_of(o, "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma");
  CHECK(fp32.fma_flops == Approx(2.0 * 16 * 32 * 8));
  CHECK(fp32.precision == TensorPrecision::none);
  CHECK(fp32.bytes == Approx(4.0 * (16 * 8 + 8 * 32 + 16 * 32 + 32)));  // the bias is read too
  const OperatorWork tf32 = work_of(o, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n");
  CHECK(tf32.precision == TensorPrecision::tf32);
  CHECK(tf32.tensor_flops == Approx(2.0 * 16 * 32 * 8));
}

TEST_CASE("a convolution's output size follows its stride and padding", "[traces][activity]") {
  // cudnn_convolution(input, weight, padding, stride, dilation, groups, ...): 224 -> 112 with 7x7, stride 2, pad 3
  const OperatorWork w = work_of(op("aten::cudnn_convolution", {{8, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}},
                                    {"c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "Scalar"},
                                    {"", "", "[3, 3]", "[2, 2]", "[1, 1]", "1"}),
                                 "cutlass_tensorop_bf16_s16816fprop");
  CHECK(w.tensor_flops == Approx(2.0 * 8 * 64 * 112 * 112 * 3 * 7 * 7));
}

TEST_CASE("causal attention does half the work of full attention", "[traces][activity]") {
  const std::vector<std::vector<std::int64_t>> qkv = {{2, 16, 1024, 128}, {2, 16, 1024, 128}, {2, 16, 1024, 128}, {}, {}};
  const std::vector<std::string> types = {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"};
  const OperatorWork causal = work_of(op("aten::_scaled_dot_product_cudnn_attention", qkv, types, {"", "", "", "0.", "True"}));
  const OperatorWork full = work_of(op("aten::_scaled_dot_product_cudnn_attention", qkv, types, {"", "", "", "0.", "False"}));
  CHECK(full.tensor_flops == Approx(4.0 * 2 * 16 * 1024 * 1024 * 128));
  CHECK(causal.tensor_flops == Approx(full.tensor_flops / 2));
}

TEST_CASE("streaming operators count what they read and write", "[traces][activity]") {
  const std::vector<std::string> bf = {"c10::BFloat16", "c10::BFloat16", "Scalar"};
  CHECK(work_of(op("aten::add", {{1000}, {1000}, {}}, bf)).bytes == Approx(3 * 2000.0));   // two reads, one write
  CHECK(work_of(op("aten::add_", {{1000}, {1000}, {}}, bf)).bytes == Approx(3 * 2000.0));  // in place: same
  CHECK(work_of(op("aten::fill_", {{1000}, {}}, {"float", "Scalar"})).bytes == Approx(4000.0));  // write only
  CHECK(work_of(op("aten::sum", {{10, 100}}, {"float"})).bytes == Approx(4000.0));               // reduction
  // the per-element instruction estimate makes GELU costlier than an add of the same size
  CHECK(work_of(op("aten::gelu", {{1000}}, {"c10::BFloat16"})).alu_ops > work_of(op("aten::add", {{1000}, {1000}, {}}, bf)).alu_ops);
}

TEST_CASE("operators over tensor lists have no sizes: their kernels keep the class prior", "[traces][activity]") {
  OperatorIndex ops;
  ops.add("aten::_fused_adamw_", Json{{"External id", 7}, {"Input Dims", Json::array({Json::array(), Json::array()})},
                                      {"Input type", {"TensorList", "TensorList"}}});
  ops.add("aten::mm", Json{{"External id", 8}, {"Input Dims", {{4, 4}, {4, 4}}}, {"Input type", {"float", "float"}}});
  CHECK(ops.find(7) == nullptr);
  CHECK(ops.find(8) != nullptr);
  const std::string name = "multi_tensor_apply_kernel";
  const std::vector<KernelRates> r = estimate_kernel_rates({{7, 10.0, ActivityKind::kernel, &name, 0}}, ops);
  CHECK(r[0].source == WorkSource::unknown);
}

TEST_CASE("an operator's work is shared by its kernels; helper kernels only move bytes", "[traces][activity]") {
  OperatorIndex ops;
  ops.add("aten::mm", Json{{"External id", 1}, {"Input Dims", {{100, 100}, {100, 100}}},
                           {"Input type", {"c10::BFloat16", "c10::BFloat16"}}});
  const std::string gemm = "nvjet_sm90_tst_128x128", pad = "nhwcAddPaddingKernel", copy = "Memcpy DtoD (Device -> Device)";
  const std::vector<ActivityRef> acts = {{1, 30.0, ActivityKind::kernel, &gemm, 0},
                                         {1, 10.0, ActivityKind::kernel, &pad, 0},
                                         {-1, 5.0, ActivityKind::memcpy, &copy, 1000000},
                                         {-1, 5.0, ActivityKind::kernel, &gemm, 0}};
  const std::vector<KernelRates> r = estimate_kernel_rates(acts, ops);
  const double flops = 2.0 * 100 * 100 * 100, bytes = 2.0 * 3 * 100 * 100;
  CHECK(r[0].tensor_tflops == Approx(flops / 30e-6 / 1e12));  // all the arithmetic in the GEMM kernel's 30 us
  CHECK(r[1].tensor_tflops == 0);
  CHECK(r[1].memory_tbps == Approx(bytes / 40e-6 / 1e12));  // bytes over both kernels' 40 us
  CHECK(r[0].precision == TensorPrecision::bf16);
  CHECK(r[2].source == WorkSource::copy_engine);
  CHECK(r[2].memory_tbps == Approx(2e6 / 5e-6 / 1e12));  // device to device: read and written
  CHECK(r[3].source == WorkSource::unknown);               // no operator
}
