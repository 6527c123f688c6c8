#include "sim/planning/clock_plan.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

namespace dvfs {

const char* to_string(PlanGrouping g) {
  switch (g) {
    case PlanGrouping::per_kernel: return "per-kernel";
    case PlanGrouping::pass_level: return "pass-level";
    case PlanGrouping::single: return "static";
  }
  return "?";
}

std::vector<std::uint32_t> kernel_identities(const Rank& rank, std::vector<std::string>* names,
                                             const std::vector<std::string>* workload_names) {
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                      std::uint32_t>,
           std::uint32_t>
      ids;
  std::vector<std::uint32_t> out(rank.kernels.size());
  for (std::size_t i = 0; i < rank.kernels.size(); ++i) {
    const Kernel& k = rank.kernels[i];
    std::uint32_t g[3] = {0, 0, 0}, b[3] = {0, 0, 0};
    if (i < rank.shapes.size()) {
      std::copy(rank.shapes[i].grid, rank.shapes[i].grid + 3, g);
      std::copy(rank.shapes[i].block, rank.shapes[i].block + 3, b);
    }
    auto key = std::make_tuple(k.name_id, g[0], g[1], g[2], b[0], b[1], b[2]);
    auto it = ids.find(key);
    if (it == ids.end()) {
      it = ids.emplace(key, static_cast<std::uint32_t>(ids.size())).first;
      if (names) {
        std::string n = workload_names && k.name_id < workload_names->size() ? (*workload_names)[k.name_id] : "kernel";
        if (g[0]) n += " <<<" + std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]) + ">>>";
        names->push_back(n);
      }
    }
    out[i] = it->second;
  }
  return out;
}

namespace {

struct Choice {
  std::vector<std::uint32_t> pick;
  double time = 0, energy = 0;
};

// Each group's total kernel time T and energy E at every clock pair c (index g * C + c), and whether the
// pair is offered to the group.
struct GroupTables {
  std::size_t G = 0, C = 0;
  std::vector<double> T, E;
  std::vector<char> offered;
};

// Which group each kernel is planned in, and the groups' names.
void assign_groups(ClockPlan& plan, const Workload& wl, const Rank& rank, PlanGrouping grouping) {
  const std::size_t N = rank.kernels.size();
  plan.group_of.assign(N, 0);
  if (grouping == PlanGrouping::per_kernel) {
    plan.group_of = kernel_identities(rank, &plan.group_names, &wl.names);
  } else if (grouping == PlanGrouping::pass_level) {
    for (int p = 0; p < kPhaseCount; ++p) plan.group_names.push_back(to_string(static_cast<Phase>(p)));
    for (std::size_t i = 0; i < N; ++i) {
      const std::uint32_t set = rank.kernels[i].annotation_set;
      plan.group_of[i] = static_cast<std::uint32_t>(set < wl.annotation_sets.size() ? wl.annotation_sets[set].phase : Phase::other);
    }
  } else {
    plan.group_names.push_back("all");
  }
}

GroupTables tabulate(const ClockPlan& plan, const Rank& rank, const GpuModel& model) {
  const auto& sm = model.sm_clocks_mhz();
  const auto& mem = model.mem_clocks_mhz();
  GroupTables tab;
  tab.G = plan.group_names.size();
  tab.C = plan.pairs.size();
  const std::size_t G = tab.G, C = tab.C;
  // Kernels that scale identically (same group, coefficients, recorded clocks and fill) are summed
  // first: the model is linear in the recorded duration, so one evaluation per bucket suffices.
  // (The work rates are part of the key: the activity power model prices kernels of one name and launch
  // differently when their operators' shapes differ.)
  std::map<std::tuple<std::uint32_t, int, std::uint32_t, float, float, float, std::array<float, kWorkRates>>, Kernel> buckets;
  for (std::size_t i = 0; i < rank.kernels.size(); ++i) {
    const Kernel& k = rank.kernels[i];
    auto key = std::make_tuple(plan.group_of[i], static_cast<int>(k.cls), k.name_id, k.recorded_sm_mhz, k.recorded_mem_mhz, k.sm_fill,
                               work_rates(k));
    auto it = buckets.find(key);
    if (it == buckets.end()) buckets.emplace(key, k);
    else it->second.duration_s += k.duration_s;
  }
  std::vector<double>& T = tab.T;
  std::vector<double>& E = tab.E;
  T.assign(G * C, 0.0);
  E.assign(G * C, 0.0);
  for (const auto& kv : buckets) {
    const std::uint32_t g = std::get<0>(kv.first);
    const Kernel& k = kv.second;
    for (std::size_t mi = 0; mi < mem.size(); ++mi)
      for (std::size_t si = 0; si < sm.size(); ++si) {
        const std::size_t c = mi * sm.size() + si;
        const double t = model.kernel_time_s(k, static_cast<int>(si), static_cast<int>(mi));
        T[g * C + c] += t;
        E[g * C + c] += t * model.kernel_power_w(k, static_cast<int>(si), static_cast<int>(mi));
      }
  }
  // Offered pairs: the group's mean power within the cap. (Stricter rules over-constrain: every kernel
  // within cap x target_fraction forbids the top clocks to GEMMs that the native governor itself runs
  // there, because it regulates a windowed mean. The replay applies the firmware limit either way.)
  // The lowest SM clock is always offered.
  const double cap_mean = model.power_cap_w();
  tab.offered.assign(G * C, 1);
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t c = 0; c < C; ++c) {
      const double t = T[g * C + c];
      if (t > 0 && E[g * C + c] / t > cap_mean && c % sm.size() != 0) tab.offered[g * C + c] = 0;
    }
  return tab;
}

