#pragma once
// The iteration time / energy Pareto frontier of a DAG whose computations each have a time/energy
// curve, computed as Perseus does (Chung et al., SOSP'24, after Phillips & Dessouky 1977):
//  - times are quantised (default 1 ms); each computation's cost is its effective energy
//    E - P_blocking t, linear between the lower-convex-hull points of its curve;
//  - start with every computation at its cheapest hull point (the slowest iteration);
//  - repeatedly take the critical sub-DAG (the activities and dependencies on a longest path) and cut
//    it at least cost: a minimum s-t cut where an activity crossing the cut forwards is shortened
//    (capacity: the energy one quantum faster costs) and one crossing backwards is lengthened (lower
//    bound: the energy one quantum slower saves); max-flow with lower bounds, Boost.Graph's
//    Boykov-Kolmogorov, twice (feasible flow, then max flow). Every cut shortens the iteration by
//    one quantum (or by as many as keep the cut and its costs unchanged) at the least energy;
//  - until no finite cut is left (every critical path at its fastest).
// For integer times and convex costs this is exact (each point is the least effective energy at that
// iteration time); with curves that are not convex it is exact for their convex hulls, and the plans
// are realised on the clocks themselves (see realise_plan).
// The total energy of a plan is sum(effective) + GPUs x T x P_blocking.
#include "sim/critical_path/computation_curve.hpp"
#include "sim/critical_path/iteration_dag.hpp"
#include "sim/critical_path/plan_file.hpp"

#include <cstdint>
#include <vector>

namespace dvfs {

struct FrontierOptions {
  double quantum_s = 1e-3;        // Perseus's time unit
  double p_blocking_w = 0;        // power a GPU draws while it waits (effective energy)
  std::size_t max_iterations = 2000000;
};

struct FrontierPoint {
  std::int64_t time_q = 0;  // iteration time in quanta
  double effective_j = 0;   // sum over computations of the (hull-interpolated) effective energy
  double time_s(double quantum_s) const { return static_cast<double>(time_q) * quantum_s; }
};

struct Frontier {
  double quantum_s = 1e-3, p_blocking_w = 0;
  int gpus = 1;
  // Slowest first (the solver's order); point k's durations are start_q with changes[0..k) applied.
  std::vector<FrontierPoint> points;
  std::vector<std::int64_t> start_q;                                  // per node, quanta
  std::vector<std::vector<std::pair<int, std::int64_t>>> changes;     // per step: (node, new duration)
  std::vector<std::vector<int>> hull;                                 // per curve: lower-hull option indices
  std::vector<std::vector<std::int64_t>> hull_q;                      // per curve: their quantised times
  // Solver statistics.
  std::size_t iterations = 0, max_flows = 0, fallback_cuts = 0;
  double solve_s = 0;

  double total_energy_j(std::size_t k) const {  // relaxed total of point k
    return points[k].effective_j + gpus * points[k].time_s(quantum_s) * p_blocking_w;
  }
  std::vector<std::int64_t> durations_q(std::size_t k) const;
};

Frontier solve_frontier(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const FrontierOptions& opts);

// A plan: for every computation node the option of its curve it runs (-1 for fixed nodes).
struct IterationPlan {
  std::vector<int> option;
  double time_s = 0, energy_j = 0, effective_j = 0;
};

// Iteration time (longest path) and energy of a plan: sum of the options' energies plus P_blocking for
// every GPU-second not spent in a computation (fixed steps included).
IterationPlan evaluate_plan(const IterationDag& dag, const std::vector<ComputationCurve>& curves, std::vector<int> option,
                            double p_blocking_w);
// The option of every computation at its clock in `clocks` ([stage][schedule index], MHz; a plan file's
// computation_clocks); a clock that is no option of the computation is an InputError naming `file` and
// the stage's power_states.
std::vector<int> options_at_clocks(const IterationDag& dag, const std::vector<ComputationCurve>& curves,
                                   const std::vector<std::vector<double>>& clocks, const GpuModel& model, const std::string& file);
// Every entry of a clock plan, the computations' and the other instructions' (p2p, load, reduce, step) alike, is an SM
// clock of `model`: the other instructions' clocks were dropped unread, so 1e9 MHz there passed.
void check_plan_clocks(const ClockPlanFile& plan, const GpuModel& model);
// Every computation at its fastest / cheapest option.
IterationPlan fastest_plan(const IterationDag& dag, const std::vector<ComputationCurve>& curves, double p_blocking_w);

// The least-energy plan whose iteration takes at most `target_s` (real time, not quantised): the
// frontier point with the least relaxed total energy within the target, realised on the options
// themselves (each duration rounded to the hull option at or below it), repaired where rounding left
// the iteration over the target (the cheapest speed-ups on the critical path), then slack reclaimed
// (computations with float slowed to slower Pareto options while the iteration stays within the
// target). Targets below the fastest plan get the fastest plan.
IterationPlan plan_for_time(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const Frontier& f,
                            double target_s);
// No slowdown: the least energy at the fastest plan's iteration time (Perseus's "intrinsic bloat" plan).
IterationPlan no_slowdown_plan(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const Frontier& f);

}  // namespace dvfs
