#include "models/src/model_registry.hpp"
#include "sim/core/json_util.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

using namespace dvfs;

TEST_CASE("kernel names of the shipped H200 trace fall into the expected classes", "[traces][classifier]") {
  Classifier c = Classifier::load_default();
  CHECK(c.kernel_class("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN", ActivityKind::kernel) == KernelClass::gemm);
  CHECK(c.kernel_class("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_1x4x1_cga1x1x1_kernel0_0",
                       ActivityKind::kernel) == KernelClass::attention);
  CHECK(c.kernel_class("void cudnn::fusion::compute_dot_do_o_specialized<true, 128>(void const*)", ActivityKind::kernel) ==
        KernelClass::attention);
  CHECK(c.kernel_class("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
                       "namespace)::FusedOptimizerTensorListMetadata<4>>",
                       ActivityKind::kernel) == KernelClass::optimizer);
  CHECK(c.kernel_class("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int)",
                       ActivityKind::kernel) == KernelClass::normalization);
  CHECK(c.kernel_class("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float>", ActivityKind::kernel) ==
        KernelClass::normalization);
  CHECK(c.kernel_class("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16>>", ActivityKind::kernel) ==
        KernelClass::reduction);
  CHECK(c.kernel_class("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>", ActivityKind::kernel) ==
        KernelClass::reduction);
  CHECK(c.kernel_class("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda>", ActivityKind::kernel) ==
        KernelClass::copy);
  CHECK(c.kernel_class("void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda>", ActivityKind::kernel) ==
        KernelClass::elementwise);
  CHECK(c.kernel_class("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", ActivityKind::kernel) ==
        KernelClass::communication);
  CHECK(c.kernel_class("some_unknown_kernel", ActivityKind::kernel) == KernelClass::other);
  CHECK(c.kernel_class("anything", ActivityKind::memset) == KernelClass::copy);
}

TEST_CASE("cuDNN 7/8 convolution and batch-norm kernels of V100-era traces and AMD Tensile GEMMs fall into gemm and normalization; depthwise engines stay other",
          "[traces][classifier]") {
  // names from kineto's tb_plugin ResNet-50 samples (V100, June 2021) and the shipped H200 recordings
  Classifier c = Classifier::load_default();
  CHECK(c.kernel_class("volta_scudnn_128x64_relu_interior_nn_v1", ActivityKind::kernel) == KernelClass::gemm);  // not elementwise for "relu"
  CHECK(c.kernel_class("volta_h884cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1", ActivityKind::kernel) == KernelClass::gemm);
  CHECK(c.kernel_class("void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int)", ActivityKind::kernel) ==
        KernelClass::gemm);
  CHECK(c.kernel_class("void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int)", ActivityKind::kernel) ==
        KernelClass::gemm);
  CHECK(c.kernel_class("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams)",
                       ActivityKind::kernel) == KernelClass::gemm);
  CHECK(c.kernel_class("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>(cudnnTensorStruct, float const*)",
                       ActivityKind::kernel) == KernelClass::normalization);
  CHECK(c.kernel_class("void cudnn::bn_bw_1C11_singleread_spec<__half2, 512, 1, 2, 0>(cudnn::bn_bw_1C11_args<__half2>)", ActivityKind::kernel) ==
        KernelClass::normalization);
  CHECK(c.kernel_class("void convolve_common_engine_float_NHWC<__nv_bfloat16, __nv_bfloat16, 128, 5, 5, 3, 3, 3, true>", ActivityKind::kernel) ==
        KernelClass::other);
  CHECK(c.kernel_class("dgrad2d_c1_k1_nhwc_specialized", ActivityKind::kernel) == KernelClass::other);
  // AMD's Tensile GEMMs (HTA's ROCm 6.2 MI250 trace)
  CHECK(c.kernel_class("Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1", ActivityKind::kernel) == KernelClass::gemm);
}

TEST_CASE("pooling, top-k, scans, group-norm statistics and cuDNN layout conversions leave class other", "[traces][classifier]") {
  // names from the shipped recordings (ResNet / UNet / point-cloud / beam-search jobs) and HTA's traces
  Classifier c = Classifier::load_default();
  const auto of = [&](const char* name) { return c.kernel_class(name, ActivityKind::kernel); };
  CHECK(of("void at::native::(anonymous namespace)::max_pool_forward_nchw<c10::Half, int>(int, c10::Half const*)") == KernelClass::reduction);
  CHECK(of("void at::native::(anonymous namespace)::max_pool_backward_nhwc<c10::BFloat16, float>(c10::BFloat16 const*)") ==
        KernelClass::reduction);
  CHECK(of("void cudnn::cnn::reduce_wgrad_nchw_helper<float, __half>(void*, void const*, float, int, int)") == KernelClass::reduction);
  CHECK(of("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const>)") ==
        KernelClass::reduction);
  CHECK(of("at::native::mbtopk::computeDigitCumSum(short*, unsigned int*, unsigned int)") == KernelClass::reduction);
  CHECK(of("void at::native::mbtopk::fill<unsigned int, unsigned int>(unsigned int*, unsigned int, unsigned int)") ==
        KernelClass::elementwise);  // top-k's own fill stays a fill
  CHECK(of("void at::native::tensor_kernel_scan_innermost_dim<float, std::plus<float> >(float*, float const*)") == KernelClass::reduction);
  CHECK(of("void at::cuda::kernelHistogram1D<long, long, long, 1, 2, -1>(at::cuda::detail::TensorInfo<long>)") == KernelClass::reduction);
  CHECK(of("void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float>(long, float, float const*, float*, float*)") ==
        KernelClass::normalization);
  CHECK(of("void at::native::(anonymous namespace)::ComputeFusedParamsCUDAKernel<c10::Half>(long, long, long)") ==
        KernelClass::normalization);
  CHECK(of("void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>()") ==
        KernelClass::copy);
  CHECK(of("void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>()") ==
        KernelClass::copy);
  CHECK(of("void tensorTransformGeneric<__half, __half, float, true, false, false, (cudnnKernelDataType_t)0>(cudnnTensorTransformStruct)") ==
        KernelClass::copy);
}

