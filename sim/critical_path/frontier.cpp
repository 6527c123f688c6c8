#include "sim/critical_path/frontier.hpp"

#include "sim/core/errors.hpp"

// Boost.Graph's iterators trip GCC's -Wmaybe-uninitialized once inlined (a false positive in its headers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

namespace dvfs {

namespace {

constexpr double kInf = 1e12;  // capacity of what cannot be cut (J per quantum); finite so sums stay exact enough

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS,
    boost::property<boost::vertex_color_t, boost::default_color_type,
                    boost::property<boost::vertex_distance_t, long, boost::property<boost::vertex_predecessor_t, Traits::edge_descriptor>>>,
    boost::property<boost::edge_capacity_t, double,
                    boost::property<boost::edge_residual_capacity_t, double, boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
using Edge = Traits::edge_descriptor;

struct FlowArc {
  int from = 0, to = 0;
  double upper = 0, lower = 0;
};

// A directed graph for Boost's max-flow: every arc has its paired reverse arc.
struct Network {
  FlowGraph g;
  std::vector<Edge> fwd, rev;
  explicit Network(int vertices) : g(static_cast<std::size_t>(vertices)) {}
  void add(int a, int b, double cap, double back_cap = 0) {
    auto cap_map = boost::get(boost::edge_capacity, g);
    auto rev_map = boost::get(boost::edge_reverse, g);
    const Edge e = boost::add_edge(static_cast<std::size_t>(a), static_cast<std::size_t>(b), g).first;
    const Edge r = boost::add_edge(static_cast<std::size_t>(b), static_cast<std::size_t>(a), g).first;
    cap_map[e] = cap;
    cap_map[r] = back_cap;
    rev_map[e] = r;
    rev_map[r] = e;
    fwd.push_back(e);
    rev.push_back(r);
  }
  double max_flow(int s, int t) { return boost::boykov_kolmogorov_max_flow(g, static_cast<std::size_t>(s), static_cast<std::size_t>(t)); }
  double residual(const Edge& e) const { return boost::get(boost::edge_residual_capacity, g)[e]; }
  // Vertices reachable from s over arcs with residual capacity left: the source side of a minimum cut.
  std::vector<char> reachable(int s, int vertices) const {
    std::vector<char> seen(static_cast<std::size_t>(vertices), 0);
    std::vector<std::size_t> stack{static_cast<std::size_t>(s)};
    seen[static_cast<std::size_t>(s)] = 1;
    auto res = boost::get(boost::edge_residual_capacity, g);
    while (!stack.empty()) {
      const std::size_t v = stack.back();
      stack.pop_back();
      for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) {
        const std::size_t w = boost::target(*it, g);
        if (w < seen.size() && !seen[w] && res[*it] > 1e-9) {
          seen[w] = 1;
          stack.push_back(w);
        }
      }
    }
    return seen;
  }
};

struct Cut {
  std::vector<char> source_side;
  double value = 0;
  bool lower_bounds_used = true;
};

// Minimum s-t cut where an arc crossing forwards counts `upper` and one crossing backwards counts
// -`lower` (max-flow with lower bounds, Phillips-Dessouky): a feasible flow with f >= lower first
// (circulation through a super source and sink), then the maximum flow on its residual network.
// Without a feasible flow (a cut of negative value exists: the state was not optimal), the lower
// bounds are dropped and the cut only shortens. The flow networks hold only the vertices the arcs
// touch, and are kept from one call to the next while the arcs connect the same vertices (the
// critical sub-DAG rarely changes between cuts): only capacities are rewritten.
class MinCutSolver {
 public:
  Cut solve(int vertices, int s, int t, const std::vector<FlowArc>& arcs);
  std::size_t max_flows = 0;

