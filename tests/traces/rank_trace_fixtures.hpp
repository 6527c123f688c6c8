#pragma once
// Hand-built Kineto traces of the ranks of a two-rank NCCL job, in PyTorch's layout: distributedInfo, compute
// kernels on stream 7, NCCL kernels on stream 20 carrying record_param_comms' fields.
#include "models/src/collective_cost.hpp"
#include "models/src/model_registry.hpp"
#include "sim/engine/engine.hpp"
#include "sim/policies/policy_factory.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/multi_rank.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace dvfs::testing {

struct RankEvent {
  std::string name;
  double ts_us, dur_us;
  std::string nccl_args;  // "" for a compute kernel
};

inline std::string rank_trace(int rank, const std::vector<RankEvent>& evs) {
  std::ostringstream os;
  os << R"({"distributedInfo": {"backend": "nccl", "rank": )" << rank << R"(, "world_size": 2}, "traceEvents": [)";
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const RankEvent& e = evs[i];
    os << (i ? "," : "") << R"({"ph": "X", "cat": "kernel", "name": ")" << e.name << R"(", "pid": 0, "tid": 7, "ts": )" << e.ts_us
       << R"(, "dur": )" << e.dur_us << R"(, "args": {"device": 0, "stream": )" << (e.nccl_args.empty() ? 7 : 20)
       << (e.nccl_args.empty() ? "" : ", " + e.nccl_args) << "}}";
  }
  os << "]}";
  return os.str();
}

// record_param_comms' fields of an all-reduce of nelems floats.
inline std::string allreduce_args(double nelems, const char* ranks = "[0, 1]", const char* name = "allreduce") {
  std::ostringstream os;
  os << R"("Collective name": ")" << name << R"(", "dtype": "Float", "In msg nelems": )" << static_cast<long>(nelems)
     << R"(, "Out msg nelems": )" << static_cast<long>(nelems) << R"(, "Group size": 2, "Process Group Name": "0", "Process Group Ranks": ")"
     << ranks << R"(")";
  return os.str();
}

// One rank's trace imported as the merge takes it.
inline RankTrace rank_part(int rank, const std::vector<RankEvent>& evs) {
  const std::string file = "rank" + std::to_string(rank) + ".json";
  return {import_kineto_text(rank_trace(rank, evs), file, Classifier::load_default()), file, -1, ""};
}

// Two nodes of one GPU each: a transfer or all-reduce between ranks 0 and 1 crosses the NICs (450 GB/s NVLink,
// 50 GB/s network).
inline ClusterSpec two_nodes() {
  ClusterSpec cs = resolve_bandwidths(default_cluster_spec(), 450e9, 50e9);
  cs.gpus_per_node = 1;
  return cs;
}

// A job replayed on h200 at its top clocks (policy "max"), without a timeline; `record_activities` for a trace export.
inline std::vector<RankOutcome> replay(const Workload& wl, const ClusterSpec& cs, bool record_activities = false,
                                       StreamOverlap overlap = StreamOverlap::contention, EngineMode engine = EngineMode::local_loop) {
  const GpuModel m = load_gpu_model("h200");
  PolicySpec ps;
  ps.name = "max";
  ReplayOptions o;
  o.timeline_interval_s = 0;
  o.record_activities = record_activities;
  o.stream_overlap = overlap;
  return run_engine(wl, m, make_policy_factory(ps, m, ""), o, engine, cs);
}

}  // namespace dvfs::testing