TEST_CASE("torch.compile's Triton kernels fall into classes by Inductor's name prefix", "[traces][classifier]") {
  Classifier c = Classifier::load_default();
  CHECK(c.kernel_class("triton_poi_fused__to_copy_add_mul_0", ActivityKind::kernel) == KernelClass::elementwise);
  CHECK(c.kernel_class("triton_red_fused__log_softmax_backward_data_nll_loss_backward_7", ActivityKind::kernel) ==
        KernelClass::reduction);
  CHECK(c.kernel_class("triton_per_fused_add_sum_3", ActivityKind::kernel) == KernelClass::reduction);
  CHECK(c.kernel_class("triton_per_fused_native_layer_norm_native_layer_norm_backward_12", ActivityKind::kernel) ==
        KernelClass::normalization);  // the earlier class's pattern decides
  CHECK(c.kernel_class("triton_tem_fused_addmm_0", ActivityKind::kernel) == KernelClass::gemm);
}

TEST_CASE("no kernel of the shipped GPT-3 XL trace is left unclassified", "[traces][classifier]") {
  Classifier c = Classifier::load_default();
  Workload wl = import_kineto(data_dir() + "/traces/recordings/h200-gpt3xl/trace.json.gz", c);
  for (const Kernel& k : wl.ranks[0].kernels) {
    INFO(wl.names[k.name_id]);
    CHECK(k.cls != KernelClass::other);
  }
}

TEST_CASE("annotations name phases and steps", "[traces][classifier]") {
  Classifier c = Classifier::load_default();
  CHECK(c.annotation_phase("forward") == Phase::forward);
  CHECK(c.annotation_phase("backward") == Phase::backward);
  CHECK(c.annotation_phase("Optimizer.step#AdamW.step") == Phase::optimizer);
  CHECK(c.annotation_phase("optimizer") == Phase::optimizer);
  CHECK(c.annotation_phase("layer3.attn") == Phase::other);
  CHECK(c.is_step_annotation("step12"));
  CHECK(c.is_step_annotation("ProfilerStep#3"));
  CHECK_FALSE(c.is_step_annotation("stepper"));
}

TEST_CASE("a plain-text pattern finds a match exactly where std::regex_search does", "[traces][classifier]") {
  const Json rules = read_json_file(Classifier::default_path());
  std::vector<std::string> patterns = {"a?",      "^a?b",   "ab?c?",  "x\\.y",  "^Optimizer\\.", "layer_?norm", "cub::",
                                       "^Memcpy", "a?a?aa", "step #", "a-b",    "^",             "",            "kernel_?_?x"};
  for (const Json& rule : rules["kernel_classes"])
    for (const Json& p : rule["patterns"]) patterns.push_back(p.get<std::string>());
  for (const Json& rule : rules["phases"])
    for (const Json& p : rule["patterns"]) patterns.push_back(p.get<std::string>());
  for (const Json& p : rules["steps"]) patterns.push_back(p.get<std::string>());
  std::vector<std::string> names = {"", "a", "b", "ab", "abc", "ac", "AC", "aab", "aaa", "x.y", "xzy", "X.Y",
                                    "Optimizer.step#AdamW.step", "optimizer", "zero_grad", "LayerNorm", "layer_norm", "LAYER__NORM",
                                    "cub::DeviceScan", "Memcpy HtoD", "memcpy", "a Memcpy", "step #3", "step3", "A-B", "kernel__x",
                                    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "SPLITKREDUCE", "forward", "bwd", "\xc3\x89t\xff"};
  for (const Json& n : rules["kernel_classes"]) names.push_back(n["why"].get<std::string>());
  // the kernel names of a recorded trace
  Workload wl = import_kineto(data_dir() + "/traces/recordings/h200-gpt3xl/trace.json.gz", Classifier::load_default());
  names.insert(names.end(), wl.names.begin(), wl.names.end());
  names.insert(names.end(), wl.annotation_names.begin(), wl.annotation_names.end());
  std::size_t plain = 0;
  for (const std::string& p : patterns) {
    const NamePattern fast(p);
    const std::regex re(p, std::regex::ECMAScript | std::regex::icase);
    plain += fast.plain();
    for (const std::string& n : names) {
      INFO("pattern \"" << p << "\" name \"" << n << "\"");
      CHECK(fast.search(n) == std::regex_search(n, re));
    }
  }
  CHECK(plain >= patterns.size() - 3);  // all but the step rules ("\\s*", "\\d+", "$") take the text search
  CHECK_FALSE(NamePattern("^step\\s*#?\\d+$").plain());
  CHECK_FALSE(NamePattern("a|b").plain());
  CHECK_FALSE(NamePattern("a??").plain());
  CHECK_THROWS_AS(NamePattern("a("), std::regex_error);
}
