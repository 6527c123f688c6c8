#include "sim/critical_path/frontier.hpp"
#include "sim/pipeline/pipeline.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

// A curve with options at every integer time from t_fast to t_fast + n - 1 (quantum 1 s), convex
// effective energies: e(t) = a + b (t_slow - t)^2 (pb = 0, so energy = effective energy).
ComputationCurve integer_curve(int t_fast, int n, double a, double b) {
  std::vector<CurveOption> o;
  const int t_slow = t_fast + n - 1;
  for (int t = t_fast; t <= t_slow; ++t)
    o.push_back({{1000.0 + t, 0}, static_cast<double>(t), a + b * (t_slow - t) * (t_slow - t), -1});
  return make_curve(o, 0);
}

// Least effective energy at each iteration time, over every assignment of options (brute force).
std::map<long, double> brute_force(const IterationDag& dag, const std::vector<ComputationCurve>& curves) {
  std::vector<int> comp;
  for (std::size_t v = 0; v < dag.size(); ++v)
    if (dag.nodes()[v].computation) comp.push_back(static_cast<int>(v));
  std::vector<int> option(dag.size(), -1), idx(comp.size(), 0);
  std::map<long, double> best;
  for (;;) {
    for (std::size_t i = 0; i < comp.size(); ++i) option[static_cast<std::size_t>(comp[i])] = idx[i];
    const IterationPlan p = evaluate_plan(dag, curves, option, 0);
    const long T = std::lround(p.time_s);
    auto it = best.find(T);
    if (it == best.end() || p.effective_j < it->second) best[T] = p.effective_j;
    std::size_t i = 0;
    for (; i < comp.size(); ++i) {
      const auto& c = curves[static_cast<std::size_t>(dag.nodes()[static_cast<std::size_t>(comp[i])].curve)];
      if (++idx[i] < static_cast<int>(c.options.size())) break;
      idx[i] = 0;
    }
    if (i == comp.size()) break;
  }
  // Least energy within each time: the running minimum from the fastest up.
  double run = INFINITY;
  for (auto& [T, e] : best) e = run = std::min(run, e);
  return best;
}

double brute_at(const std::map<long, double>& b, long T) {
  auto it = b.upper_bound(T);
  REQUIRE(it != b.begin());
  return std::prev(it)->second;
}

}  // namespace

