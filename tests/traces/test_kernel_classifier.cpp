#include "models/src/model_registry.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"

#include <catch2/catch.hpp>

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
