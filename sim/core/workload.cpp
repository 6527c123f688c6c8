#include "sim/core/workload.hpp"

namespace dvfs {

static const char* const kClassNames[kKernelClassCount] = {
    "gemm", "attention", "elementwise", "reduction", "normalization",
    "copy", "optimizer", "communication", "other"};

const char* to_string(KernelClass c) { return kClassNames[static_cast<int>(c)]; }

bool kernel_class_from_string(const std::string& s, KernelClass& out) {
  for (int i = 0; i < kKernelClassCount; ++i) {
    if (s == kClassNames[i]) {
      out = static_cast<KernelClass>(i);
      return true;
    }
  }
  return false;
}

const char* to_string(ActivityKind k) {
  switch (k) {
    case ActivityKind::kernel: return "kernel";
    case ActivityKind::memcpy: return "memcpy";
    case ActivityKind::memset: return "memset";
  }
  return "kernel";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward: return "backward";
    case Phase::optimizer: return "optimizer";
    case Phase::other: return "other";
  }
  return "other";
}

const char* to_string(TensorPrecision p) {
  switch (p) {
    case TensorPrecision::none: return "none";
    case TensorPrecision::bf16: return "bf16";
    case TensorPrecision::fp8: return "fp8";
    case TensorPrecision::tf32: return "tf32";
    case TensorPrecision::fp64: return "fp64";
  }
  return "none";
}

const char* to_string(TensorIssue t) { return t == TensorIssue::warp ? "mma.sync" : "wgmma"; }

const char* to_string(WorkSource s) {
  switch (s) {
    case WorkSource::unknown: return "unknown";
    case WorkSource::shapes: return "shapes";
    case WorkSource::copy_engine: return "copy_engine";
    case WorkSource::launch_shape: return "launch_shape";
    case WorkSource::launch_elementwise: return "launch_elementwise";
    case WorkSource::transfer_bytes: return "transfer_bytes";
  }
  return "unknown";
}

std::array<float, kWorkRates> work_rates(const Kernel& k) {
  return {k.tensor_tflops, k.fma_tflops, k.alu_tops, k.memory_tbps, k.memory_fill_tbps, k.unvectorised_tbps};
}

void set_work_rates(Kernel& k, const std::array<float, kWorkRates>& r) {
  k.tensor_tflops = r[kTensorRate], k.fma_tflops = r[kFmaRate], k.alu_tops = r[kAluRate], k.memory_tbps = r[kMemoryRate];
  k.memory_fill_tbps = r[kMemoryFillRate], k.unvectorised_tbps = r[kUnvectorisedRate];
}

void scale_work_rates(Kernel& k, double factor) {
  std::array<float, kWorkRates> r = work_rates(k);
  for (float& v : r) v = static_cast<float>(v * factor);
  set_work_rates(k, r);
}

double transfer_bytes(const Workload& wl, const Kernel& k) {
  double bytes = 0;
  for (const CollectiveCall& c : calls_of(wl, k)) {
    if (!is_transfer(c.kind) || !(c.bytes > 0)) return 0.0;
    bytes += c.bytes;
  }
  return bytes;
}

void price_transfer_by_bytes(const Workload& wl, Kernel& k, double recorded_s) {
  if (k.work != WorkSource::unknown || !(recorded_s > 0)) return;
  const double bytes = transfer_bytes(wl, k);
  if (!(bytes > 0)) return;
  set_work_rates(k, {});
  k.work = WorkSource::transfer_bytes;
  k.memory_tbps = static_cast<float>(bytes / recorded_s / 1e12);
}

static const char* const kCollectiveNames[] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast",
                                               "all_to_all", "send", "recv"};

const char* to_string(CollectiveKind k) { return kCollectiveNames[static_cast<int>(k)]; }


double bounded_step_lead(const Rank& rank, const Step& step, double lead_s) {
  if (lead_s < 0) return 0;
  if (step.first_kernel <= 0) return lead_s;
  const double gap = rank.kernels[static_cast<std::size_t>(step.first_kernel)].gap_before_s;
  return lead_s < gap ? lead_s : gap;
}

std::size_t Workload::kernel_count() const {
  std::size_t n = 0;
  for (const auto& r : ranks) n += r.kernels.size();
  return n;
}

double class_prior_kernel_time_share(const Workload& wl) {
  double prior_s = 0, kernel_s = 0;
  for (const Rank& r : wl.ranks)
    for (const Kernel& k : r.kernels) {
      if (k.kind != ActivityKind::kernel) continue;
      kernel_s += k.duration_s;
      if (!counted_work(k)) prior_s += k.duration_s;
    }
  return kernel_s > 0 ? prior_s / kernel_s : 0.0;
}

}  // namespace dvfs
