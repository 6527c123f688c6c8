#pragma once
// Per-kernel DVFS on a post-training job, for comparison with the budget controllers: one (SM, memory) clock
// pair per activity identity of the job's programs (sim/planning/clock_plan.hpp: least energy within a
// kernel-time budget), planned on one representative step of one DP rank: its decode steps at the default
// concurrency and the contexts they pass through, the prefills, the training micro-batches and the
// optimizer. The job's activities are coalesced per class (traces/src/grpo.hpp), so an identity is a phase
// and a class ("decode gemm", "train attention", ...), not a recorded kernel: per-kernel decisions inside a
// 5-10 ms decode step would be superseded before they take effect at the 10-100 ms NVML latency anyway
// (the kernel-DVFS study's result).
#include "traces/src/grpo.hpp"

#include <vector>

namespace dvfs {

// Per name id of grpo_activity_names(): the planned pair (the top clocks for names the step does not use).
std::vector<ClockPair> plan_job_clocks(const PreparedGrpoJob& job, const GpuModel& model, double budget_pct);

}  // namespace dvfs
