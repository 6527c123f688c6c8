#include "sim/control/job_clock_plan.hpp"

#include "sim/planning/clock_plan.hpp"

#include <algorithm>
#include <random>

namespace dvfs {

std::vector<ClockPair> plan_job_clocks(const PreparedGrpoJob& job, const GpuModel& model, double budget_pct) {
  const GrpoJobSpec& j = job.spec;
  Rank r;
  std::vector<Kernel> ks;
  const int n = std::max(1, j.sequences_per_step(j.group_size) / j.dp);
  if (j.generation) {
    // Decode steps of a wave of min(C, n) sequences from the prompt to the median response length, the
    // prefills of the sequences, weighted by how many steps each context range covers.
    const int c = std::min(j.concurrency, n);
    const int steps = static_cast<int>(j.response_median_tokens);
    for (int t = 0; t < steps; t += std::max(1, steps / 16)) {
      job.decode.step(c, static_cast<double>(c) * (j.prompt_tokens + t), job.top_sm_mhz, job.top_mem_mhz, ks);
      for (Kernel k : ks) {
        k.duration_s *= std::max(1, steps / 16) * (n / static_cast<double>(c));
        r.kernels.push_back(k);
      }
    }
    for (Kernel k : job.training.prefill_one) {
      k.duration_s *= n;
      r.kernels.push_back(k);
    }
  }
  const int micro = (n + j.train_micro_batch - 1) / j.train_micro_batch;
  for (const auto* prog : {&job.training.reference_forward, &job.training.forward, &job.training.backward})
    for (Kernel k : *prog) {
      if (prog == &job.training.reference_forward && !(j.generation && j.reference_forward)) break;
      k.duration_s *= micro;
      r.kernels.push_back(k);
    }
  for (const Kernel& k : job.training.optimizer) r.kernels.push_back(k);
  for (Kernel& k : r.kernels) k.gap_before_s = 0;
  Workload wl;
  wl.names = grpo_activity_names();
  const double fastest = plan_clocks(wl, r, model, PlanGrouping::per_kernel, 1e30).fastest_kernel_time_s;
  const ClockPlan plan = plan_clocks(wl, r, model, PlanGrouping::per_kernel, (1.0 + budget_pct / 100.0) * fastest);
  std::vector<ClockPair> out(wl.names.size(), model.max_clocks());
  for (std::size_t i = 0; i < r.kernels.size(); ++i) out[r.kernels[i].name_id] = plan.pair_for_kernel(i);
  return out;
}

}  // namespace dvfs
