#pragma once
// The policies that run a critical-path plan (Perseus): before each forward / backward the pipeline
// engine announces (Policy::before_computation), the GPU asks for the clock the plan gives that
// computation. Every other instruction (transfers, waits, the optimizer) keeps the clock of the
// computation before it, as Perseus's runtime does.
//   critical-path             one SM clock per computation
//   critical-path+per-kernel  per computation either one clock or one of its per-kernel plans (a pair
//                             per kernel, requested before each kernel as the per-kernel policy does)
// Requests go through the driver (NVML) and pay its switch latency.
#include "sim/policies/policy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dvfs {

// What one computation runs: a clock pair, or (variant >= 0) a per-kernel sequence of pairs.
struct ComputationSetting {
  ClockPair clocks;
  int variant = -1;  // index into the stage's kernel plans
};

// One stage's plan, by position in the stage's schedule (ComputationInfo::index): a setting and the
// planned duration of every computation, plus the per-kernel sequences its settings may refer to (one
// pair per kernel of the computation's range).
struct StageClockPlan {
  int stage = 0;
  std::vector<ComputationSetting> settings;
  std::vector<double> planned_s;
  std::vector<std::vector<ClockPair>> kernel_plans;
  // Ask for a clock this long before the plan needs it (the switch latency): the request for the
  // computation running `lead_s` from now goes out now. 0 = ask when the computation starts.
  double lead_s = 0;
};

class CriticalPathPolicy : public Policy {
 public:
  CriticalPathPolicy(std::string name, std::shared_ptr<const StageClockPlan> plan);
  std::string name() const override { return name_; }
  ClockPair initial_clocks() const override;
  bool wants_kernel_events() const override { return !plan_->kernel_plans.empty() || plan_->lead_s > 0; }
  std::optional<ClockPair> before_computation(const ComputationInfo& c, const GpuTelemetry& t) override;
  // Per-kernel computations: kernels are counted from the start of the computation (the engine
  // replays a computation's kernels in order), so the plan does not depend on where they are stored.
  // Otherwise, with a lead: the clock of the computation the plan has running `lead_s` from now.
  std::optional<ClockPair> before_kernel(const Kernel&, const GpuTelemetry& t) override;

 private:
  ClockPair ahead(double now_s) const;
  std::string name_;
  std::shared_ptr<const StageClockPlan> plan_;
  const std::vector<ClockPair>* sequence_ = nullptr;  // the running computation's per-kernel plan
  std::size_t next_ = 0;
  int current_ = -1;        // schedule position of the running computation
  double current_end_s_ = 0;  // when the plan has it end
};

}  // namespace dvfs