TEST_CASE("on a 2-stage pipeline with convex options the frontier is the least energy at every iteration time (brute force)", "[critical_path]") {
  for (PipelineSchedule sched : {PipelineSchedule::one_f_one_b, PipelineSchedule::gpipe}) {
    PipelineDagSpec spec;
    spec.stages = 2;
    spec.microbatches = 2;
    spec.schedule = sched;
    const IterationDag dag = build_pipeline_dag(spec);
    // Curves per (virtual stage, pass): stage 0 is the slow one, stage 1 has slack to spend.
    std::vector<ComputationCurve> curves = {integer_curve(2, 4, 10, 1.0), integer_curve(4, 4, 20, 1.5),
                                            integer_curve(1, 4, 8, 0.5), integer_curve(2, 4, 15, 2.0)};
    const std::map<long, double> bf = brute_force(dag, curves);
    FrontierOptions o;
    o.quantum_s = 1.0;
    const Frontier f = solve_frontier(dag, curves, o);
    REQUIRE(f.points.size() >= 2);
    CHECK(f.points.front().time_q == bf.rbegin()->first);  // starts at the slowest useful time
    CHECK(f.points.back().time_q == bf.begin()->first);    // ends at the fastest possible time
    for (std::size_t k = 0; k + 1 < f.points.size(); ++k) {
      const auto& a = f.points[k];
      const auto& b = f.points[k + 1];
      // Every integer time in between: the solver's (linear over its step) value equals brute force.
      for (long T = b.time_q; T <= a.time_q; ++T) {
        const double lin = b.effective_j + (a.effective_j - b.effective_j) * static_cast<double>(T - b.time_q) /
                                               static_cast<double>(a.time_q - b.time_q);
        INFO("schedule " << to_string(sched) << ", T = " << T);
        CHECK(lin == Approx(brute_at(bf, T)).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("the frontier is monotone: each point is faster and costs at least as much effective energy", "[critical_path]") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> tf(2, 6), n(2, 5);
  std::uniform_real_distribution<double> a(5, 20), b(0.1, 3);
  PipelineDagSpec spec;
  spec.stages = 3;
  spec.microbatches = 5;
  const IterationDag dag = build_pipeline_dag(spec);
  std::vector<ComputationCurve> curves;
  for (int v = 0; v < 6; ++v) curves.push_back(integer_curve(tf(rng), n(rng), a(rng), b(rng)));
  FrontierOptions o;
  o.quantum_s = 1.0;
  const Frontier f = solve_frontier(dag, curves, o);
  REQUIRE(f.points.size() >= 2);
  for (std::size_t k = 0; k + 1 < f.points.size(); ++k) {
    CHECK(f.points[k + 1].time_q < f.points[k].time_q);
    CHECK(f.points[k + 1].effective_j >= f.points[k].effective_j - 1e-9);
  }
  // The end point is the all-fastest iteration time.
  CHECK(f.points.back().time_s(1.0) == Approx(fastest_plan(dag, curves, 0).time_s));
}

TEST_CASE("the no-slowdown plan does not lengthen the iteration and saves the slack's energy", "[critical_path]") {
  // Stage 1 is much faster than stage 0: it can run slower everywhere without delaying anything.
  PipelineDagSpec spec;
  spec.stages = 2;
  spec.microbatches = 8;
  const IterationDag dag = build_pipeline_dag(spec);
  auto curve = [](double t_fast, double p_fast) {
    std::vector<CurveOption> o;
    for (int k = 0; k < 5; ++k) {  // 25 % slower per step, power falling faster than time grows
      const double t = t_fast * (1 + 0.25 * k), p = p_fast * std::pow(0.7, k);
      o.push_back({{1410.0 - 100 * k, 0}, t, p * t, -1});
    }
    return make_curve(o, 50);
  };
  const std::vector<ComputationCurve> curves = {curve(0.2, 300), curve(0.4, 300), curve(0.1, 300), curve(0.2, 300)};
  FrontierOptions o;
  o.quantum_s = 1e-3;
  o.p_blocking_w = 50;
  const Frontier f = solve_frontier(dag, curves, o);
  const IterationPlan fast = fastest_plan(dag, curves, 50);
  const IterationPlan ns = no_slowdown_plan(dag, curves, f);
  CHECK(ns.time_s <= fast.time_s * (1 + 1e-12));
  CHECK(ns.energy_j < 0.9 * fast.energy_j);
  // A 10 % slower target costs no more than the no-slowdown plan.
  const IterationPlan slow = plan_for_time(dag, curves, f, 1.1 * fast.time_s);
  CHECK(slow.time_s <= 1.1 * fast.time_s * (1 + 1e-12));
  CHECK(slow.energy_j <= ns.energy_j + 1e-9);
}

TEST_CASE("the iteration DAG's longest path is the SimGrid pipeline's iteration time", "[critical_path]") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> dur(0.5, 2.0);
  struct Case {
    PipelineSchedule s;
    int stages, mbs, chunks;
  };
  for (const Case& c : {Case{PipelineSchedule::one_f_one_b, 4, 9, 1}, Case{PipelineSchedule::gpipe, 3, 5, 1},
                        Case{PipelineSchedule::interleaved_1f1b, 2, 4, 2}, Case{PipelineSchedule::interleaved_1f1b, 4, 8, 2}}) {
    PipelineWorkload wl;
    wl.stages = c.stages;
    wl.microbatches = c.mbs;
    wl.chunks = c.chunks;
    wl.schedule = c.s;
    wl.p2p_latency_s = 0.05;
    const int V = c.stages * c.chunks;
    wl.forward_s.assign(static_cast<std::size_t>(V), {});
    wl.backward_s.assign(static_cast<std::size_t>(V), {});
    for (int v = 0; v < V; ++v)
      for (int m = 0; m < c.mbs; ++m) {
        wl.forward_s[static_cast<std::size_t>(v)].push_back(dur(rng));
        wl.backward_s[static_cast<std::size_t>(v)].push_back(2 * dur(rng));
      }
    PipelineDagSpec spec;
    spec.stages = c.stages;
    spec.microbatches = c.mbs;
    spec.chunks = c.chunks;
    spec.schedule = c.s;
    spec.p2p_s = wl.p2p_latency_s;
    const IterationDag dag = build_pipeline_dag(spec);
    std::vector<double> d(dag.size());
    for (std::size_t i = 0; i < dag.size(); ++i) {
      const DagNode& n = dag.nodes()[i];
      const std::size_t v = static_cast<std::size_t>(n.chunk * c.stages + n.stage);
      d[i] = (n.backward ? wl.backward_s : wl.forward_s)[v][static_cast<std::size_t>(n.microbatch)];
    }
    INFO(to_string(c.s) << " " << c.stages << "x" << c.mbs << " chunks " << c.chunks);
    CHECK(longest_path(dag, d) == Approx(simulate_pipeline(wl).iteration_s).epsilon(1e-9));
  }
}