 private:
  void rebuild();
  std::vector<int> id_, back_;
  std::vector<std::pair<int, int>> topo_;  // compacted arcs (from, to)
  int cs_ = -1, ct_ = -1;
  std::unique_ptr<Network> phase1_, phase2_;
  // The last maximum flow per arc. While the arcs stay the same it remains feasible for the next
  // cut's bounds (a cut activity's new bounds are the slope it left, which its saturated flow equals),
  // so the first phase is only needed when the critical sub-DAG changes.
  std::vector<double> flow_;
};

void MinCutSolver::rebuild() {
  const int n = static_cast<int>(back_.size());
  phase1_ = std::make_unique<Network>(n + 2);
  phase2_ = std::make_unique<Network>(n);
  for (const auto& [a, b] : topo_) {
    phase1_->add(a, b, 0);
    phase2_->add(a, b, 0);
  }
  phase1_->add(ct_, cs_, kInf);
  for (int v = 0; v < n; ++v) {  // super source and sink arcs to every vertex (capacity 0 when unused)
    phase1_->add(n, v, 0);
    phase1_->add(v, n + 1, 0);
  }
}

Cut MinCutSolver::solve(int vertices, int s, int t, const std::vector<FlowArc>& arcs) {
  // Compact the vertices the arcs touch.
  id_.assign(static_cast<std::size_t>(vertices), -1);
  back_.clear();
  auto map = [&](int v) {
    int& i = id_[static_cast<std::size_t>(v)];
    if (i < 0) i = static_cast<int>(back_.size()), back_.push_back(v);
    return i;
  };
  const int cs = map(s), ct = map(t);
  bool same = cs == cs_ && ct == ct_ && phase2_ && topo_.size() == arcs.size();
  std::vector<std::pair<int, int>> topo;
  topo.reserve(arcs.size());
  for (const FlowArc& a : arcs) topo.emplace_back(map(a.from), map(a.to));
  same = same && topo == topo_ && static_cast<std::size_t>(boost::num_vertices(phase2_->g)) == back_.size();
  if (!same) {
    topo_ = std::move(topo);
    cs_ = cs;
    ct_ = ct;
    rebuild();
  }
  const int n = static_cast<int>(back_.size());
  auto cap = boost::get(boost::edge_capacity, phase1_->g);
  auto cap2 = boost::get(boost::edge_capacity, phase2_->g);
  bool lower = false;
  for (const FlowArc& a : arcs) lower = lower || a.lower > 0;
  std::vector<char> side;
  bool warm = same && flow_.size() == arcs.size();
  for (std::size_t k = 0; warm && k < arcs.size(); ++k) {
    const double tol = 1e-9 * std::max(1.0, arcs[k].upper < kInf / 2 ? arcs[k].upper : 1.0);
    warm = flow_[k] >= (lower ? arcs[k].lower : 0.0) - tol && flow_[k] <= arcs[k].upper + tol;
  }
  if (warm) {  // maximum flow from the last feasible one
    for (std::size_t k = 0; k < arcs.size(); ++k) {
      const double l = lower ? arcs[k].lower : 0.0, f = std::clamp(flow_[k], l, arcs[k].upper);
      cap2[phase2_->fwd[k]] = arcs[k].upper - f;
      cap2[phase2_->rev[k]] = f - l;
    }
    phase2_->max_flow(cs, ct);
    ++max_flows;
    side = phase2_->reachable(cs, n);
  } else if (lower) {
    std::vector<double> excess(static_cast<std::size_t>(n), 0.0);
    for (std::size_t k = 0; k < arcs.size(); ++k) {
      cap[phase1_->fwd[k]] = arcs[k].upper - arcs[k].lower;
      cap[phase1_->rev[k]] = 0;
      excess[static_cast<std::size_t>(topo_[k].second)] += arcs[k].lower;
      excess[static_cast<std::size_t>(topo_[k].first)] -= arcs[k].lower;
    }
    double need = 0;
    const std::size_t base = arcs.size() + 1;  // after the t -> s arc
    for (int v = 0; v < n; ++v) {
      const double x = excess[static_cast<std::size_t>(v)];
      cap[phase1_->fwd[base + 2 * static_cast<std::size_t>(v)]] = x > 0 ? x : 0;
      cap[phase1_->fwd[base + 2 * static_cast<std::size_t>(v) + 1]] = x < 0 ? -x : 0;
      if (x > 0) need += x;
    }
    const double flow = phase1_->max_flow(n, n + 1);
    ++max_flows;
    if (flow >= need - 1e-9 * std::max(1.0, need)) {
      for (std::size_t k = 0; k < arcs.size(); ++k) {
        cap2[phase2_->fwd[k]] = phase1_->residual(phase1_->fwd[k]);
        cap2[phase2_->rev[k]] = phase1_->residual(phase1_->rev[k]);
      }
      phase2_->max_flow(cs, ct);
      ++max_flows;
      side = phase2_->reachable(cs, n);
    } else {
      lower = false;
    }
  }
  if (!warm && !lower) {
    for (std::size_t k = 0; k < arcs.size(); ++k) {
      cap2[phase2_->fwd[k]] = arcs[k].upper;
      cap2[phase2_->rev[k]] = 0;
    }
    phase2_->max_flow(cs, ct);
    ++max_flows;
    side = phase2_->reachable(cs, n);
  }
  // The flow from the reverse arcs' residuals (f - lower): exact, where upper - residual loses the
  // flow's digits on arcs of capacity kInf.
  flow_.resize(arcs.size());
  for (std::size_t k = 0; k < arcs.size(); ++k) flow_[k] = (lower ? arcs[k].lower : 0.0) + phase2_->residual(phase2_->rev[k]);
  Cut cut;
  cut.lower_bounds_used = lower;
  for (std::size_t k = 0; k < arcs.size(); ++k) {
    const bool fs = side[static_cast<std::size_t>(topo_[k].first)], ts = side[static_cast<std::size_t>(topo_[k].second)];
    if (fs && !ts) cut.value += arcs[k].upper;
    else if (!fs && ts && lower) cut.value -= arcs[k].lower;
  }
  cut.source_side.assign(static_cast<std::size_t>(vertices), 0);
  for (std::size_t i = 0; i < back_.size(); ++i) cut.source_side[static_cast<std::size_t>(back_[i])] = side[i];
  return cut;
}

// A computation's convex cost over integer durations: linear between its quantised hull points.
struct QuantisedHull {
  std::vector<std::int64_t> t;  // ascending
  std::vector<double> c;        // effective energy, descending
  std::vector<int> option;      // the curve option of each point
  std::int64_t fastest() const { return t.front(); }
  std::int64_t slowest() const { return t.back(); }
  // Segment k with t[k] < d <= t[k+1] (for shortening from d) or t[k] <= d < t[k+1] (lengthening).
  std::size_t below(std::int64_t d) const { return static_cast<std::size_t>(std::lower_bound(t.begin(), t.end(), d) - t.begin()) - 1; }
  std::size_t above(std::int64_t d) const { return static_cast<std::size_t>(std::upper_bound(t.begin(), t.end(), d) - t.begin()) - 1; }
  double slope(std::size_t k) const { return (c[k] - c[k + 1]) / static_cast<double>(t[k + 1] - t[k]); }
  double cost(std::int64_t d) const {
    if (d <= t.front()) return c.front();
    if (d >= t.back()) return c.back();
    const std::size_t k = above(d);
    return c[k] + (c[k + 1] - c[k]) * static_cast<double>(d - t[k]) / static_cast<double>(t[k + 1] - t[k]);
  }
};

QuantisedHull quantise(const ComputationCurve& curve, const std::vector<int>& hull, double q, double pb) {
  QuantisedHull h;
  for (int i : hull) {
    const std::int64_t tq = std::max<std::int64_t>(1, std::llround(curve.options[static_cast<std::size_t>(i)].time_s / q));
    const double e = curve.effective_j(i, pb);
    if (!h.t.empty() && h.t.back() == tq) {  // rounding merged two points: keep the cheaper (the slower one)
      if (e >= h.c.back()) continue;
      h.t.pop_back();
      h.c.pop_back();
      h.option.pop_back();
    }
    // Keep it convex on the integer grid.
    while (h.t.size() >= 2) {
      const std::size_t a = h.t.size() - 2, b = h.t.size() - 1;
      if ((h.c[b] - h.c[a]) * static_cast<double>(tq - h.t[a]) >= (e - h.c[a]) * static_cast<double>(h.t[b] - h.t[a])) {
        h.t.pop_back();
        h.c.pop_back();
        h.option.pop_back();
      } else {
        break;
      }
    }
    h.t.push_back(tq);
    h.c.push_back(e);
    h.option.push_back(i);
  }
  return h;
}

// Earliest and latest event times of the activity-on-arc form: node v is the arc in(v) -> out(v).
struct Schedule {
  std::vector<std::int64_t> es, ls;  // per node: earliest / latest start
  std::int64_t span = 0;
};

void earliest(const IterationDag& dag, const std::vector<std::int64_t>& d, const std::vector<std::int64_t>& delay,
              Schedule& sc) {
  const auto& edges = dag.edges();
  const auto& ins = dag.in_edges();
  sc.es.assign(dag.size(), 0);
  sc.span = 0;
  for (int v : dag.topo_order()) {
    std::int64_t t = 0;
    for (int e : ins[static_cast<std::size_t>(v)]) {
      const int u = edges[static_cast<std::size_t>(e)].from;
      t = std::max(t, sc.es[static_cast<std::size_t>(u)] + d[static_cast<std::size_t>(u)] + delay[static_cast<std::size_t>(e)]);
    }
    sc.es[static_cast<std::size_t>(v)] = t;
    sc.span = std::max(sc.span, t + d[static_cast<std::size_t>(v)]);
  }
}

void latest(const IterationDag& dag, const std::vector<std::int64_t>& d, const std::vector<std::int64_t>& delay, Schedule& sc) {
  const auto& edges = dag.edges();
  const auto& outs = dag.out_edges();
  const auto& topo = dag.topo_order();
  sc.ls.assign(dag.size(), 0);
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const std::size_t v = static_cast<std::size_t>(*it);
    std::int64_t lf = sc.span;
    for (int e : outs[v]) {
      const int w = edges[static_cast<std::size_t>(e)].to;
      lf = std::min(lf, sc.ls[static_cast<std::size_t>(w)] - delay[static_cast<std::size_t>(e)]);
    }
    sc.ls[v] = lf - d[v];
  }
}

