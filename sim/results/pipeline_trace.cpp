#include "sim/results/pipeline_trace.hpp"

#include <chrono>

namespace dvfs {

namespace {

// The stage programs with their forward / backward / optimizer kernels under an annotation of that name
// (the synthesis gives them none), so the export shows each micro-batch's passes and their phases.
Workload phase_annotated(const KernelPipeline& kp, const std::vector<std::string>& names) {
  Workload wl;
  wl.names = names;
  wl.annotation_names = {"forward", "backward", "optimizer"};
  const Phase phases[3] = {Phase::forward, Phase::backward, Phase::optimizer};
  for (std::uint32_t a = 0; a < 3; ++a) {
    AnnotationSet set;
    set.annotations = {a};
    set.phase = phases[a];
    wl.annotation_sets.push_back(set);  // set a + 1
  }
  wl.ranks = kp.stages;
  const auto stages = kp.stages.size();
  auto mark = [&](const std::vector<std::pair<std::size_t, std::size_t>>& ranges, std::uint32_t set, bool virtual_stages) {
    for (std::size_t v = 0; v < ranges.size(); ++v) {
      Rank& r = wl.ranks[virtual_stages ? v % stages : v];
      for (std::size_t i = ranges[v].first; i < ranges[v].second && i < r.kernels.size(); ++i) r.kernels[i].annotation_set = set;
    }
  };
  mark(kp.forward, 1, true);
  mark(kp.backward, 2, true);
  mark(kp.optimizer, 3, false);
  return wl;
}

}  // namespace

Json write_pipeline_trace(const PipelineTraceRequest& req, const std::string& path) {
  const KernelPipeline& kp = *req.pipeline;
  const Workload wl = phase_annotated(kp, *req.names);
  TraceExport t;
  t.workload = &wl;
  t.collectives = &kp.collectives;
  t.sm_count = req.sm_count;
  t.device_name = "simulated " + req.gpu_model;
  t.metadata = req.metadata;
  const int T = kp.tp_ranks, S = req.stages;
  for (std::size_t g = 0; g < req.result->outcomes.size(); ++g) {
    const int gi = static_cast<int>(g), replica = gi / (T * S), stage = (gi / T) % S, tp = gi % T;
    ExportedGpu e;
    e.program = &wl.ranks[static_cast<std::size_t>(stage)];
    e.outcome = &req.result->outcomes[g];
    e.pid = gi;
    e.label = "GPU " + std::to_string(gi) + ": replica " + std::to_string(replica) + " stage " + std::to_string(stage) +
              (T > 1 ? " TP rank " + std::to_string(tp) : "") +
              (req.gpus_per_actor > 1 ? " (stands for " + std::to_string(req.gpus_per_actor) + " GPUs)" : "");
    t.gpus.push_back(std::move(e));
  }
  const TraceExportStats st = write_trace_export(t, path);
  return trace_export_stats_json(st, path);
}

}  // namespace dvfs
