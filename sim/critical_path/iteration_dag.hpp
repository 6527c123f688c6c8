#pragma once
// The DAG of one pipeline-parallel training iteration (Perseus, SOSP'24): nodes are the computations
// (forward / backward of each micro-batch on each model chunk of each stage) and fixed-length steps
// (data loads, transfers, gradient sync, the rest of the iteration), edges are the data dependencies
// between neighbouring virtual stages and the stream order on each stage's GPU, taken from the
// schedule (`schedule_ops`: 1F1B, GPipe, Megatron's interleaved 1F1B). Data-parallel replicas run the
// same DAG; one DAG stands for every replica.
//
// A node's duration is chosen by the frontier solver (computations, from their time/energy curve) or
// fixed. The iteration time of a choice of durations is the DAG's longest path.
#include "sim/pipeline/schedule.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dvfs {

struct DagNode {
  bool computation = true;  // false: a fixed-length step (duration fixed_s, no clock choice)
  int stage = 0;            // the GPU (pipeline stage) that runs it; -1 = none (e.g. a network step)
  int chunk = 0, microbatch = 0;
  bool backward = false;
  int index = -1;           // position in the stage's schedule (computations), -1 otherwise
  int curve = -1;           // computations: index into the curve table
  double fixed_s = 0;       // fixed steps: duration
  std::string label;        // fixed steps: what they stand for ("load", "p2p", "rest", ...)
};

struct DagEdge {
  int from = 0, to = 0;
  double delay_s = 0;  // the successor starts at least this long after the predecessor ends
};

class IterationDag {
 public:
  int add_node(DagNode n);
  void add_edge(int from, int to, double delay_s = 0);

  const std::vector<DagNode>& nodes() const { return nodes_; }
  const std::vector<DagEdge>& edges() const { return edges_; }
  std::size_t size() const { return nodes_.size(); }
  int gpus() const { return gpus_; }  // GPUs of one pipeline (one per stage)
  void set_gpus(int g) { gpus_ = g; }

  // Topological order (throws InputError on a cycle); cached until the graph changes.
  const std::vector<int>& topo_order() const;
  // Per node: incoming and outgoing edge indices.
  const std::vector<std::vector<int>>& in_edges() const;
  const std::vector<std::vector<int>>& out_edges() const;

  // Computation node of (stage, chunk, micro-batch, pass), or -1; set_shape sizes the index that
  // add_node fills for computations.
  void set_shape(int stages, int chunks, int microbatches);
  int computation(int stage, int chunk, int microbatch, bool backward) const;

 private:
  int key(int stage, int chunk, int microbatch, bool backward) const;
  void invalidate() { topo_.clear(); ins_.clear(); outs_.clear(); }
  std::vector<DagNode> nodes_;
  std::vector<DagEdge> edges_;
  int gpus_ = 1;
  int stages_ = 0, chunks_ = 1, microbatches_ = 0;
  std::vector<int> by_key_;  // ((stage * chunks + chunk) * M + mb) * 2 + backward -> node
  mutable std::vector<int> topo_;
  mutable std::vector<std::vector<int>> ins_, outs_;
};

// What a pipeline DAG is built from. Curves are numbered by `curve_of`: by default one per (virtual
// stage, pass), 2 v + backward; `per_microbatch_curves` numbers them per computation instead
// (2 (v M + m) + backward), for computations measured one by one.
struct PipelineDagSpec {
  int stages = 1, microbatches = 1, chunks = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  bool per_microbatch_curves = false;
  double p2p_s = 0;  // one activation or gradient transfer between neighbouring stages
  // Optional fixed step before each forward, in the stage's stream after its input arrived (Perseus:
  // the data load of the first and last stages): [virtual stage][micro-batch] seconds; empty = none.
  std::vector<std::vector<double>> load_s;
  // Optional fixed step per stage after its last backward (gradient sync), and one after everything
  // (the rest of the iteration: optimizer, what the computations do not cover), seconds; 0 = none.
  std::vector<double> after_last_backward_s;
  double tail_s = 0;
};

IterationDag build_pipeline_dag(const PipelineDagSpec& spec);
inline int default_curve_index(int virtual_stage, bool backward) { return 2 * virtual_stage + (backward ? 1 : 0); }

// Longest path: the iteration time when every node lasts `duration_s[node]` (fixed nodes: their own
// fixed_s is used whatever the vector says). Also returns each node's earliest start if asked.
double longest_path(const IterationDag& dag, const std::vector<double>& duration_s, std::vector<double>* start_s = nullptr);

// [stage][schedule index] -> the computation node (-1 where a stage has no computation at that index).
std::vector<std::vector<int>> nodes_by_schedule_index(const IterationDag& dag);

}  // namespace dvfs
