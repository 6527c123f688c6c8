#pragma once
// A kernel-level pipeline run (sim/pipeline/pipeline.hpp: a synthesised training iteration) as a trace
// file in the layout of sim/results/trace_export.hpp: one process per simulated GPU (replica x stage x
// simulated TP rank), its stage program's activities as they ran, the forward / backward / optimizer ranges
// of every micro-batch as annotations and phases, and the power and clock counters.
#include "sim/core/json_util.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/results/trace_export.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct PipelineTraceRequest {
  const KernelPipeline* pipeline = nullptr;
  const KernelPipelineResult* result = nullptr;
  const std::vector<std::string>* names = nullptr;  // the stage programs' kernel names
  int stages = 1;          // pipeline stages (PP)
  int gpus_per_actor = 1;  // GPUs one simulated actor stands for (a folded TP x CP group)
  std::string gpu_model;
  int sm_count = 0;
  Json metadata = Json::object();
  std::vector<int> only_gpus;  // the trace file: only these simulated GPUs (empty: all)
};

// Writes the trace (gzip when `path` ends in .gz); what was written, as trace_export_stats_json says.
Json write_pipeline_trace(const PipelineTraceRequest& req, const std::string& path);
// The same run as Chakra execution traces, DIR/trace.<gpu>.et (sim/results/simulated_workload.hpp): what was
// written, as chakra_export_stats_json says. TP collectives among unfolded TP ranks stay collectives of their group.
Json write_pipeline_chakra(const PipelineTraceRequest& req, const std::string& dir);

}  // namespace dvfs