// The frontier's search, Phillips-Dessouky style: from every computation at its slowest, repeatedly cut
// the critical sub-DAG at minimum cost and shorten (and, with lower bounds, lengthen) its activities.
class FrontierSolver {
 public:
  FrontierSolver(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const FrontierOptions& o, Frontier& f)
      : dag_(dag), nodes_(dag.nodes()), edges_(dag.edges()), N_(nodes_.size()), o_(o), f_(f),
        V_(static_cast<int>(2 * N_ + 2)), src_(static_cast<int>(2 * N_)), snk_(static_cast<int>(2 * N_ + 1)) {
    for (const ComputationCurve& c : curves) {
      hulls_.push_back(quantise(c, lower_hull(c, o.p_blocking_w), o.quantum_s, o.p_blocking_w));
      f.hull.push_back(hulls_.back().option);
      f.hull_q.push_back(hulls_.back().t);
    }
    d_.resize(N_);
    delay_.resize(edges_.size());
    for (std::size_t e = 0; e < edges_.size(); ++e) delay_[e] = std::llround(edges_[e].delay_s / o.quantum_s);
    start_at_slowest(curves.size());
    f.start_q = d_;
    earliest(dag_, d_, delay_, sc_);
    f.points.push_back({sc_.span, cost_});
  }

