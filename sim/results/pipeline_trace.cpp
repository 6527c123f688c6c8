#include "sim/results/pipeline_trace.hpp"

#include "sim/results/simulated_workload.hpp"
#include "traces/src/chakra/chakra_writer.hpp"

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

static TraceExport pipeline_export(const PipelineTraceRequest& req, const Workload& wl) {
  const KernelPipeline& kp = *req.pipeline;
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
  return t;
}

Json write_pipeline_trace(const PipelineTraceRequest& req, const std::string& path) {
  const Workload wl = phase_annotated(*req.pipeline, *req.names);
  TraceExport t = pipeline_export(req, wl);
  t.only_gpus = req.only_gpus;
  const TraceExportStats st = write_trace_export(t, path);
  return trace_export_stats_json(st, path);
}

Json write_pipeline_chakra(const PipelineTraceRequest& req, const std::string& dir) {
  const Workload wl = phase_annotated(*req.pipeline, *req.names);
  const TraceExport t = pipeline_export(req, wl);
  const int T = req.pipeline->tp_ranks;
  std::vector<std::vector<int>> tp_groups(t.gpus.size());
  if (T > 1)
    for (std::size_t g = 0; g < t.gpus.size(); ++g)
      for (int i = 0; i < T; ++i) tp_groups[g].push_back(static_cast<int>(g) / T * T + i);
  const Workload sim = simulated_workload(t, tp_groups);
  const ChakraExportOptions opts;
  return chakra_export_stats_json(write_chakra_trace(sim, dir, opts), dir, opts);
}

}  // namespace dvfs