// The Lagrangian relaxation's choice: per group, the offered pair of least E + lambda T.
Choice choose(const GroupTables& tab, double lambda) {
  const std::size_t G = tab.G, C = tab.C;
  Choice ch;
  ch.pick.assign(G, 0);
  for (std::size_t g = 0; g < G; ++g) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < C; ++c) {
      if (!tab.offered[g * C + c]) continue;
      const double v = tab.E[g * C + c] + lambda * tab.T[g * C + c];
      if (v < best) best = v, ch.pick[g] = static_cast<std::uint32_t>(c);
    }
    ch.time += tab.T[g * C + ch.pick[g]];
    ch.energy += tab.E[g * C + ch.pick[g]];
  }
  return ch;
}

// Fastest: least time per group (ties: least energy).
Choice fastest_choice(const GroupTables& tab) {
  const std::size_t G = tab.G, C = tab.C;
  const std::vector<double>& T = tab.T;
  const std::vector<double>& E = tab.E;
  Choice fastest;
  fastest.pick.assign(G, 0);
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t c = 1; c < C; ++c) {
      if (!tab.offered[g * C + c]) continue;
      const std::size_t b = g * C + fastest.pick[g];
      if (T[g * C + c] < T[b] - 1e-15 || (std::fabs(T[g * C + c] - T[b]) <= 1e-15 && E[g * C + c] < E[b])) fastest.pick[g] = static_cast<std::uint32_t>(c);
    }
    fastest.time += T[g * C + fastest.pick[g]];
    fastest.energy += E[g * C + fastest.pick[g]];
  }
  return fastest;
}

// Over the budget at lambda 0 but feasible: bisect lambda to the budget, then repair greedily toward the
// cheaper relaxed choice, best joules saved per second added first. Sets the plan's lambda.
Choice bisect_and_repair(const GroupTables& tab, double budget, const Choice& fastest, ClockPlan& plan) {
  const std::size_t G = tab.G, C = tab.C;
  const std::vector<double>& T = tab.T;
  const std::vector<double>& E = tab.E;
  double lo = 0, hi = 1.0;
  while (choose(tab, hi).time > budget && hi < 1e12) hi *= 4;
  Choice hi_c = choose(tab, hi);
  if (hi_c.time > budget) hi_c = fastest;  // ties left a tiny overshoot: fall back
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    Choice c = choose(tab, mid);
    if (c.time <= budget) hi = mid, hi_c = std::move(c);
    else lo = mid;
  }
  plan.lambda = hi;
  const Choice lo_c = choose(tab, lo);
  struct Move {
    std::size_t g;
    double dt, de;
  };
  std::vector<Move> moves;
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t a = g * C + hi_c.pick[g], b = g * C + lo_c.pick[g];
    if (hi_c.pick[g] != lo_c.pick[g] && E[b] < E[a]) moves.push_back({g, T[b] - T[a], E[b] - E[a]});
  }
  std::sort(moves.begin(), moves.end(), [](const Move& x, const Move& y) {
    return x.de / std::max(x.dt, 1e-18) < y.de / std::max(y.dt, 1e-18);
  });
  Choice result = hi_c;
  for (const Move& mv : moves) {
    if (result.time + mv.dt <= budget) {
      result.time += mv.dt;
      result.energy += mv.de;
      result.pick[mv.g] = lo_c.pick[mv.g];
    }
  }
  return result;
}