  void run() {
    for (; f_.iterations < o_.max_iterations; ++f_.iterations) {
      latest(dag_, d_, delay_, sc_);
      const std::int64_t T = sc_.span;
      critical_arcs(T);
      Cut cut = solver_.solve(V_, src_, snk_, arcs_);
      if (!(cut.value < kInf / 2)) break;  // every critical path is at its fastest
      if (!cut.lower_bounds_used) ++f_.fallback_cuts;
      std::vector<std::size_t> shorter, longer;
      std::int64_t room = 0;
      classify(cut, shorter, longer, room);
      const std::int64_t step = take_step(T, cut, shorter, longer, room);
      record(shorter, longer, step);
    }
    f_.max_flows = solver_.max_flows;
  }

 private:
  const QuantisedHull* hull_of(std::size_t v) const {
    return nodes_[v].computation ? &hulls_[static_cast<std::size_t>(nodes_[v].curve)] : nullptr;
  }

  // Every computation at its slowest hull point, fixed steps at their duration; the cost of that.
  void start_at_slowest(std::size_t curve_count) {
    for (std::size_t v = 0; v < N_; ++v) {
      if (nodes_[v].computation) {
        if (nodes_[v].curve < 0 || static_cast<std::size_t>(nodes_[v].curve) >= curve_count)
          throw InputError("frontier", "curve", "computation node " + std::to_string(v) + " has no curve");
        const QuantisedHull& h = hulls_[static_cast<std::size_t>(nodes_[v].curve)];
        d_[v] = h.slowest();
        cost_ += h.c.back();
      } else {
        d_[v] = std::llround(nodes_[v].fixed_s / o_.quantum_s);
      }
    }
  }

