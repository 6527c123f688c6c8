#include "sim/validate/work_beyond_peak.hpp"

#include <algorithm>
#include <map>

namespace dvfs {

namespace {

double tensor_peak_tflops(const GpuSpecs& specs, TensorPrecision p) {
  switch (p) {
    case TensorPrecision::fp8: return 2.0 * specs.bf16_dense_tflops;
    case TensorPrecision::tf32: return 0.5 * specs.bf16_dense_tflops;
    case TensorPrecision::fp64: return specs.bf16_dense_tflops / 16.0;  // [estimate] H200 67 vs 989 dense bf16, A100 19.5 vs 312
    default: return specs.bf16_dense_tflops;
  }
}

}  // namespace

Json work_beyond_peak(const Workload& wl, const GpuSpecs& specs, double margin, std::size_t top) {
  const double memory_peak_tbps = specs.mem_bandwidth_gbs / 1000.0;
  const bool checked = memory_peak_tbps > 0 || specs.bf16_dense_tflops > 0;
  struct Named {
    std::size_t kernels = 0;
    double seconds = 0, memory_tbps = 0, tensor_tflops = 0;
  };
  std::map<std::uint32_t, Named> by_name;
  double total_s = 0, beyond_s = 0;
  std::size_t beyond = 0;
  for (const Rank& rank : wl.ranks)
    for (const Kernel& k : rank.kernels) {
      total_s += k.duration_s;
      // an NCCL transfer's bytes are its calls' own, not an estimate to check (an L2-resident exchange runs past DRAM's peak)
      if (!checked || !counted_work(k) || k.work == WorkSource::transfer_bytes) continue;
      const bool memory = memory_peak_tbps > 0 && k.memory_tbps > margin * memory_peak_tbps;
      const bool tensor = specs.bf16_dense_tflops > 0 && k.tensor_tflops > margin * tensor_peak_tflops(specs, k.tensor_precision);
      if (!memory && !tensor) continue;
      ++beyond;
      beyond_s += k.duration_s;
      Named& n = by_name[k.name_id];
      ++n.kernels;
      n.seconds += k.duration_s;
      n.memory_tbps = std::max(n.memory_tbps, static_cast<double>(k.memory_tbps));
      n.tensor_tflops = std::max(n.tensor_tflops, static_cast<double>(k.tensor_tflops));
    }
  std::vector<std::pair<std::uint32_t, Named>> ranked(by_name.begin(), by_name.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  Json list = Json::array();
  for (std::size_t i = 0; i < ranked.size() && i < top; ++i) {
    const Named& n = ranked[i].second;
    list.push_back({{"name", ranked[i].first < wl.names.size() ? wl.names[ranked[i].first] : std::string()},
                    {"kernels", n.kernels},
                    {"seconds", n.seconds},
                    {"memory_tbps", n.memory_tbps},
                    {"tensor_tflops", n.tensor_tflops}});
  }
  return {{"checked", checked},
          {"margin", margin},
          {"kernels", beyond},
          {"share_of_kernel_time", total_s > 0 ? beyond_s / total_s : 0.0},
          {"top", list}};
}

}  // namespace dvfs
