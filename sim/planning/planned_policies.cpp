#include "sim/planning/planned_policies.hpp"

#include "models/src/switch_latency.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/errors.hpp"
#include "sim/planning/clock_plan.hpp"
#include "sim/policies/plan_policy.hpp"

#include <algorithm>
#include <memory>

namespace dvfs {

namespace {

// The engine names GPUs by rank id; plans are indexed by the rank's position in the workload.
std::size_t rank_position(const Workload& wl, int rank_id) {
  for (std::size_t i = 0; i < wl.ranks.size(); ++i)
    if (wl.ranks[i].id == rank_id) return i;
  throw InputError("workload", "ranks", "no rank with id " + std::to_string(rank_id));
}

// Planned clocks are locked through the driver; the GPU's power limit still throttles under them.
ReplayOptions capped(const ReplayOptions& o) {
  ReplayOptions c = o;
  c.firmware_power_cap = true;
  return c;
}

std::vector<RankOutcome> replay_pairs(const Scenario& sc, const Workload& wl, const GpuModel& model,
                                      const std::vector<ClockPair>& pairs,
                                      const std::vector<std::vector<std::uint32_t>>& per_rank, const std::string& name) {
  PolicyFactory f = [&](int rank) {
    const std::size_t r = rank_position(wl, rank);
    return std::make_unique<PlanPolicy>(name, wl.ranks[r], pairs, per_rank[r]);
  };
  return run_engine(wl, model, f, capped(sc.replay), sc.mode, cluster_for(sc, model));
}

// Merges a per-kernel plan into regions: walking the kernels in order from `start`, a run of kernels
// that wants another pair is switched to only if what it gains once the switch has taken effect
// (kernels that start within the latency still run at the old pair) exceeds the transition energy.
// The gain is counted in the plan's own currency, energy + lambda x time, so that at zero latency
// every switch the plan wanted is made (and the time budget it met is kept).
std::vector<std::uint32_t> merge_regions(const Rank& rank, const GpuModel& model, const std::vector<ClockPair>& pairs,
                                         const std::vector<std::uint32_t>& wanted, std::uint32_t start,
                                         double latency_s, double switch_energy_j, double lambda) {
  const std::size_t nsm = model.sm_clocks_mhz().size();
  auto cost = [&](const Kernel& k, std::uint32_t c, double& t) {
    const int si = static_cast<int>(c % nsm), mi = static_cast<int>(c / nsm);
    t = model.kernel_time_s(k, si, mi);
    return t * model.kernel_power_w(k, si, mi);
  };
  (void)pairs;
  if (latency_s <= 0 && switch_energy_j <= 0) return wanted;  // switching is free: the plan as it is
  std::vector<std::uint32_t> out(wanted.size(), start);
  std::uint32_t cur = start;
  std::size_t i = 0;
  while (i < wanted.size()) {
    std::size_t j = i;
    while (j < wanted.size() && wanted[j] == wanted[i]) ++j;
    const std::uint32_t p = wanted[i];
    if (p != cur) {
      double elapsed = 0, gain = 0;
      for (std::size_t k = i; k < j; ++k) {
        const Kernel& kk = rank.kernels[k];
        if (k > i) elapsed += kk.gap_before_s;  // the request is made after the first kernel's own gap
        double t_cur = 0, t_new = 0;
        const double e_cur = cost(kk, cur, t_cur), e_new = cost(kk, p, t_new);
        // The share of the kernel that runs after the switch has taken effect gains; the rest runs at cur.
        const double after = t_cur > 0 ? std::clamp((elapsed + t_cur - latency_s) / t_cur, 0.0, 1.0) : 1.0;
        gain += after * ((e_cur + lambda * t_cur) - (e_new + lambda * t_new));
        elapsed += t_cur;
      }
      if (gain > switch_energy_j) cur = p;
    }
    for (std::size_t k = i; k < j; ++k) out[k] = cur;
    i = j;
  }
  return out;
}

struct Totals {
  double time = 0, energy = 0;
};
Totals totals(const std::vector<RankOutcome>& o) {
  Totals t;
  for (const auto& r : o) {
    t.time = std::max(t.time, r.stats.end_s);
    t.energy += r.meter.total_j();
  }
  return t;
}

// What the plan of rank `r` was: grouping, budget, predicted time and energy, solve time, pairs used (and
// the online predictor's accuracy when it ran).
Json plan_report(const ClockPlan& p, std::size_t r, double budget_pct, const PredictionStats* prediction) {
  Json j = {{"rank", r},
            {"grouping", to_string(p.grouping)},
            {"budget_pct", budget_pct},
            {"groups", p.group_names.size()},
            {"kernel_time_budget_s", p.kernel_time_budget_s},
            {"planned_kernel_time_s", p.planned_kernel_time_s},
            {"planned_kernel_energy_j", p.planned_kernel_energy_j},
            {"fastest_kernel_time_s", p.fastest_kernel_time_s},
            {"feasible", p.feasible},
            {"clock_pairs_considered", p.pairs.size()},
            {"solve_s", p.solve_s}};
  std::size_t distinct = 0;
  std::vector<char> used(p.pairs.size(), 0);
  for (auto pi : p.pair_of_group) distinct += used[pi]++ == 0;
  j["distinct_pairs_used"] = distinct;
  if (p.grouping != PlanGrouping::per_kernel) {
    Json g = Json::array();
    for (std::size_t i = 0; i < p.group_names.size(); ++i)
      g.push_back({{"group", p.group_names[i]}, {"sm_mhz", p.pairs[p.pair_of_group[i]].sm_mhz},
                   {"mem_mhz", p.pairs[p.pair_of_group[i]].mem_mhz}});
    j["pairs"] = g;
  }
  if (prediction) {
    const PredictionStats& s = *prediction;
    j["prediction"] = {{"predictions", s.predictions}, {"hits", s.hits},
                       {"accuracy", s.predictions ? static_cast<double>(s.hits) / static_cast<double>(s.predictions) : 0.0},
                       {"safe_requests", s.safe_requests},
                       {"period_kernels", s.period}};
  }
  return j;
}

// Whether the replay held the budget, and with which budget the plan was finally made.
void add_budget_outcome(Json& j, double time_s, double reference_s, double time_limit_s, double planned_budget) {
  j["replayed_slowdown_pct"] = 100.0 * (time_s / reference_s - 1.0);
  j["planned_with_budget_pct"] = 100.0 * planned_budget;
  j["budget_held"] = time_s <= time_limit_s;
  if (time_s > time_limit_s)
    j["budget_note"] = "the replay runs past the budget even with the plan's budget cut to " +
                       std::to_string(100.0 * planned_budget).substr(0, 5) + " %: the power limit, switch latency or "
                       "mispredictions cost more than this policy can win back";
}

}  // namespace

void register_planned_policies(PolicyRegistry& r) {
  const struct {
    const char* name;
    int compare_rank;  // compared by default from the coarsest plan to the finest
    const char* summary;
  } family[] = {
      {"per-kernel", 4, "oracle: a clock pair per kernel identity, energy-minimal within the slowdown budget"},
      {"per-kernel-online", 5, "the per-kernel pairs, each requested before the kernel is known (period predictor)"},
      {"pass-level", 3, "a clock pair per pass (forward / backward / optimizer / other)"},
      {"static-best", 2, "the best single clock pair within the budget"},
      {"latency-aware", 6, "per-kernel pairs merged into regions worth a switch's latency; else pass-level or static-best"},
  };
  for (const auto& f : family) {
    PolicyEntry e;
    e.name = f.name;
    e.compare_rank = f.compare_rank;
    e.summary = f.summary;
    e.kind = PolicyKind::planned;
    e.keys = {"budget_pct"};
    e.parse = [](const JsonReader&, const JsonReader* object, PolicySpec& spec) {
      if (object && object->has("budget_pct")) spec.budget_pct = object->number_in("budget_pct", 0.0, kMaxSlowdownBudgetPct, "%");
    };
    e.plan = run_planned;
    r.add(std::move(e));
  }
}

bool is_planned_policy(const std::string& name) {
  static const PolicyRegistry family = [] {
    PolicyRegistry r;
    register_planned_policies(r);
    return r;
  }();
  return family.find(name) != nullptr;
}

// Re-planning when a replay runs past the budget: at most kReplanRounds more plans, each with the overshoot (as a
// fraction of the reference time, plus 0.1 %) taken off the budget it was planned with.
constexpr int kReplanRounds = 4;
static double budget_less_overshoot(double budget, double time_s, double time_limit_s, double reference_time_s) {
  return budget - ((time_s - time_limit_s) / reference_time_s + 0.001);
}

// latency-aware: regions of a per-kernel plan worth a switch's latency, one pair per pass, or one pair, each
// replayed with the latency; the least energy within the budget wins (`chosen` names it), native if none beats it.
static std::vector<RankOutcome> run_latency_aware(const Scenario& sc, const Workload& wl, const GpuModel& model,
                                                  const std::vector<RankOutcome>& reference, const std::vector<ClockPair>& pairs,
                                                  double budget, double time_limit, std::string& chosen) {
  const std::string& name = sc.policy.name;
  const Totals ref = totals(reference);
  SwitchLatency lat = model.switch_latency();
  sc.replay.sm_latency.apply_to(lat.sm);
  auto plan_for = [&](std::size_t r, PlanGrouping g, double b) {
    const double busy = reference[r].meter.busy_s() / std::max(1, sc.replay.repeat);
    return plan_clocks(wl, wl.ranks[r], model, g, std::max(0.0, 1.0 + b) * busy);
  };
  // Each candidate's plan is replayed with the latency; where the replay runs past the budget (switch delays, the
  // firmware's power limit coupling the kernels), the plan is remade with that overshoot taken off its budget (a
  // few rounds), as the planned policies do.
  auto within_budget = [&](auto&& replay_at) {
    double b = budget;
    std::vector<RankOutcome> out = replay_at(b);
    for (int round = 0; round < kReplanRounds && totals(out).time > time_limit; ++round) {
      b = budget_less_overshoot(b, totals(out).time, time_limit, ref.time);
      out = replay_at(b);
    }
    return out;
  };
  auto static_at = [&](double b) {
    std::vector<std::vector<std::uint32_t>> flat;
    for (std::size_t r = 0; r < wl.ranks.size(); ++r)
      flat.push_back(std::vector<std::uint32_t>(wl.ranks[r].kernels.size(), plan_for(r, PlanGrouping::single, b).pair_of_group.front()));
    return replay_pairs(sc, wl, model, pairs, flat, name);
  };
  auto passes_at = [&](double b) {
    std::vector<std::vector<std::uint32_t>> passes;
    for (std::size_t r = 0; r < wl.ranks.size(); ++r) passes.push_back(plan_for(r, PlanGrouping::pass_level, b).pair_index_per_kernel());
    return replay_pairs(sc, wl, model, pairs, passes, name);
  };
  // Regions from a per-kernel plan, merged around the static pair of the full budget.
  std::vector<std::uint32_t> static_pair;
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) static_pair.push_back(plan_for(r, PlanGrouping::single, budget).pair_of_group.front());
  auto regions_at = [&](double b) {
    std::vector<std::vector<std::uint32_t>> merged;
    for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
      const ClockPlan p = plan_for(r, PlanGrouping::per_kernel, b);
      merged.push_back(merge_regions(wl.ranks[r], model, pairs, p.pair_index_per_kernel(), static_pair[r], lat.sm.mean_s,
                                     lat.sm.energy_j, p.lambda));
    }
    return replay_pairs(sc, wl, model, pairs, merged, name);
  };
  // Candidates, each checked by replay with the latency: regions, one pair per pass, one pair.
  struct Candidate {
    const char* name;
    std::vector<RankOutcome> outcomes;
  };
  std::vector<Candidate> candidates;
  candidates.push_back({"regions", within_budget(regions_at)});
  candidates.push_back({"pass-level", within_budget(passes_at)});
  candidates.push_back({"static-best", within_budget(static_at)});
  Candidate* best = nullptr;
  for (auto& c : candidates) {
    const Totals t = totals(c.outcomes);
    if (t.time <= time_limit && t.energy < ref.energy && (!best || t.energy < totals(best->outcomes).energy)) best = &c;
  }
  if (best) {
    chosen = best->name;
    return std::move(best->outcomes);
  }
  chosen = "native";  // nothing beats what the GPU does alone
  return reference;
}