  // The critical sub-DAG as a flow network (node v split into 2v -> 2v+1, its arc priced by the hull's
  // slopes), for an iteration time T.
  void critical_arcs(std::int64_t T) {
    const auto& ins = dag_.in_edges();
    const auto& outs = dag_.out_edges();
    arcs_.clear();
    for (std::size_t v = 0; v < N_; ++v) {
      if (sc_.ls[v] != sc_.es[v]) continue;
      FlowArc a{static_cast<int>(2 * v), static_cast<int>(2 * v + 1), kInf, 0};
      if (const QuantisedHull* h = hull_of(v)) {
        if (d_[v] > h->fastest()) a.upper = h->slope(h->below(d_[v]));
        if (d_[v] < h->slowest()) a.lower = h->slope(h->above(d_[v]));
      }
      arcs_.push_back(a);
      if (ins[v].empty() && sc_.es[v] == 0) arcs_.push_back({src_, static_cast<int>(2 * v), kInf, 0});
      if (outs[v].empty() && sc_.es[v] + d_[v] == T) arcs_.push_back({static_cast<int>(2 * v + 1), snk_, kInf, 0});
    }
    for (std::size_t e = 0; e < edges_.size(); ++e) {
      const std::size_t u = static_cast<std::size_t>(edges_[e].from), w = static_cast<std::size_t>(edges_[e].to);
      const std::int64_t fl = sc_.ls[w] - (sc_.es[u] + d_[u] + delay_[e]);
      if (fl == 0 && sc_.ls[u] == sc_.es[u] && sc_.ls[w] == sc_.es[w]) arcs_.push_back({static_cast<int>(2 * u + 1), static_cast<int>(2 * w), kInf, 0});
    }
  }

  // Activities the cut shortens and lengthens, and how far their costs stay linear.
  void classify(const Cut& c, std::vector<std::size_t>& shorter, std::vector<std::size_t>& longer, std::int64_t& room) const {
    shorter.clear();
    longer.clear();
    room = std::numeric_limits<std::int64_t>::max();
    for (const FlowArc& a : arcs_) {
      if (a.from >= static_cast<int>(2 * N_) || a.to >= static_cast<int>(2 * N_) || a.to != a.from + 1 || a.from % 2) continue;
      const std::size_t v = static_cast<std::size_t>(a.from / 2);
      const bool in_s = c.source_side[static_cast<std::size_t>(a.from)], out_s = c.source_side[static_cast<std::size_t>(a.to)];
      const QuantisedHull* h = hull_of(v);
      if (in_s && !out_s) {
        if (!h) throw std::logic_error("frontier: a finite cut crosses a fixed step");
        shorter.push_back(v);
        room = std::min(room, d_[v] - h->t[h->below(d_[v])]);
      } else if (!in_s && out_s && c.lower_bounds_used && h && d_[v] < h->slowest()) {
        longer.push_back(v);
        room = std::min(room, h->t[h->above(d_[v]) + 1] - d_[v]);
      }
    }
  }

  void shift(const std::vector<std::size_t>& shorter, const std::vector<std::size_t>& longer, std::int64_t k) {
    for (std::size_t v : shorter) d_[v] -= k;
    for (std::size_t v : longer) d_[v] += k;
  }
  // Whether moving the cut by k keeps the iteration at T - k (one longest-path pass).
  bool fits(std::int64_t T, const std::vector<std::size_t>& shorter, const std::vector<std::size_t>& longer, std::int64_t k) {
    shift(shorter, longer, k);
    earliest(dag_, d_, delay_, sc_);
    shift(shorter, longer, -k);
    return sc_.span <= T - k;
  }

  // How far the cut can go at once: within every cut activity's linear segment (room) and until a
  // path the cut does not shorten reaches the new iteration time. Path lengths are linear in the
  // step, so the steps that keep the iteration at T - step form an interval [1, s*]: the largest
  // is found by bisection, each probe one longest-path pass. Within it the critical sub-DAG and
  // every cost stay as they were, so the cut stays minimal (Phillips-Dessouky's unit step, repeated).
  // Applies the step (durations and schedule) and returns it.
  std::int64_t take_step(std::int64_t T, Cut& cut, std::vector<std::size_t>& shorter, std::vector<std::size_t>& longer,
                         std::int64_t& room) {
    std::int64_t step = std::max<std::int64_t>(1, room);
    bool shorten_only = false;
    for (;;) {
      if (step > 1 && !fits(T, shorter, longer, step)) {
        std::int64_t lo = 1, hi = step;  // fits(lo) is checked below; fits(hi) is false
        while (hi - lo > 1) {
          const std::int64_t mid = lo + (hi - lo) / 2;
          (fits(T, shorter, longer, mid) ? lo : hi) = mid;
        }
        step = lo;
      }
      shift(shorter, longer, step);
      earliest(dag_, d_, delay_, sc_);
      if (sc_.span <= T - step) break;
      shift(shorter, longer, -step);
      if (step > 1) {
        step = 1;
        continue;
      }
      // Lengthening pushed a path outside the critical sub-DAG over the new time: shorten only.
      if (shorten_only) throw std::logic_error("frontier: a shortening cut did not shorten the iteration");
      shorten_only = true;
      std::vector<FlowArc> no_lower = arcs_;
      for (FlowArc& a : no_lower) a.lower = 0;
      cut = solver_.solve(V_, src_, snk_, no_lower);
      cut.lower_bounds_used = false;
      ++f_.fallback_cuts;
      classify(cut, shorter, longer, room);
      if (longer.size() || shorter.empty()) throw std::logic_error("frontier: a shortening cut did not shorten");
    }
    return step;
  }

