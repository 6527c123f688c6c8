#include "sim/policies/plan_policy.hpp"

#include <algorithm>

namespace dvfs {

namespace {
constexpr std::size_t kMatchWindow = 16;   // kernels that must repeat to accept a period
constexpr std::size_t kMaxPeriod = 200000; // longest iteration (kernels) searched for
}  // namespace

PlanPolicy::PlanPolicy(std::string name, const Rank& rank, std::vector<ClockPair> pairs,
                       std::vector<std::uint32_t> pair_of_kernel)
    : name_(std::move(name)), rank_(rank), pairs_(std::move(pairs)), pair_of_kernel_(std::move(pair_of_kernel)) {}

ClockPair PlanPolicy::initial_clocks() const {
  return pair_of_kernel_.empty() ? pairs_.front() : pairs_[pair_of_kernel_.front()];
}

std::optional<ClockPair> PlanPolicy::before_kernel(const Kernel& k, const GpuTelemetry&) {
  const std::size_t i = static_cast<std::size_t>(&k - rank_.kernels.data());
  if (i >= pair_of_kernel_.size()) return std::nullopt;
  return pairs_[pair_of_kernel_[i]];
}

OnlinePlanPolicy::OnlinePlanPolicy(const Rank& rank, std::vector<std::uint32_t> identity,
                                   std::vector<ClockPair> pair_of_identity, std::shared_ptr<PredictionStats> stats,
                                   ClockPair safe)
    : rank_(rank), identity_(std::move(identity)), pair_of_identity_(std::move(pair_of_identity)), stats_(std::move(stats)),
      safe_(safe) {}

ClockPair OnlinePlanPolicy::initial_clocks() const {
  // It starts at the pair planned for identity 0 (the first kernel of the trace): a deterministic start,
  // and one that favours it by one kernel (the first prediction is counted as a miss regardless).
  return pair_of_identity_.empty() ? ClockPair{} : pair_of_identity_.front();
}

std::uint32_t OnlinePlanPolicy::predict() const {
  if (history_.empty()) return 0;
  if (period_ > 0 && history_.size() >= period_) return history_[history_.size() - period_];
  return history_.back();  // no period yet: assume the last kernel repeats
}

void OnlinePlanPolicy::find_period() {
  const std::size_t n = history_.size();
  if (n < 2 * kMatchWindow) return;
  const std::size_t max_p = std::min(kMaxPeriod, n - kMatchWindow);
  for (std::size_t p = 1; p <= max_p; ++p) {
    bool match = true;
    for (std::size_t w = 0; w < kMatchWindow && match; ++w) match = history_[n - 1 - w] == history_[n - 1 - w - p];
    if (match) {
      period_ = p;
      return;
    }
  }
  period_ = 0;
}

std::optional<ClockPair> OnlinePlanPolicy::before_kernel(const Kernel& k, const GpuTelemetry&) {
  const std::size_t i = static_cast<std::size_t>(&k - rank_.kernels.data());
  if (i >= identity_.size()) return std::nullopt;
  // Decide from the past only, then learn what actually came.
  const std::uint32_t guess = predict();
  const std::uint32_t actual = identity_[i];
  ++stats_->predictions;
  const bool hit = guess == actual && !history_.empty();
  if (hit) ++stats_->hits;
  // Trust the guess only while a period is locked and the last guess was right; else the safe pair.
  const bool trusted = period_ > 0 && last_hit_;
  history_.push_back(actual);
  last_hit_ = hit;
  if (!hit) find_period();
  stats_->period = period_;
  if (!trusted) {
    ++stats_->safe_requests;
    return safe_;
  }
  return pair_of_identity_[std::min<std::size_t>(guess, pair_of_identity_.size() - 1)];
}

}  // namespace dvfs
