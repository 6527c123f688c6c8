#include "sim/control/observation.hpp"

#include "sim/control/cap_allocation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dvfs {

std::vector<std::string> observation_names() {
  return {"measured_over_budget", "measured_over_budget_previous", "measured_over_budget_mean10", "caps_over_budget",
          "share_generating",     "share_training",                "share_waiting",               "generation_progress",
          "concurrency_level",    "share_throttled"};
}

std::vector<std::string> action_names(const ActionSpec& a) {
  std::vector<std::string> out{"power_target"};
  if (a.concurrency) out.push_back("concurrency");
  return out;
}

std::vector<int> budget_jobs(const ControlSession& s, int b) {
  std::vector<int> out;
  for (int g : s.setup().budgets[static_cast<std::size_t>(b)].gpus) {
    const int j = s.job_of_gpu(g);
    if (std::find(out.begin(), out.end(), j) == out.end()) out.push_back(j);
  }
  return out;
}

std::vector<double> budget_observation(const ControlSession& s, int b) {
  const PowerBudget& bud = s.setup().budgets[static_cast<std::size_t>(b)];
  const auto& reps = s.reports();
  std::vector<double> o(kObservationSize, 0.0);
  const double B = bud.budget_w;
  auto measured = [&](std::size_t back) {
    return reps.size() > back ? reps[reps.size() - 1 - back].budget_measured_w[static_cast<std::size_t>(b)] / B : 0.0;
  };
  o[0] = measured(0);
  o[1] = measured(1);
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t k = 0; k < 10 && k < reps.size(); ++k, ++n) sum += measured(k);
  o[2] = n ? sum / static_cast<double>(n) : 0.0;
  double caps = 0;
  for (int g : bud.gpus) caps += s.board().gpus[static_cast<std::size_t>(g)].power_cap_w;
  o[3] = caps / B;
  if (!reps.empty()) {
    const IntervalReport& r = reps.back();
    const double G = static_cast<double>(bud.gpus.size());
    for (int g : bud.gpus) {
      const GpuPhase p = r.gpu_phase[static_cast<std::size_t>(g)];
      o[4] += (p == GpuPhase::generating) / G;
      o[5] += (p == GpuPhase::training) / G;
      o[6] += (p == GpuPhase::waiting || p == GpuPhase::host) / G;
      o[9] += r.gpu_throttled[static_cast<std::size_t>(g)] / G;
    }
  }
  const std::vector<int> jobs = budget_jobs(s, b);
  double prog = 0, level = 0;
  for (int j : jobs) {
    prog += s.generation_progress(j);
    const GrpoJobSpec& spec = s.setup().jobs[static_cast<std::size_t>(j)]->spec;
    const int c = s.board().jobs[static_cast<std::size_t>(j)].concurrency;
    level += spec.concurrency_max > spec.concurrency_min
                 ? static_cast<double>(c - spec.concurrency_min) / (spec.concurrency_max - spec.concurrency_min)
                 : 1.0;
  }
  if (!jobs.empty()) o[7] = prog / static_cast<double>(jobs.size()), o[8] = level / static_cast<double>(jobs.size());
  return o;
}

void allocate_budget_caps(ControlSession& s, int b, double target_w, double headroom_w) {
  const PowerBudget& bud = s.setup().budgets[static_cast<std::size_t>(b)];
  std::vector<double> measured, caps;
  const auto& reps = s.reports();
  for (int g : bud.gpus) {
    measured.push_back(reps.empty() ? s.setup().max_cap_w : reps.back().gpu_measured_w[static_cast<std::size_t>(g)]);
    caps.push_back(s.board().gpus[static_cast<std::size_t>(g)].power_cap_w);
  }
  const std::vector<double> out = allocate_caps(target_w, measured, caps, s.setup().min_cap_w, s.setup().max_cap_w, headroom_w);
  for (std::size_t i = 0; i < bud.gpus.size(); ++i) s.board().gpus[static_cast<std::size_t>(bud.gpus[i])].power_cap_w = out[i];
}

void apply_budget_action(ControlSession& s, int b, const std::vector<double>& a, const ActionSpec& spec) {
  if (static_cast<int>(a.size()) != spec.size())
    throw std::invalid_argument("apply_budget_action: expected " + std::to_string(spec.size()) + " action values");
  const PowerBudget& bud = s.setup().budgets[static_cast<std::size_t>(b)];
  const double a0 = std::clamp(a[0], -1.0, 1.0);
  allocate_budget_caps(s, b, bud.budget_w * (1.0 + spec.target_span * a0), spec.headroom_w);
  if (spec.concurrency) {
    const double u = (std::clamp(a[1], -1.0, 1.0) + 1.0) / 2.0;
    for (int j : budget_jobs(s, b)) {
      const GrpoJobSpec& js = s.setup().jobs[static_cast<std::size_t>(j)]->spec;
      s.board().jobs[static_cast<std::size_t>(j)].concurrency =
          js.concurrency_min + static_cast<int>(std::lround(u * (js.concurrency_max - js.concurrency_min)));
    }
  }
}

double budget_reward(const ControlSession& s, int b, const RewardSpec& spec) {
  if (s.reports().empty()) return 0;
  const IntervalReport& r = s.reports().back();
  double tokens = 0;
  for (int j : budget_jobs(s, b)) tokens += r.job_generated_tokens[static_cast<std::size_t>(j)] + r.job_trained_tokens[static_cast<std::size_t>(j)];
  const double ratio = r.budget_measured_w[static_cast<std::size_t>(b)] / s.setup().budgets[static_cast<std::size_t>(b)].budget_w;
  return tokens / spec.tokens_scale - spec.violation_penalty * (ratio > 1.0 ? 1.0 : 0.0) - spec.excess_penalty * std::max(0.0, ratio - 1.0);
}

}  // namespace dvfs
