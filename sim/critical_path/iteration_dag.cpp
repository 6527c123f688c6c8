#include "sim/critical_path/iteration_dag.hpp"

#include "sim/core/errors.hpp"

#include <algorithm>

namespace dvfs {

int IterationDag::key(int stage, int chunk, int microbatch, bool backward) const {
  if (stage < 0 || stage >= stages_ || chunk < 0 || chunk >= chunks_ || microbatch < 0 || microbatch >= microbatches_) return -1;
  return ((stage * chunks_ + chunk) * microbatches_ + microbatch) * 2 + (backward ? 1 : 0);
}

void IterationDag::set_shape(int stages, int chunks, int microbatches) {
  stages_ = stages;
  chunks_ = chunks;
  microbatches_ = microbatches;
  by_key_.assign(static_cast<std::size_t>(stages) * chunks * microbatches * 2, -1);
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const DagNode& n = nodes_[i];
    const int k = n.computation ? key(n.stage, n.chunk, n.microbatch, n.backward) : -1;
    if (k >= 0) by_key_[static_cast<std::size_t>(k)] = static_cast<int>(i);
  }
}

int IterationDag::add_node(DagNode n) {
  nodes_.push_back(std::move(n));
  const int id = static_cast<int>(nodes_.size()) - 1;
  const DagNode& m = nodes_.back();
  const int k = m.computation ? key(m.stage, m.chunk, m.microbatch, m.backward) : -1;
  if (k >= 0) by_key_[static_cast<std::size_t>(k)] = id;
  invalidate();
  return id;
}

void IterationDag::add_edge(int from, int to, double delay_s) {
  const int n = static_cast<int>(nodes_.size());
  if (from < 0 || to < 0 || from >= n || to >= n || from == to || !(delay_s >= 0))
    throw InputError("iteration DAG", "edge", "expected two distinct existing nodes and a delay >= 0 s");
  edges_.push_back({from, to, delay_s});
  invalidate();
}

int IterationDag::computation(int stage, int chunk, int microbatch, bool backward) const {
  const int k = key(stage, chunk, microbatch, backward);
  return k < 0 ? -1 : by_key_[static_cast<std::size_t>(k)];
}

const std::vector<std::vector<int>>& IterationDag::in_edges() const {
  if (ins_.size() != nodes_.size()) {
    ins_.assign(nodes_.size(), {});
    outs_.assign(nodes_.size(), {});
    for (std::size_t e = 0; e < edges_.size(); ++e) {
      ins_[static_cast<std::size_t>(edges_[e].to)].push_back(static_cast<int>(e));
      outs_[static_cast<std::size_t>(edges_[e].from)].push_back(static_cast<int>(e));
    }
  }
  return ins_;
}

const std::vector<std::vector<int>>& IterationDag::out_edges() const {
  in_edges();
  return outs_;
}

const std::vector<int>& IterationDag::topo_order() const {
  if (topo_.size() == nodes_.size() && !nodes_.empty()) return topo_;
  const auto& ins = in_edges();
  const auto& outs = out_edges();
  std::vector<int> indeg(nodes_.size());
  for (std::size_t v = 0; v < nodes_.size(); ++v) indeg[v] = static_cast<int>(ins[v].size());
  topo_.clear();
  for (std::size_t v = 0; v < nodes_.size(); ++v)
    if (indeg[v] == 0) topo_.push_back(static_cast<int>(v));
  for (std::size_t i = 0; i < topo_.size(); ++i)
    for (int e : outs[static_cast<std::size_t>(topo_[i])]) {
      const int w = edges_[static_cast<std::size_t>(e)].to;
      if (--indeg[static_cast<std::size_t>(w)] == 0) topo_.push_back(w);
    }
  if (topo_.size() != nodes_.size()) {
    topo_.clear();
    throw InputError("iteration DAG", "edges", "the dependencies form a cycle (a schedule that cannot run)");
  }
  return topo_;
}