PlannedRun run_planned(const Scenario& sc, const Workload& wl, const GpuModel& model,
                       const std::vector<RankOutcome>& reference) {
  const std::string& name = sc.policy.name;
  const double budget = sc.policy.budget_pct / 100.0;
  const PlanGrouping grouping = name == "pass-level"    ? PlanGrouping::pass_level
                                : name == "static-best" ? PlanGrouping::single
                                                        : PlanGrouping::per_kernel;
  PlannedRun run;
  run.plan = Json::array();
  std::vector<ClockPlan> plans;
  std::vector<std::vector<std::uint32_t>> per_rank;
  auto make_plans = [&](double b) {
    plans.clear();
    per_rank.clear();
    for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
      const double busy = reference[r].meter.busy_s() / std::max(1, sc.replay.repeat);
      plans.push_back(plan_clocks(wl, wl.ranks[r], model, grouping, std::max(0.0, 1.0 + b) * busy));
      per_rank.push_back(plans.back().pair_index_per_kernel());
    }
  };
  make_plans(budget);
  const std::vector<ClockPair> pairs = plans.front().pairs;
  std::vector<std::shared_ptr<PredictionStats>> prediction;
  std::string chosen = name;
  const Totals ref = totals(reference);
  const double time_limit = (1.0 + budget) * ref.time * (1.0 + 1e-9);
  // The plan prices each kernel alone; the replay adds what couples them (the firmware's power limit over a
  // window, switch latency, mispredictions). Where the replay runs past the budget, the plan is remade with the
  // overshoot taken off its budget (a few rounds); the report says whether the budget held.
  double b_eff = budget;
  bool budget_checked = false;
  // Of the replays that hold the budget, the one with the least energy is kept (a smaller planned budget is not
  // always cheaper once the power limit couples the kernels).
  auto hold_budget = [&](auto&& replay) {
    budget_checked = true;
    run.outcomes = replay();
    std::vector<RankOutcome> best;
    std::vector<ClockPlan> best_plans;
    double best_budget = b_eff;
    auto keep_if_better = [&] {
      const Totals t = totals(run.outcomes);
      if (t.time <= time_limit && (best.empty() || t.energy < totals(best).energy))
        best = run.outcomes, best_plans = plans, best_budget = b_eff;
    };
    keep_if_better();
    for (int round = 0; round < kReplanRounds && totals(run.outcomes).time > time_limit; ++round) {
      b_eff = budget_less_overshoot(b_eff, totals(run.outcomes).time, time_limit, ref.time);
      make_plans(b_eff);
      run.outcomes = replay();
      keep_if_better();
    }
    if (!best.empty() && b_eff != best_budget) {  // the reports describe the plan that was kept
      b_eff = best_budget;
      plans = std::move(best_plans);
      run.outcomes = std::move(best);
    }
  };
  if (name == "per-kernel-online") {
    hold_budget([&] {
      prediction.clear();
      PolicyFactory f = [&](int rank) {
        const std::size_t r = rank_position(wl, rank);
        std::vector<ClockPair> by_identity;
        for (std::uint32_t pi : plans[r].pair_of_group) by_identity.push_back(pairs[pi]);
        prediction.push_back(std::make_shared<PredictionStats>());
        return std::make_unique<OnlinePlanPolicy>(wl.ranks[r], plans[r].group_of, by_identity, prediction.back(),
                                                  model.max_clocks());
      };
      return run_engine(wl, model, f, capped(sc.replay), sc.mode, cluster_for(sc, model));
    });
  } else if (name == "latency-aware") {
    run.outcomes = run_latency_aware(sc, wl, model, reference, pairs, budget, time_limit, chosen);
  } else {
    hold_budget([&] { return replay_pairs(sc, wl, model, pairs, per_rank, name); });
  }
  for (std::size_t r = 0; r < plans.size(); ++r) {
    Json j = plan_report(plans[r], r, sc.policy.budget_pct, r < prediction.size() ? prediction[r].get() : nullptr);
    if (name == "latency-aware") j["chosen"] = chosen;
    if (budget_checked) add_budget_outcome(j, totals(run.outcomes).time, ref.time, time_limit, b_eff);
    run.plan.push_back(j);
  }
  return run;
}

}  // namespace dvfs