  // The new point: the cost of the step and the durations it changed.
  void record(const std::vector<std::size_t>& shorter, const std::vector<std::size_t>& longer, std::int64_t step) {
    std::vector<std::pair<int, std::int64_t>> change;
    for (std::size_t v : shorter) {
      const QuantisedHull* h = hull_of(v);
      cost_ += h->cost(d_[v]) - h->cost(d_[v] + step);
      change.emplace_back(static_cast<int>(v), d_[v]);
    }
    for (std::size_t v : longer) {
      const QuantisedHull* h = hull_of(v);
      cost_ += h->cost(d_[v]) - h->cost(d_[v] - step);
      change.emplace_back(static_cast<int>(v), d_[v]);
    }
    f_.changes.push_back(std::move(change));
    f_.points.push_back({sc_.span, cost_});
  }

  const IterationDag& dag_;
  const std::vector<DagNode>& nodes_;
  const std::vector<DagEdge>& edges_;
  const std::size_t N_;
  const FrontierOptions& o_;
  Frontier& f_;
  const int V_, src_, snk_;  // flow network: 2 nodes per DAG node, source, sink
  std::vector<QuantisedHull> hulls_;
  std::vector<std::int64_t> d_, delay_;  // durations and edge delays, quanta
  double cost_ = 0;
  Schedule sc_;
  std::vector<FlowArc> arcs_;
  MinCutSolver solver_;
};

}  // namespace

std::vector<std::int64_t> Frontier::durations_q(std::size_t k) const {
  std::vector<std::int64_t> d = start_q;
  for (std::size_t i = 0; i < k && i < changes.size(); ++i)
    for (const auto& [node, dq] : changes[i]) d[static_cast<std::size_t>(node)] = dq;
  return d;
}

Frontier solve_frontier(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const FrontierOptions& o) {
  const auto t_start = std::chrono::steady_clock::now();
  if (!(o.quantum_s > 0)) throw InputError("frontier", "quantum_s", "expected a time quantum > 0 s");
  Frontier f;
  f.quantum_s = o.quantum_s;
  f.p_blocking_w = o.p_blocking_w;
  f.gpus = dag.gpus();
  FrontierSolver solver(dag, curves, o, f);
  solver.run();
  f.solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return f;
}

// ---- plans in real time ----

namespace {

struct RealSchedule {
  std::vector<double> es, lf;  // earliest start, latest finish (against a deadline)
  double span = 0;
};

std::vector<double> durations(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const std::vector<int>& option) {
  std::vector<double> d(dag.size());
  for (std::size_t v = 0; v < dag.size(); ++v) {
    const DagNode& n = dag.nodes()[v];
    d[v] = n.computation ? curves[static_cast<std::size_t>(n.curve)].options[static_cast<std::size_t>(option[v])].time_s : n.fixed_s;
  }
  return d;
}

void real_schedule(const IterationDag& dag, const std::vector<double>& d, double deadline, RealSchedule& rs) {
  rs.span = longest_path(dag, d, &rs.es);
  const double T = deadline > 0 ? deadline : rs.span;
  const auto& edges = dag.edges();
  const auto& outs = dag.out_edges();
  const auto& topo = dag.topo_order();
  rs.lf.assign(dag.size(), T);
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const std::size_t v = static_cast<std::size_t>(*it);
    double lf = T;
    for (int e : outs[v]) {
      const DagEdge& ed = edges[static_cast<std::size_t>(e)];
      const std::size_t w = static_cast<std::size_t>(ed.to);
      lf = std::min(lf, rs.lf[w] - d[w] - ed.delay_s);
    }
    rs.lf[v] = lf;
  }
}

// Position of an option in its curve's Pareto list (-1: not a Pareto option).
int pareto_rank(const ComputationCurve& c, int option) {
  for (std::size_t k = 0; k < c.pareto.size(); ++k)
    if (c.pareto[k] == option) return static_cast<int>(k);
  return -1;
}

