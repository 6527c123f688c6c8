#pragma once
// Policies that follow a clock plan made before the replay (sim/planning/): a pair per kernel,
// requested through the driver (NVML) just before the kernel starts, so every change pays the
// switch latency. The online variant must request the pair before it knows which kernel comes
// next: it predicts the next kernel's identity from the stream so far (training iterations repeat,
// so it detects the period and follows it) and counts its hits.
#include "sim/policies/policy.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace dvfs {

class PlanPolicy : public Policy {
 public:
  // pair_of_kernel: per kernel of `rank`, an index into `pairs`.
  PlanPolicy(std::string name, const Rank& rank, std::vector<ClockPair> pairs, std::vector<std::uint32_t> pair_of_kernel);
  std::string name() const override { return name_; }
  ClockPair initial_clocks() const override;
  bool wants_kernel_events() const override { return true; }
  std::optional<ClockPair> before_kernel(const Kernel& k, const GpuTelemetry&) override;

 private:
  std::string name_;
  const Rank& rank_;
  std::vector<ClockPair> pairs_;
  std::vector<std::uint32_t> pair_of_kernel_;
};

struct PredictionStats {
  std::uint64_t predictions = 0, hits = 0;
  std::uint64_t safe_requests = 0;  // kernels run at the safe pair because the prediction was not trusted
  std::size_t period = 0;  // the repeat period in kernels it locked onto last (0: none)
};

class OnlinePlanPolicy : public Policy {
 public:
  // identity: per kernel of `rank`, its identity; pair_of_identity: the pair planned for it.
  // safe: the pair requested while the prediction is not to be trusted (no repeat period locked, or the last
  // prediction missed): a wrong low clock on a compute-bound kernel costs far more time than a high clock saves.
  OnlinePlanPolicy(const Rank& rank, std::vector<std::uint32_t> identity, std::vector<ClockPair> pair_of_identity,
                   std::shared_ptr<PredictionStats> stats, ClockPair safe);
  std::string name() const override { return "per-kernel-online"; }
  ClockPair initial_clocks() const override;
  bool wants_kernel_events() const override { return true; }
  std::optional<ClockPair> before_kernel(const Kernel& k, const GpuTelemetry&) override;

 private:
  std::uint32_t predict() const;
  void find_period();

  const Rank& rank_;
  std::vector<std::uint32_t> identity_;
  std::vector<ClockPair> pair_of_identity_;
  std::shared_ptr<PredictionStats> stats_;
  std::vector<std::uint32_t> history_;
  std::size_t period_ = 0;
  ClockPair safe_;
  bool last_hit_ = false;
};

}  // namespace dvfs
