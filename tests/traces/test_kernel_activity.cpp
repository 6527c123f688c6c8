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
  // CUTLASS 2.x tensor-core kernels do not say "tf32": fp32 operands through a tensorop kernel are TF32
  const OperatorWork cutlass = work_of(o, "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align1>(...)");
  CHECK(cutlass.precision == TensorPrecision::tf32);
  CHECK(cutlass.tensor_flops == Approx(2.0 * 16 * 32 * 8));
  const OperatorWork simt = work_of(o, "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(...)");
  CHECK(simt.precision == TensorPrecision::none);
}

TEST_CASE("a convolution's output size follows its stride and padding", "[traces][activity]") {
  // cudnn_convolution(input, weight, padding, stride, dilation, groups, ...): 224 -> 112 with 7x7, stride 2, pad 3
  const OperatorWork w = work_of(op("aten::cudnn_convolution", {{8, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}},
                                    {"c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "Scalar"},
                                    {"", "", "[3, 3]", "[2, 2]", "[1, 1]", "1"}),
                                 "cutlass_tensorop_bf16_s16816fprop");
  CHECK(w.tensor_flops == Approx(2.0 * 8 * 64 * 112 * 112 * 3 * 7 * 7));
  // its seventh argument is `benchmark` (the generic entry points' `transposed` sits there): True changes nothing
  const OperatorWork benchmarked = work_of(op("aten::cudnn_convolution", {{8, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}},
                                              {"c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar"},
                                              {"", "", "[3, 3]", "[2, 2]", "[1, 1]", "1", "True"}),
                                           "cutlass_tensorop_bf16_s16816fprop");
  CHECK(benchmarked.tensor_flops == Approx(w.tensor_flops));
  CHECK(benchmarked.bytes == Approx(w.bytes));
}

TEST_CASE("a transposed convolution counts its products from the input side and writes the larger output", "[traces][activity]") {
  // DCGAN's 4x4 stride-2 pad-1 up-sampling: [N, 512, 8, 8] -> [N, 256, 16, 16], weight [C_in, C_out/g, 4, 4]
  // cudnn_convolution_transpose(input, weight, padding, output_padding, stride, dilation, groups, ...)
  const OperatorWork w = work_of(op("aten::cudnn_convolution_transpose", {{32, 512, 8, 8}, {512, 256, 4, 4}, {}, {}, {}, {}, {}},
                                    {"c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"},
                                    {"", "", "[1, 1]", "[0, 0]", "[2, 2]", "[1, 1]", "1"}),
                                 "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64");
  CHECK(w.precision == TensorPrecision::bf16);
  CHECK(w.tensor_flops == Approx(2.0 * 32 * 512 * 8 * 8 * 256 * 4 * 4));  // every input element meets C_out x 16 weights
  CHECK(w.bytes == Approx(2.0 * (32 * 512 * 8 * 8 + 512 * 256 * 4 * 4 + 32 * 256 * 16 * 16)));
  // the generic entry point with transposed = True counts the same; output_padding widens the output
  const OperatorCall generic = op("aten::_convolution", {{32, 512, 8, 8}, {512, 256, 4, 4}, {}, {}, {}, {}, {}, {}, {}},
                                  {"c10::BFloat16", "c10::BFloat16", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"},
                                  {"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[1, 1]", "1"});
  const OperatorWork g = work_of(generic, "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64");
  CHECK(g.tensor_flops == Approx(w.tensor_flops));
  CHECK(g.bytes == Approx(2.0 * (32 * 512 * 8 * 8 + 512 * 256 * 4 * 4 + 32 * 256 * 17 * 17)));
  // its backward (transposed = True): both passes counted from the input's elements, not grad_output's
  const OperatorCall bwd = op("aten::convolution_backward", {{32, 256, 16, 16}, {32, 512, 8, 8}, {512, 256, 4, 4}, {}, {}, {}, {}, {}, {}, {}, {}},
                              {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "", "Scalar", "", "Scalar", ""},
                              {"", "", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1", "[True, True, False]"});
  const OperatorWork b = work_of(bwd, "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64");
  CHECK(b.tensor_flops == Approx(2.0 * w.tensor_flops));
  // a plain convolution's backward is unchanged: products from grad_output's side
  std::vector<std::string> plain_concrete = bwd.concrete;
  plain_concrete[7] = "False";
  const OperatorWork p = work_of(op(bwd.name, {{32, 256, 16, 16}, {32, 512, 32, 32}, {256, 512, 4, 4}, {}, {}, {}, {}, {}, {}, {}, {}}, bwd.types, plain_concrete),
                                 "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64");
  CHECK(p.tensor_flops == Approx(2.0 * 2.0 * 32 * 256 * 16 * 16 * 512 * 4 * 4));
}

TEST_CASE("an FFT convolution counts its frequency-domain products and transforms, not the direct count", "[traces][activity]") {
  // The held-in fp32 NCHW loop's shape (traces/recordings/h200-power/conv-3x3-128c-28-b64-fp32-nchw): cuDNN picks
  // 32x32 FFT tiles; one tile covers a 28x28 output of a 3x3 filter (30 outputs per tile side).
  const OperatorCall c = op("aten::cudnn_convolution", {{64, 128, 28, 28}, {128, 128, 3, 3}, {}, {}, {}, {}},
                            {"float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"},
                            {"", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"});
  const std::string fft = "void fft2d_r2c_32x32<float, false, 1u, false>(float2*, float const*, int)",
                    cgemm = "sm80_xmma_gemm_cf32cf32_f32f32_cf32_tn_n_tilesize64x64x8_stage3_warpsize2x2x1_ffma";
  const std::optional<OperatorWork> w = operator_work(c, {&fft, &cgemm});
  REQUIRE(w);
  const double products = 8.0 * 64 * 128 * 128 * 1 * (32 * 17), transforms = 2.5 * 1024 * 10 * (64 * 128 + 128 * 128 + 64 * 128);
  CHECK(w->fma_flops == Approx(products + transforms));
  CHECK(w->fma_flops < 0.4 * 2.0 * 64 * 128 * 28 * 28 * 128 * 9);  // the direct count
  const std::optional<OperatorWork> direct = operator_work(c, {&cgemm});
  REQUIRE(direct);
  CHECK(direct->fma_flops == Approx(2.0 * 64 * 128 * 28 * 28 * 128 * 9));
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

TEST_CASE("an out= tensor is written, not read: the elementwise kernel's operand count tells it apart", "[traces][activity]") {
  // torch.add(a, b, out=c): the profiler lists c after alpha; the kernel touches three arrays (c, a, b)
  const std::vector<std::string> bf = {"c10::BFloat16", "c10::BFloat16", "Scalar", "c10::BFloat16"};
  const std::string add3 = "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
  CHECK(work_of(op("aten::add", {{1000}, {1000}, {}, {1000}}, bf), add3).bytes == Approx(3 * 2000.0));
  // without the operand count in the kernel's name every tensor listed is read as before
  CHECK(work_of(op("aten::add", {{1000}, {1000}, {}, {1000}}, bf), "elementwise_kernel_without_count").bytes == Approx(4 * 2000.0));
  // a plain add with the same kernel: two reads, one write, unchanged
  CHECK(work_of(op("aten::add", {{1000}, {1000}, {}}, {"c10::BFloat16", "c10::BFloat16", "Scalar"}), add3).bytes == Approx(3 * 2000.0));
  // a broadcast bias add into out=: the small input is read once, the output written once
  CHECK(work_of(op("aten::add", {{1000}, {10}, {}, {1000}}, bf), add3).bytes == Approx(2 * 2000.0 + 20.0));
}

TEST_CASE("an outer sum writes its inputs' broadcast shape; shapes that do not broadcast keep the largest input", "[traces][activity]") {
  const std::vector<std::string> bf = {"c10::BFloat16", "c10::BFloat16", "Scalar"};
  // [4096, 1, 2048] + [1, 256, 2048]: reads both once, writes 4096 x 256 x 2048 elements (split counting_fixes)
  const std::string add = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<c10::BFloat16> >(at::TensorIteratorBase&, at::native::CUDAFunctor_add<c10::BFloat16> const&)::{lambda(int)#1})";
  const OperatorWork outer = work_of(op("aten::add", {{4096, 1, 2048}, {1, 256, 2048}, {}}, bf), add);
  CHECK(outer.bytes == Approx(2.0 * (4096 * 2048 + 256 * 2048) + 2.0 * 4096 * 256 * 2048));
  CHECK(outer.alu_ops == Approx(work_of(op("aten::add", {{4096, 256, 2048}, {4096, 256, 2048}, {}}, bf), add).alu_ops));
  // a bias add broadcasts to the larger input: unchanged
  CHECK(work_of(op("aten::add", {{64, 1000}, {1000}, {}}, bf), add).bytes == Approx(2.0 * (64000 + 1000) + 2.0 * 64000));
  // [3] with [4] do not broadcast (a malformed record): the largest input sizes the output, as before
  CHECK(work_of(op("aten::add", {{3}, {4}, {}}, bf), add).bytes == Approx(2.0 * 7 + 2.0 * 4));
}

TEST_CASE("a normalisation's per-channel parameters are not broadcast from the right: its output is its input's size", "[traces][activity]") {
  // BatchNorm on [N, C, 1, 1] (an image-pooling branch) with four [C] parameters: NumPy alignment would make it
  // [N, C, 1, C]; its kernels are not ATen elementwise kernels, so the output stays the input's size
  const std::vector<std::string> fp = {"float", "float", "float", "float", "float"};
  const OperatorCall bn = op("aten::native_batch_norm", {{32, 256, 1, 1}, {256}, {256}, {256}, {256}}, fp);
  const OperatorWork w = work_of(bn, "void at::native::batch_norm_transform_input_kernel<float, float, float, int>");
  CHECK(w.bytes == Approx(4.0 * (32 * 256 + 4 * 256) + 4.0 * 32 * 256));
}

TEST_CASE("an expanded operand (a stride 0) is read at its stored elements; the output keeps the logical shape", "[traces][activity]") {
  const std::vector<std::string> fp = {"float", "float", "Scalar"};
  OperatorCall expanded = op("aten::add", {{1000, 1000}, {1000, 1000}, {}}, fp);
  note_expanded_operand(expanded, 1, {0, 1});  // y.expand(1000, 1000) of a [1, 1000] row
  REQUIRE(expanded.stored_elements.size() == 3);
  CHECK(expanded.stored_elements[0] == -1.0);
  CHECK(expanded.stored_elements[1] == 1000.0);
  const OperatorWork w = work_of(expanded);
  CHECK(w.bytes == Approx(4.0 * 1e6 + 4.0 * 1000 + 4.0 * 1e6));
  // the same traffic as the broadcast written with a [1000] row
  CHECK(w.bytes == Approx(work_of(op("aten::add", {{1000, 1000}, {1000}, {}}, fp)).bytes));
  // contiguous strides, a stride 0 along a dimension of size 1, or strides of another rank: not expanded
  OperatorCall plain = op("aten::add", {{1000, 1000}, {1, 1000}, {}}, fp);
  note_expanded_operand(plain, 0, {1000, 1});
  note_expanded_operand(plain, 1, {0, 1});
  note_expanded_operand(plain, 1, {1});
  CHECK(plain.stored_elements.empty());
}

TEST_CASE("a negative log-likelihood loss touches one element per target, not every class", "[traces][activity]") {
  // cross-entropy over a 50,304-token vocabulary, 4,096 targets: the log-probabilities are 824 MB, the loss reads 4,096
  const std::vector<std::string> fwd_types = {"float", "long int", "", "Scalar", "Scalar"};
  const OperatorWork f = work_of(op("aten::nll_loss_forward", {{4096, 50304}, {4096}, {}, {}, {}}, fwd_types), "nll_loss_forward_reduce_cuda_kernel_2d");
  CHECK(f.bytes == Approx(4096 * (4 + 8) + 4.0));
  const std::vector<std::string> bwd_types = {"float", "float", "long int", "", "Scalar", "Scalar", "float"};
  const OperatorWork b = work_of(op("aten::nll_loss_backward", {{}, {4096, 50304}, {4096}, {}, {}, {}, {}}, bwd_types), "nll_loss_backward_reduce_cuda_kernel_2d");
  CHECK(b.bytes == Approx(4096 * (4 + 8) + 4096 * 4.0));  // scattered into a gradient a fill zeroed
  CHECK(b.bytes < 1e-3 * 4096.0 * 50304 * 4);
}

TEST_CASE("gathers and scatters move the indexed elements, not the whole tensor", "[traces][activity]") {
  // GRPO's per-token log-probabilities: gather(log_probs [64, 512, 152064], -1, tokens [64, 512, 1])
  const OperatorWork g = work_of(op("aten::gather", {{64, 512, 152064}, {}, {64, 512, 1}, {}}, {"float", "Scalar", "long int", "Scalar"}), "gather_kernel");
  CHECK(g.bytes == Approx(64 * 512 * (4 + 8) + 64 * 512 * 4.0));
  // scatter_add_ of 1,000 bf16 values into a 10^6-element tensor: the touched elements, not the million
  const OperatorWork s = work_of(op("aten::scatter_add_", {{1000000}, {}, {1000}, {1000}}, {"c10::BFloat16", "Scalar", "long int", "c10::BFloat16"}), "scatter_kernel");
  CHECK(s.bytes == Approx(1000 * 2 + 1000 * 8 + 2 * 1000 * 2.0));
  // the out-of-place form copies self as well
  const OperatorWork so = work_of(op("aten::scatter_add", {{1000000}, {}, {1000}, {1000}}, {"c10::BFloat16", "Scalar", "long int", "c10::BFloat16"}), "scatter_kernel");
  CHECK(so.bytes == Approx(s.bytes + 2 * 2e6));
}

TEST_CASE("an embedding bag gathers one table row per index, not the whole table", "[traces][activity]") {
  // DLRM's bag: _embedding_bag(weight [10^6, 128] fp32, indices [81920], offsets [4096], ...) (h200-unseen)
  const OperatorWork w = work_of(op("aten::_embedding_bag", {{1000000, 128}, {81920}, {4096}, {}, {}},
                                    {"float", "long int", "long int", "Scalar", "Scalar"}),
                                 "EmbeddingBag_updateOutputKernel_sum_mean");
  CHECK(w.bytes == Approx(81920 * 128 * 4.0 + 81920 * 8 + 4096 * 8 + 4096 * 128 * 4.0));
  CHECK(w.bytes < 1e8);  // the table is 512 MB
}

TEST_CASE("advanced indexing whose index list the profiler did not size is left unpriced", "[traces][activity]") {
  // data[idx]: aten::index([512, 3, 160, 160] uint8, <list>) -- how many rows it gathers is not in the trace
  const std::string kernel = "void at::native::vectorized_gather_kernel<16, long>";
  CHECK_FALSE(operator_work(op("aten::index", {{512, 3, 160, 160}, {}}, {"unsigned char", ""}), {&kernel}));
}

TEST_CASE("a concatenation moves its tensor list's elements once each way; the element size is in the kernel's name", "[traces][activity]") {
  // a KV cache grown by one token: cat([k [4, 16, 275, 64], new [4, 16, 1, 64]], dim 2), fp16 (h200-unseen gpt-decode)
  OperatorIndex ops;
  ops.add("aten::cat", Json{{"External id", 3},
                            {"Input Dims", Json::array({Json::array({Json::array({4, 16, 275, 64}), Json::array({4, 16, 1, 64})}),
                                                        Json::array()})},
                            {"Input type", {"TensorList", "Scalar"}}});
  REQUIRE(ops.find(3) != nullptr);
  const std::string cat = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>";
  const std::optional<OperatorWork> w = operator_work(*ops.find(3), {&cat});
  REQUIRE(w);
  CHECK(w->bytes == Approx(2.0 * 4 * 16 * 276 * 64 * 2));
  // without the element size in the kernel's name the operator stays unpriced
  const std::string copy = "void at::native::unrolled_elementwise_kernel<direct_copy_kernel_cuda>";
  CHECK_FALSE(operator_work(*ops.find(3), {&copy}));
  // a foreach operator over a sized list is not kept: its kernels keep their launch-shape estimate
  ops.add("aten::_foreach_mul_", Json{{"External id", 4}, {"Input Dims", Json::array({Json::array({Json::array({8, 8})}), Json::array()})},
                                      {"Input type", {"TensorList", "Scalar"}}});
  CHECK(ops.find(4) == nullptr);
}

TEST_CASE("a dtype conversion kernel beside an attention backward is a helper, not a matrix kernel", "[traces][activity]") {
  // cuDNN's attention backward: the wgmma kernel does the arithmetic, convert_dq_to_16bits only converts dQ
  OperatorIndex ops;
  ops.add("aten::_cudnn_attention_backward",
          Json{{"External id", 1},
               {"Input Dims", {{1, 8, 128, 64}, {1, 8, 128, 64}, {1, 8, 128, 64}, {1, 8, 128, 64}, {1, 8, 128, 64}}},
               {"Input type", {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}}});
  const std::string bprop = "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64",
                    convert = "void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int)";
  const std::vector<KernelRates> r =
      estimate_kernel_rates({{1, 20.0, ActivityKind::kernel, &bprop, 0}, {1, 2.0, ActivityKind::kernel, &convert, 0}}, ops);
  CHECK(r[0].tensor_tflops > 0);
  CHECK(r[1].tensor_tflops == 0);
  CHECK(r[1].fma_tflops == 0);
  CHECK(r[1].memory_tbps > 0);
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

TEST_CASE("a kernel's name says whether it issues warpgroup MMA or mma.sync", "[traces][activity]") {
  // Names as the H200 recordings hold them (traces/recordings/h200-power, h200-workloads).
  for (const char* n : {"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT",
                        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize256x64x32",
                        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128",
                        "void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_bf16>"})
    CHECK(tensor_issue_of(n) == TensorIssue::warpgroup);
  for (const char* n : {"void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>",
                        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>",
                        "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128>>",
                        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4",
                        "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn"})
    CHECK(tensor_issue_of(n) == TensorIssue::warp);
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
  CHECK(r[0].tensor_issue == TensorIssue::warpgroup);
  CHECK(r[2].source == WorkSource::copy_engine);
  CHECK(r[2].memory_tbps == Approx(2e6 / 5e-6 / 1e12));  // device to device: read and written
  CHECK(r[3].source == WorkSource::unknown);               // no operator
}

TEST_CASE("cuDNN's layout conversions move their operator's tensors on top of the convolution's own traffic", "[traces][activity]") {
  // An NCHW fp16 convolution run by an NHWC kernel: the input and weights are converted in, the output back out.
  OperatorIndex ops;
  ops.add("aten::cudnn_convolution", Json{{"External id", 1},
                                          {"Input Dims", {{8, 64, 1, 1000}, {64, 64, 1, 3}}},
                                          {"Input type", {"c10::Half", "c10::Half"}}});
  const std::string to_nhwc = "void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>",
                    fprop = "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x64x64",
                    to_nchw = "void cudnn::engines_precompiled::nhwcToNchwKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>";
  const std::vector<ActivityRef> acts = {{1, 6.0, ActivityKind::kernel, &to_nhwc, 0},
                                         {1, 20.0, ActivityKind::kernel, &fprop, 0},
                                         {1, 4.0, ActivityKind::kernel, &to_nchw, 0}};
  const std::vector<KernelRates> r = estimate_kernel_rates(acts, ops);
  const OperatorWork w = work_of(*ops.find(1), fprop);
  CHECK(r[1].memory_tbps == Approx(w.bytes / 20e-6 / 1e12));  // the convolution's bytes over its own 20 us
  CHECK(r[0].memory_tbps == Approx(2 * w.bytes / 10e-6 / 1e12));  // twice them over the conversions' 10 us
  CHECK(r[2].memory_tbps == Approx(r[0].memory_tbps));
  CHECK(r[1].tensor_tflops > 0);
  CHECK((r[0].tensor_tflops == 0 && r[0].fma_tflops == 0 && r[0].alu_tops == 0));
}

TEST_CASE("a cuFFT operator does 2.5 N log2 N FLOPs per real transform and one pass over its data per kernel", "[traces][activity]") {
  // torch.fft.rfft2 of a [2, 3, 16, 8] fp32 tensor over dims 2 and 3: six transforms of 128 points, complex output
  // [2, 3, 16, 5]; two cuFFT kernels, so the data is read and written twice.
  const OperatorCall r2c = op("aten::_fft_r2c", {{2, 3, 16, 8}, {}, {}, {}}, {"float", "ScalarList", "Scalar", "Scalar"},
                              {"", "[2, 3]", "2", "True"});
  const std::string pass1 = "void vector_fft_symm_r2c<256u, EPT<8u>, 2u, 32u>", pass2 = "void regular_fft<256u, EPT<16u>, 8u, 9u>";
  const std::optional<OperatorWork> w = operator_work(r2c, {&pass1, &pass2});
  REQUIRE(w);
  CHECK(w->fma_flops == Approx(6 * 2.5 * 128 * 7));
  CHECK(w->precision == TensorPrecision::none);
  CHECK(w->tensor_flops == 0);
  CHECK(w->bytes == Approx(2 * (4.0 * 2 * 3 * 16 * 8 + 8.0 * 2 * 3 * 16 * 5)));

  // its inverse (irfft2 with s=(16, 8)): the real output's last dim is last_dim_size, not the input's 5
  const OperatorCall c2r = op("aten::_fft_c2r", {{2, 3, 16, 5}, {}, {}, {}}, {"c10::complex<float>", "ScalarList", "Scalar", "Scalar"},
                              {"", "[2, 3]", "2", "8"});
  const OperatorWork inv = work_of(c2r, pass2);
  CHECK(inv.fma_flops == Approx(6 * 2.5 * 128 * 7));
  CHECK(inv.bytes == Approx(8.0 * 2 * 3 * 16 * 5 + 4.0 * 2 * 3 * 16 * 8));

  // a complex transform over the last dim, negative dim index: 5 N log2 N
  const OperatorCall c2c = op("aten::_fft_c2c", {{4, 32}, {}, {}, {}}, {"c10::complex<float>", "ScalarList", "Scalar", "Scalar"},
                              {"", "[-1]", "0", "True"});
  const OperatorWork c = work_of(c2c, pass2);
  CHECK(c.fma_flops == Approx(4 * 5.0 * 32 * 5));
  CHECK(c.bytes == Approx(2 * 8.0 * 4 * 32));

  // no dim list, or a dim beyond the tensor: the streaming estimate (bytes, no FLOPs)
  for (const char* dims : {"", "[4]"}) {
    const OperatorWork s = work_of(op("aten::_fft_c2c", {{4, 32}, {}, {}, {}}, {"c10::complex<float>", "ScalarList", "Scalar", "Scalar"},
                                      {"", dims, "0", "True"}), pass2);
    CHECK(s.fma_flops == 0);
  }
  // fp64 data: bytes only
  const OperatorWork d = work_of(op("aten::_fft_c2c", {{4, 32}, {}, {}, {}}, {"c10::complex<double>", "ScalarList", "Scalar", "Scalar"},
                                    {"", "[1]", "0", "True"}), pass2);
  CHECK(d.fma_flops == 0);
  CHECK(d.bytes == Approx(2 * 16.0 * 4 * 32));
}

TEST_CASE("torch._int_mm is 2 M N K int8 tensor-core operations writing an int32 product", "[traces][activity]") {
  const std::string k = "void cutlass::Kernel2<cutlass_80_tensorop_i16832gemm_s8_128x256_128x3_tn_align16>(...)";
  const OperatorWork w = work_of(op("aten::_int_mm", {{4096, 512}, {512, 1024}}, {"signed char", "signed char"}), k);
  CHECK(w.tensor_flops == Approx(2.0 * 4096 * 1024 * 512));
  CHECK(w.precision == TensorPrecision::fp8);  // the 1-byte tensor rate class [estimate]
  CHECK(w.bytes == Approx(4096.0 * 512 + 512.0 * 1024 + 4.0 * 4096 * 1024));
  CHECK(tensor_issue_of(k) == TensorIssue::warp);  // CUTLASS 2.x int8: per-warp mma.sync
}

TEST_CASE("dense factorisations and triangular solves are counted from their shapes", "[traces][activity]") {
  const std::string gemm = "sm90_xmma_gemm_f64f64_f64f64_f64_tn_n_tilesize64x128x16_stage3_warpsize2x2x1_tensor16x8x8_execute_kernel";
  // Cholesky of a 1,000 x 1,000 fp64 matrix: N^3 / 3 fp64 FLOPs, the matrix read and its factor written
  const OperatorWork chol = work_of(op("aten::linalg_cholesky_ex", {{1000, 1000}, {}, {}}, {"double", "Scalar", "Scalar"}), gemm);
  CHECK(chol.tensor_flops == Approx(1e9 / 3));
  CHECK(chol.precision == TensorPrecision::fp64);
  CHECK(chol.fma_flops == 0);
  CHECK(chol.bytes == Approx(2 * 8.0 * 1000 * 1000));
  // a triangular solve from the left with 64 right-hand sides: N^2 K; from the right, K is B's second-last dim
  const OperatorWork left = work_of(op("aten::linalg_solve_triangular", {{1000, 1000}, {1000, 64}, {}, {}, {}},
                                       {"double", "double", "Scalar", "Scalar", "Scalar"}, {"", "", "False", "True", "False"}),
                                    "void trsm_left_kernel<int, double, 256, 4, true, false, true, false, false>(...)");
  CHECK(left.tensor_flops == Approx(1000.0 * 1000 * 64));
  CHECK(left.bytes == Approx(8.0 * (1000 * 1000 + 2 * 1000 * 64)));
  const OperatorWork right = work_of(op("aten::linalg_solve_triangular", {{1000, 1000}, {64, 1000}, {}, {}, {}},
                                        {"float", "float", "Scalar", "Scalar", "Scalar"}, {"", "", "True", "False", "False"}),
                                     "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x64x32");
  CHECK(right.tensor_flops == Approx(1000.0 * 1000 * 64));  // fp32 on a tf32 kernel
  CHECK(right.precision == TensorPrecision::tf32);
  // an fp64 product on CUTLASS's fp64 tensor-op kernel is fp64, not TF32; an 8-byte complex product is not fp64
  const OperatorWork d884 = work_of(op("aten::mm", {{64, 64}, {64, 64}}, {"double", "double"}),
                                    "void cutlass::Kernel2<cutlass_80_tensorop_d884gemm_64x32_16x4_nn_align1>(...)");
  CHECK(d884.precision == TensorPrecision::fp64);
  CHECK(d884.tensor_flops == Approx(2.0 * 64 * 64 * 64));
  const OperatorWork c64 = work_of(op("aten::mm", {{64, 64}, {64, 64}}, {"c10::complex<float>", "c10::complex<float>"}));
  CHECK(c64.precision == TensorPrecision::none);
  // a solve from a Cholesky factor: B first, the factor second, 2 N^2 K, batched
  const OperatorWork solve = work_of(op("aten::_cholesky_solve_helper", {{4, 500, 2}, {4, 500, 500}, {}},
                                        {"double", "double", "Scalar"}), gemm);
  CHECK(solve.tensor_flops == Approx(4 * 2.0 * 500 * 500 * 2));
  // cuBLAS's TRSM kernels hold arithmetic beside the operator's GEMMs; a copy launched by the operator only moves bytes
  OperatorIndex ops;
  ops.add("aten::linalg_solve_triangular", Json{{"External id", 1}, {"Input Dims", {{1000, 1000}, {1000, 1000}, Json::array(), Json::array(), Json::array()}},
                                                {"Input type", {"double", "double", "Scalar", "Scalar", "Scalar"}},
                                                {"Concrete Inputs", {"", "", "False", "True", "False"}}});
  const std::string trsm = "void trsm_left_kernel<int, double, 256, 4, true, false, true, false, false>(...)",
                    copy = "void at::native::elementwise_kernel<128, 2, direct_copy_kernel_cuda>";
  const std::vector<KernelRates> r = estimate_kernel_rates(
      {{1, 30.0, ActivityKind::kernel, &gemm, 0}, {1, 10.0, ActivityKind::kernel, &trsm, 0}, {1, 5.0, ActivityKind::kernel, &copy, 0}}, ops);
  // 1e9 FLOPs over the 40 us of matrix kernels: on tensor cores (DMMA) where the name says so, else CUDA cores
  CHECK(r[0].tensor_tflops == Approx(1e9 / 40e-6 / 1e12));
  CHECK(r[0].precision == TensorPrecision::fp64);
  CHECK(r[1].fma_tflops == Approx(r[0].tensor_tflops));
  CHECK(r[1].tensor_tflops == 0);
  CHECK(r[2].fma_tflops == 0);
  CHECK(r[2].memory_tbps > 0);
}

TEST_CASE("bytes of ATen's non-vectorised elementwise loop are also counted as unvectorised; vectorised loops' are not", "[traces][activity]") {
  // split unvectorised_bytes: a broadcast subtraction runs `elementwise_kernel<`, a contiguous one the vectorised loop
  OperatorIndex ops;
  for (int id : {1, 2})
    ops.add("aten::sub", Json{{"External id", id}, {"Input Dims", {{4096, 1}, {4096, 1024}, Json::array()}},
                              {"Input type", {"float", "float", "Scalar"}}});
  const std::string strided = "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float> >(...)",
                    vectorised = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(...)",
                    indexing = "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<...> >(...)";
  ops.add("aten::index", Json{{"External id", 3}, {"Input Dims", {{4096, 1024}, {4096}}}, {"Input type", {"float", "long int"}}});
  const std::vector<KernelRates> r = estimate_kernel_rates(
      {{1, 20.0, ActivityKind::kernel, &strided, 0}, {2, 10.0, ActivityKind::kernel, &vectorised, 0}, {3, 10.0, ActivityKind::kernel, &indexing, 0}},
      ops);
  REQUIRE(r[0].memory_tbps > 0);
  CHECK(r[0].unvectorised_tbps == r[0].memory_tbps);  // every byte it moves goes the scalar way
  CHECK(r[1].memory_tbps > 0);
  CHECK(r[1].unvectorised_tbps == 0);
  CHECK(r[2].unvectorised_tbps == 0);  // the indexing kernel is another path
  Kernel k;
  apply_rates(r[0], k);
  CHECK(k.unvectorised_tbps == r[0].unvectorised_tbps);
}
namespace {

// A one-rank workload of kernels without operator shapes: name, grid blocks, block threads, duration.
struct Launch {
  std::string name;
  std::uint32_t blocks, threads;
  double duration_s;
};

Workload launched(const std::vector<Launch>& launches) {
  Workload wl;
  Rank rank;
  for (const Launch& l : launches) {
    Kernel k;
    k.name_id = static_cast<std::uint32_t>(wl.names.size());
    k.duration_s = l.duration_s;
    wl.names.push_back(l.name);
    LaunchShape s;
    s.grid[0] = l.blocks;
    s.block[0] = l.threads;
    rank.kernels.push_back(k);
    rank.shapes.push_back(s);
  }
  wl.ranks.push_back(rank);
  return wl;
}

}  // namespace

TEST_CASE("ATen elementwise kernels without shapes are sized from their launch and marked launch_elementwise", "[traces][activity][launch_shape]") {
  // Names as torch 2.11 wrote them in the H200 recordings (traces/recordings), cut after the template arguments.
  Workload wl = launched({
      {"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, "
       "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)", 1000, 128, 1e-5},
      {"void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)"
       "::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int)", 1000, 128, 1e-5},
      {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::(anonymous namespace)::"
       "masked_fill_kernel(at::TensorIterator&, c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
       "{lambda(float, bool)#1}>(at::TensorIteratorBase&, at::native::(anonymous namespace)::masked_fill_kernel(at::TensorIterator&, "
       "c10::Scalar const&)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float, bool)#1} const&)::"
       "{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast)", 100, 128, 1e-6},
      {"void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>, 4, "
       "TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>>(int)", 10, 128, 1e-6},
      {"void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul> >(int, "
       "at::native::FillFunctor<c10::BFloat16>, std::array<char*, 1ul>)", 10, 128, 1e-6},
      {"void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}, "
       "std::array<char*, 2ul> >(int)", 10, 128, 1e-6},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, "
       "at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, float>", 3, 512, 1e-5},
      {"nvjet_sm90_tst_128x128", 100, 128, 1e-5},
  });
  REQUIRE(size_elementwise_from_launch(wl) == 6);
  const auto& k = wl.ranks[0].kernels;
  const double vectorized = 1000 * 128 * 8;  // elements: blocks x threads x 8
  CHECK(k[0].work == WorkSource::launch_elementwise);
  CHECK_FALSE(counted_work(k[0]));  // priced by its prior unless a model's below-cap regime reads the size
  CHECK(k[0].memory_tbps == Approx(vectorized * 3 * 2 / 1e-5 / 1e12));  // two bf16 inputs, one output
  CHECK(k[0].alu_tops == Approx(vectorized / 1e-5 / 1e12));
  CHECK(k[0].unvectorised_tbps == 0);
  CHECK(k[1].memory_tbps == Approx(vectorized * 2 * 2 / 1e-5 / 1e12));
  CHECK(k[1].alu_tops == Approx(20 * vectorized / 1e-5 / 1e12));  // gelu's estimated instructions per element
  // the non-vectorised loop: 2 elements per thread from its name; a float self, a bool mask, a float output
  CHECK(k[2].memory_tbps == Approx(100 * 128 * 2 * (4 + 1 + 4) / 1e-6 / 1e12));
  CHECK(k[2].unvectorised_tbps == k[2].memory_tbps);
  CHECK(k[3].memory_tbps == Approx(10 * 128 * 4 * 3 * 4 / 1e-6 / 1e12));  // the unrolled loop names 4 per thread
  CHECK(k[4].memory_fill_tbps == k[4].memory_tbps);
  CHECK(k[4].memory_tbps == Approx(10 * 128 * 8 * 2 / 1e-6 / 1e12));
  CHECK(k[5].memory_tbps == Approx(10 * 128 * 8 * (4 + 2) / 1e-6 / 1e12));  // float in, bf16 out
  CHECK(k[6].work == WorkSource::unknown);  // multi_tensor_apply kernels are sized by the importer's estimate, not here
  CHECK(k[7].work == WorkSource::unknown);  // a GEMM's launch says nothing of its work
  CHECK(size_elementwise_from_launch(wl) == 0);  // sized kernels are not sized again
}

TEST_CASE("a clipped kernel is sized over its recorded duration; sized kernels keep their work", "[traces][activity][launch_shape]") {
  const std::string add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int)";
  Workload wl = launched({{add, 10, 128, 1e-6}, {add, 10, 128, 1e-6}, {add, 10, 128, 1e-6}});
  Rank& r = wl.ranks[0];
  r.clipped.push_back({1, 0.0, 4e-6});   // the busy union kept a quarter of it
  r.kernels[2].work = WorkSource::shapes;  // sized by its operator
  r.kernels[2].memory_tbps = 1;
  CHECK(size_elementwise_from_launch(wl) == 2);
  CHECK(r.kernels[1].memory_tbps == Approx(r.kernels[0].memory_tbps / 4));
  CHECK(r.kernels[2].memory_tbps == 1);
}

TEST_CASE("withholding operator shapes sizes the elementwise kernels from their launch, as such a trace imports", "[traces][activity][launch_shape]") {
  const std::string add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int)";
  Workload wl = launched({{add, 10, 128, 1e-6}, {"nvjet_sm90_tst_128x128", 100, 128, 1e-5}});
  for (Kernel& k : wl.ranks[0].kernels) k.work = WorkSource::shapes, k.memory_tbps = 7;
  CHECK(withhold_operator_work(wl) == 2);
  CHECK(wl.ranks[0].kernels[0].work == WorkSource::launch_elementwise);
  CHECK(wl.ranks[0].kernels[0].memory_tbps == Approx(10 * 128 * 8 * 3 * 4 / 1e-6 / 1e12));
  CHECK(wl.ranks[0].kernels[1].work == WorkSource::unknown);
  CHECK(wl.ranks[0].kernels[1].memory_tbps == 0);
}

TEST_CASE("a ROCm GEMM named for its matrix instruction, or any half-precision product too fast for CUDA cores, runs on matrix units", "[traces][activity]") {
  // A MI300X trace's bf16 [32768, 2048] x [2048, 2048] product: Tensile's `_MI16x16x1_` kernel in 0.55 ms is ~500
  // TFLOP/s. Taken for CUDA-core FMA work it was priced at the FMA's energy per FLOP: ~2.8 kW on an H200 model.
  OperatorIndex ops;
  for (int id : {1, 2, 3})
    ops.add("aten::mm", Json{{"External id", id}, {"Input Dims", {{32768, 2048}, {2048, 2048}}},
                             {"Input type", {"c10::BFloat16", "c10::BFloat16"}}});
  const std::string tensile = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1_AFC",
                    triton = "triton_tem_fused_mm_0", triton_slow = "triton_tem_fused_mm_1";
  const std::vector<ActivityRef> acts = {{1, 550.0, ActivityKind::kernel, &tensile, 0},
                                         {2, 550.0, ActivityKind::kernel, &triton, 0},
                                         {3, 5500.0, ActivityKind::kernel, &triton_slow, 0}};
  const std::vector<KernelRates> r = estimate_kernel_rates(acts, ops);
  const double flops = 2.0 * 32768 * 2048 * 2048;
  CHECK(r[0].tensor_tflops == Approx(flops / 550e-6 / 1e12));  // the name says MFMA
  CHECK(r[0].precision == TensorPrecision::bf16);
  CHECK(r[0].fma_tflops == 0);
  CHECK(r[1].tensor_tflops == Approx(flops / 550e-6 / 1e12));  // 500 TFLOP/s: above any CUDA-core rate (200)
  CHECK(r[1].fma_tflops == 0);
  CHECK(r[2].fma_tflops == Approx(flops / 5500e-6 / 1e12));  // 50 TFLOP/s and no matrix name: CUDA cores, as before
  CHECK(r[2].tensor_tflops == 0);
}

TEST_CASE("AMD matrix-core kernel names are told from other names with \"mi\" in them", "[traces][activity]") {
  OperatorIndex ops;
  ops.add("aten::mm", Json{{"External id", 1}, {"Input Dims", {{64, 64}, {64, 64}}}, {"Input type", {"c10::BFloat16", "c10::BFloat16"}}});
  for (const auto& [name, matrix] : std::vector<std::pair<std::string, bool>>{
           {"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8_SN", true}, {"ck::kernel_gemm_xdlops_v2r3<...>", true},
           {"DeviceGemmXdl<...>", true}, {"gemm_wmma_kernel", true}, {"kernel_mfma_f32_16x16x16bf16", true},
           {"at::native::vectorized_elementwise_kernel<4, minimum_op>", false}, {"my_kernel_mi300_x", false}}) {
    const std::vector<ActivityRef> acts = {{1, 1000.0, ActivityKind::kernel, &name, 0}};  // slow: only the name decides
    const std::vector<KernelRates> r = estimate_kernel_rates(acts, ops);
    INFO(name);
    CHECK((r[0].tensor_tflops > 0) == matrix);
  }
}

TEST_CASE("the operator around a launch is the innermost span holding it on its thread, however many children came before",
          "[traces][activity][launch_link]") {
  OperatorIndex ops;
  ops.add_span({0, 1000, 5, 1});                                                       // a long parent
  for (int i = 0; i < 300; ++i) ops.add_span({1.0 + 3 * i, 2.0 + 3 * i, 5, 100 + i});  // its many short children
  ops.add_span({950, 990, 5, 2});                                                      // and a last child
  ops.add_span({960, 970, 5, 3});                                                      // with a child of its own
  ops.add_span({0, 2000, 6, 9});                                                       // another thread
  ops.finish_spans();
  CHECK(ops.operator_around(5, 965) == 3);   // innermost
  CHECK(ops.operator_around(5, 980) == 2);   // after the grandchild, inside the child
  CHECK(ops.operator_around(5, 995) == 1);   // after 302 children, inside the parent
  CHECK(ops.operator_around(5, 1.5) == 100);
  CHECK(ops.operator_around(5, 1500) == -1);  // outside every span of the thread
  CHECK(ops.operator_around(6, 965) == 9);
  CHECK(ops.operator_around(7, 965) == -1);  // a thread without spans
  CHECK(ops.operator_around(-1, 965) == -1);  // an unknown thread matches nobody's spans
}