// Speeds up the cheapest critical computations until the iteration fits the target (rounding repair).
void repair(const IterationDag& dag, const std::vector<ComputationCurve>& curves, std::vector<int>& option, double target,
            double pb) {
  const double tol = 1e-9 * std::max(1.0, target);
  RealSchedule rs;
  for (int guard = 0; guard < 100000; ++guard) {
    std::vector<double> d = durations(dag, curves, option);
    real_schedule(dag, d, 0, rs);
    if (rs.span <= target + tol) return;
    // Nodes on a longest path: zero float against the current span.
    int best = -1, best_to = -1;
    double best_rate = INFINITY;
    for (std::size_t v = 0; v < dag.size(); ++v) {
      const DagNode& n = dag.nodes()[v];
      if (!n.computation || rs.lf[v] - rs.es[v] - d[v] > 1e-12 * std::max(1.0, rs.span)) continue;
      const ComputationCurve& c = curves[static_cast<std::size_t>(n.curve)];
      int k = pareto_rank(c, option[v]);
      if (k < 0) {  // not on the Pareto list: its fastest Pareto option not slower than it
        for (k = static_cast<int>(c.pareto.size()) - 1; k >= 0 && c.options[static_cast<std::size_t>(c.pareto[static_cast<std::size_t>(k)])].time_s > d[v]; --k) {}
        k += 1;
      }
      if (k <= 0) continue;
      const int to = c.pareto[static_cast<std::size_t>(k - 1)];
      const double dt = d[v] - c.options[static_cast<std::size_t>(to)].time_s;
      if (dt <= 0) continue;
      const double rate = (c.effective_j(to, pb) - c.effective_j(option[v], pb)) / dt;
      if (rate < best_rate) best_rate = rate, best = static_cast<int>(v), best_to = to;
    }
    if (best < 0) return;  // nothing left to speed up
    option[static_cast<std::size_t>(best)] = best_to;
  }
}

// Slows computations with float to slower Pareto options while the iteration stays within `target`,
// largest saving first.
void reclaim(const IterationDag& dag, const std::vector<ComputationCurve>& curves, std::vector<int>& option, double target,
             double pb) {
  RealSchedule rs;
  for (int pass = 0; pass < 8; ++pass) {
    std::vector<double> d = durations(dag, curves, option);
    real_schedule(dag, d, target, rs);
    struct Candidate {
      double saving;
      std::size_t node;
    };
    std::vector<Candidate> cand;
    for (std::size_t v = 0; v < dag.size(); ++v) {
      const DagNode& n = dag.nodes()[v];
      if (!n.computation) continue;
      const ComputationCurve& c = curves[static_cast<std::size_t>(n.curve)];
      if (option[v] == c.cheapest()) continue;
      const double fl = rs.lf[v] - rs.es[v] - d[v];
      const int to = c.cheapest();
      if (fl <= 0) continue;
      cand.push_back({c.effective_j(option[v], pb) - c.effective_j(to, pb), v});
    }
    std::sort(cand.begin(), cand.end(), [](const Candidate& a, const Candidate& b) { return a.saving > b.saving || (a.saving == b.saving && a.node < b.node); });
    bool changed = false;
    for (const Candidate& k : cand) {
      const std::size_t v = k.node;
      const ComputationCurve& c = curves[static_cast<std::size_t>(dag.nodes()[v].curve)];
      const double fl = rs.lf[v] - rs.es[v] - d[v];
      if (fl <= 0) continue;
      // The slowest Pareto option that fits in the float and saves energy.
      int pick = -1;
      for (auto it = c.pareto.rbegin(); it != c.pareto.rend(); ++it) {
        const CurveOption& o = c.options[static_cast<std::size_t>(*it)];
        if (o.time_s - d[v] <= fl && c.effective_j(*it, pb) < c.effective_j(option[v], pb) - 1e-12) {
          pick = *it;
          break;
        }
      }
      if (pick < 0) continue;
      option[v] = pick;
      d[v] = c.options[static_cast<std::size_t>(pick)].time_s;
      real_schedule(dag, d, target, rs);
      changed = true;
    }
    if (!changed) return;
  }
}

}  // namespace

std::vector<int> options_at_clocks(const IterationDag& dag, const std::vector<ComputationCurve>& curves,
                                   const std::vector<std::vector<double>>& clocks, const GpuModel& model, const std::string& file) {
  std::vector<int> option(dag.size(), -1);
  const std::vector<std::vector<int>> rows = nodes_by_schedule_index(dag);
  for (std::size_t s = 0; s < rows.size(); ++s)
    for (std::size_t i = 0; i < rows[s].size(); ++i) {
      const int v = rows[s][i];
      if (v < 0) continue;
      const double f = clocks[s][i];
      const int o = curves[static_cast<std::size_t>(dag.nodes()[static_cast<std::size_t>(v)].curve)].option_at_sm_mhz(f);
      if (o < 0)
        throw InputError(file, "[" + std::to_string(s) + "].power_states",
                         "clock " + std::to_string(f) + " MHz is not an SM clock of " + model.name() + " (" + model.describe_sm_clocks() + ")");
      option[static_cast<std::size_t>(v)] = o;
    }
  return option;
}