IterationDag build_pipeline_dag(const PipelineDagSpec& sp) {
  check_schedule(sp.schedule, sp.stages, sp.microbatches, sp.chunks, "iteration DAG");
  const int S = sp.stages, M = sp.microbatches, V = S * sp.chunks;
  if (!sp.load_s.empty()) {
    if (static_cast<int>(sp.load_s.size()) != V) throw InputError("iteration DAG", "load_s", "expected one row per virtual stage");
    for (const auto& row : sp.load_s)
      if (static_cast<int>(row.size()) != M) throw InputError("iteration DAG", "load_s", "expected one time per micro-batch");
  }
  if (!sp.after_last_backward_s.empty() && static_cast<int>(sp.after_last_backward_s.size()) != S)
    throw InputError("iteration DAG", "after_last_backward_s", "expected one time per stage");
  IterationDag dag;
  dag.set_gpus(S);
  dag.set_shape(S, sp.chunks, M);
  std::vector<int> last(static_cast<std::size_t>(S), -1);
  std::vector<std::vector<int>> load_node(static_cast<std::size_t>(V), std::vector<int>(static_cast<std::size_t>(M), -1));
  for (int s = 0; s < S; ++s) {
    const std::vector<PipelineOp> ops = schedule_ops(sp.schedule, s, S, M, sp.chunks);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const PipelineOp& op = ops[i];
      const int v = op.chunk * S + s;
      int prev = last[static_cast<std::size_t>(s)];
      const double load = sp.load_s.empty() || op.backward ? 0.0 : sp.load_s[static_cast<std::size_t>(v)][static_cast<std::size_t>(op.microbatch)];
      if (load > 0) {
        DagNode l;
        l.computation = false;
        l.stage = s;
        l.chunk = op.chunk;
        l.microbatch = op.microbatch;
        l.fixed_s = load;
        l.label = "load";
        const int id = dag.add_node(l);
        if (prev >= 0) dag.add_edge(prev, id);
        load_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(op.microbatch)] = id;
        prev = id;
      }
      DagNode n;
      n.stage = s;
      n.chunk = op.chunk;
      n.microbatch = op.microbatch;
      n.backward = op.backward;
      n.index = static_cast<int>(i);
      n.curve = sp.per_microbatch_curves ? 2 * (v * M + op.microbatch) + (op.backward ? 1 : 0) : default_curve_index(v, op.backward);
      const int id = dag.add_node(n);
      if (prev >= 0) dag.add_edge(prev, id);
      last[static_cast<std::size_t>(s)] = id;
    }
  }
  // Data dependencies between virtual stages: activations forward, gradients backward; the last
  // virtual stage turns a micro-batch around on its own GPU.
  for (int v = 0; v < V; ++v)
    for (int m = 0; m < M; ++m) {
      const int s = v % S, c = v / S;
      const int f = dag.computation(s, c, m, false), b = dag.computation(s, c, m, true);
      if (v > 0) {
        const int up = dag.computation((v - 1) % S, (v - 1) / S, m, false);
        const int l = load_node[static_cast<std::size_t>(v)][static_cast<std::size_t>(m)];
        dag.add_edge(up, l >= 0 ? l : f, sp.p2p_s);
      }
      if (v < V - 1) dag.add_edge(dag.computation((v + 1) % S, (v + 1) / S, m, true), b, sp.p2p_s);
      else dag.add_edge(f, b);
    }
  std::vector<int> ends;
  for (int s = 0; s < S; ++s) {
    int end = last[static_cast<std::size_t>(s)];
    const double sync = sp.after_last_backward_s.empty() ? 0.0 : sp.after_last_backward_s[static_cast<std::size_t>(s)];
    if (sync > 0) {
      DagNode g;
      g.computation = false;
      g.stage = s;
      g.fixed_s = sync;
      g.label = "gradient sync";
      const int id = dag.add_node(g);
      dag.add_edge(end, id);
      end = id;
    }
    ends.push_back(end);
  }
  if (sp.tail_s > 0) {
    DagNode t;
    t.computation = false;
    t.stage = -1;
    t.fixed_s = sp.tail_s;
    t.label = "rest of the iteration";
    const int id = dag.add_node(t);
    for (int e : ends) dag.add_edge(e, id);
  }
  dag.topo_order();  // fails here on a cycle
  return dag;
}

double longest_path(const IterationDag& dag, const std::vector<double>& d, std::vector<double>* start_s) {
  const auto& nodes = dag.nodes();
  const auto& edges = dag.edges();
  const auto& ins = dag.in_edges();
  std::vector<double> local;
  std::vector<double>& es = start_s ? *start_s : local;
  es.assign(nodes.size(), 0.0);
  double span = 0;
  for (int v : dag.topo_order()) {
    const std::size_t vi = static_cast<std::size_t>(v);
    double t = 0;
    for (int e : ins[vi]) {
      const DagEdge& ed = edges[static_cast<std::size_t>(e)];
      const std::size_t u = static_cast<std::size_t>(ed.from);
      const double du = nodes[u].computation ? d[u] : nodes[u].fixed_s;
      t = std::max(t, es[u] + du + ed.delay_s);
    }
    es[vi] = t;
    span = std::max(span, t + (nodes[vi].computation ? d[vi] : nodes[vi].fixed_s));
  }
  return span;
}

std::vector<std::vector<int>> nodes_by_schedule_index(const IterationDag& dag) {
  std::vector<std::vector<int>> rows;
  for (std::size_t v = 0; v < dag.size(); ++v) {
    const DagNode& n = dag.nodes()[v];
    if (!n.computation) continue;
    if (rows.size() <= static_cast<std::size_t>(n.stage)) rows.resize(static_cast<std::size_t>(n.stage) + 1);
    auto& row = rows[static_cast<std::size_t>(n.stage)];
    if (row.size() <= static_cast<std::size_t>(n.index)) row.resize(static_cast<std::size_t>(n.index) + 1, -1);
    row[static_cast<std::size_t>(n.index)] = static_cast<int>(v);
  }
  return rows;
}

}  // namespace dvfs