// Improving moves over every offered pair until none is left: a group takes another pair when that
// lowers energy and the budget still holds (the relaxation's one alternative per group misses some).
void improve(const GroupTables& tab, double budget, Choice& result) {
  const std::size_t G = tab.G, C = tab.C;
  const std::vector<double>& T = tab.T;
  const std::vector<double>& E = tab.E;
  for (int pass = 0; pass < 20; ++pass) {
    bool improved = false;
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t cur = g * C + result.pick[g];
      std::size_t best = cur;
      for (std::size_t c = 0; c < C; ++c) {
        const std::size_t i = g * C + c;
        if (!tab.offered[i] || E[i] >= E[best] - 1e-15) continue;
        if (result.time - T[cur] + T[i] <= budget) best = i;
      }
      if (best != cur) {
        result.time += T[best] - T[cur];
        result.energy += E[best] - E[cur];
        result.pick[g] = static_cast<std::uint32_t>(best - g * C);
        improved = true;
      }
    }
    if (!improved) break;
  }
}

// One pair for every group is also a solution of any grouping: never plan worse than the best one.
void floor_at_best_single_pair(const GroupTables& tab, double budget, Choice& result) {
  const std::size_t G = tab.G, C = tab.C;
  for (std::size_t c = 0; c < C; ++c) {
    double t = 0, e = 0;
    bool ok = true;
    for (std::size_t g = 0; g < G && ok; ++g) {
      ok = tab.offered[g * C + c];
      t += tab.T[g * C + c];
      e += tab.E[g * C + c];
    }
    if (ok && t <= budget && e < result.energy) {
      result.time = t;
      result.energy = e;
      std::fill(result.pick.begin(), result.pick.end(), static_cast<std::uint32_t>(c));
    }
  }
}

}  // namespace

ClockPlan plan_clocks(const Workload& wl, const Rank& rank, const GpuModel& model, PlanGrouping grouping,
                      double kernel_time_budget_s) {
  const auto t0 = std::chrono::steady_clock::now();
  // Sums taken in another order differ in the last bits: a plan within 1e-9 of the budget meets it.
  const double budget = kernel_time_budget_s * (1.0 + 1e-9);
  ClockPlan plan;
  plan.grouping = grouping;
  plan.kernel_time_budget_s = kernel_time_budget_s;
  for (double m : model.mem_clocks_mhz())
    for (double f : model.sm_clocks_mhz()) plan.pairs.push_back({f, m});
  assign_groups(plan, wl, rank, grouping);
  const GroupTables tab = tabulate(plan, rank, model);

  const Choice fastest = fastest_choice(tab);
  plan.fastest_kernel_time_s = fastest.time;
  Choice result = choose(tab, 0.0);
  if (result.time > budget) {
    if (fastest.time > budget) {
      plan.feasible = false;
      result = fastest;
    } else {
      result = bisect_and_repair(tab, budget, fastest, plan);
    }
  }
  if (plan.feasible) {
    improve(tab, budget, result);
    floor_at_best_single_pair(tab, budget, result);
  }
  plan.pair_of_group = result.pick;
  plan.planned_kernel_time_s = result.time;
  plan.planned_kernel_energy_j = result.energy;
  plan.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return plan;
}

}  // namespace dvfs