void check_plan_clocks(const ClockPlanFile& plan, const GpuModel& model) {
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const std::vector<double>& ps = plan.ranks[r].power_states_mhz;
    for (std::size_t i = 0; i < ps.size(); ++i)
      if (model.sm_index(ps[i]) < 0)
        throw InputError(plan.file, "[" + std::to_string(r) + "].power_states",
                         "entry " + std::to_string(i) + ": clock " + std::to_string(ps[i]) + " MHz is not an SM clock of " +
                             model.name() + " (" + model.describe_sm_clocks() + ")");
  }
}

IterationPlan evaluate_plan(const IterationDag& dag, const std::vector<ComputationCurve>& curves, std::vector<int> option,
                            double pb) {
  IterationPlan p;
  if (option.size() != dag.size()) throw InputError("plan", "option", "expected one option per DAG node");
  const std::vector<double> d = durations(dag, curves, option);
  p.time_s = longest_path(dag, d);
  double busy = 0, energy = 0;
  for (std::size_t v = 0; v < dag.size(); ++v) {
    const DagNode& n = dag.nodes()[v];
    if (!n.computation) continue;
    const CurveOption& o = curves[static_cast<std::size_t>(n.curve)].options[static_cast<std::size_t>(option[v])];
    busy += o.time_s;
    energy += o.energy_j;
  }
  p.effective_j = energy - pb * busy;
  p.energy_j = energy + pb * (dag.gpus() * p.time_s - busy);
  p.option = std::move(option);
  return p;
}

IterationPlan fastest_plan(const IterationDag& dag, const std::vector<ComputationCurve>& curves, double pb) {
  std::vector<int> option(dag.size(), -1);
  for (std::size_t v = 0; v < dag.size(); ++v)
    if (dag.nodes()[v].computation) option[v] = curves[static_cast<std::size_t>(dag.nodes()[v].curve)].fastest();
  return evaluate_plan(dag, curves, std::move(option), pb);
}

IterationPlan plan_for_time(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const Frontier& f,
                            double target_s) {
  const double pb = f.p_blocking_w;
  const IterationPlan fastest = fastest_plan(dag, curves, pb);
  const double target = std::max(target_s, fastest.time_s);
  // Candidates: the least relaxed total energy within the target, and the first point above it.
  std::size_t best = f.points.size(), above = f.points.size();
  for (std::size_t k = 0; k < f.points.size(); ++k) {
    if (f.points[k].time_s(f.quantum_s) <= target) {
      if (best == f.points.size() || f.total_energy_j(k) < f.total_energy_j(best)) best = k;
    } else if (above == f.points.size() || f.points[k].time_q < f.points[above].time_q) {
      above = k;
    }
  }
  IterationPlan out = fastest;
  reclaim(dag, curves, out.option, target, pb);
  out = evaluate_plan(dag, curves, out.option, pb);
  for (std::size_t k : {best, above}) {
    if (k >= f.points.size()) continue;
    const std::vector<std::int64_t> dq = f.durations_q(k);
    std::vector<int> option(dag.size(), -1);
    for (std::size_t v = 0; v < dag.size(); ++v) {
      const DagNode& n = dag.nodes()[v];
      if (!n.computation) continue;
      const auto& hq = f.hull_q[static_cast<std::size_t>(n.curve)];
      const auto& ho = f.hull[static_cast<std::size_t>(n.curve)];
      std::size_t j = static_cast<std::size_t>(std::upper_bound(hq.begin(), hq.end(), dq[v]) - hq.begin());
      option[v] = ho[j == 0 ? 0 : j - 1];
    }
    repair(dag, curves, option, target, pb);
    reclaim(dag, curves, option, target, pb);
    IterationPlan p = evaluate_plan(dag, curves, std::move(option), pb);
    if (p.time_s <= target * (1 + 1e-9) && p.energy_j < out.energy_j) out = std::move(p);
  }
  return out;
}

IterationPlan no_slowdown_plan(const IterationDag& dag, const std::vector<ComputationCurve>& curves, const Frontier& f) {
  return plan_for_time(dag, curves, f, fastest_plan(dag, curves, f.p_blocking_w).time_s);
}

}  // namespace dvfs
