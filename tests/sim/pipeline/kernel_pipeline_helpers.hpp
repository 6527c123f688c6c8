#pragma once
// What the kernel-level pipeline tests build on: the A100 model, kernels recorded at its top clocks (so at
// `max` a kernel takes its recorded time) and a run of a KernelPipeline under one named policy.
#include "models/src/model_registry.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/policies/policy_factory.hpp"

#include <string>

namespace pipeline_test {

inline const dvfs::GpuModel& a100() {
  static const dvfs::GpuModel m = dvfs::load_gpu_model("a100-sxm4");
  return m;
}

inline dvfs::Kernel top_clock_kernel(double s, dvfs::KernelClass cls = dvfs::KernelClass::gemm) {
  dvfs::Kernel k;
  k.cls = cls;
  k.duration_s = s;
  k.recorded_sm_mhz = 1410;
  k.recorded_mem_mhz = 1593;
  return k;
}

inline dvfs::KernelPipelineResult run(const dvfs::KernelPipeline& kp, const dvfs::PolicySpec& ps) {
  dvfs::ReplayOptions opts;
  opts.timeline_interval_s = 0;
  return dvfs::simulate_kernel_pipeline(kp, a100(), dvfs::make_policy_factory(ps, a100(), ""), opts);
}

inline dvfs::KernelPipelineResult run(const dvfs::KernelPipeline& kp, const std::string& policy = "max") {
  dvfs::PolicySpec ps;
  ps.name = policy;
  return run(kp, ps);
}

}  // namespace pipeline_test
