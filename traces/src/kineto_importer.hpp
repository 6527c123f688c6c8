#pragma once
// PyTorch profiler (Kineto) Chrome-trace importer, .json or .json.gz. Reads the current schema
// (cat "kernel"/"gpu_memcpy"/"gpu_memset", args.stream, args.grid/block/...) and the 2021 schema
// (cat "Kernel"/"Memcpy"/"Memset", tid "stream 7"). Annotations come from gpu_user_annotation
// ranges or, where a device has none, from CPU user_annotation ranges through launch correlation.
// Steps (ProfilerStep#N, stepN) partition each rank's activities: a step owns its activities from its
// first one up to the next step's first one, so per-step figures add up to the run even where the
// profiler's step ranges overlap. What the importer accepts: docs/trace-formats.md.
#include "sim/core/workload.hpp"
#include "traces/src/kernel_classifier.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct ImportReport {
  std::string schema;                  // "kineto" or "kineto-2021"
  std::size_t activities = 0;
  std::size_t overlapped_activities = 0;  // started before an earlier one ended (other streams)
  std::string step_source;             // "gpu_user_annotation", "cpu annotation via correlation", "none"
  std::string annotation_source;
  std::string device_name;      // the trace's first named device ("" when it names none)
  std::string device_platform;  // "rocm" when the trace was recorded on an AMD GPU (HIP runtime), else "cuda"
  int world_size = -1;          // PyTorch's distributedInfo (-1 when absent)
  std::string backend;          // distributedInfo.backend ("nccl", "gloo"), "" when absent
  std::vector<std::string> notes;  // what the user should know about the import (summary.json "notes")
};

Workload import_kineto(const std::string& path, const Classifier& classifier, ImportReport* report = nullptr);
Workload import_kineto_text(const std::string& text, const std::string& path_for_errors,
                            const Classifier& classifier, ImportReport* report = nullptr);

}  // namespace dvfs
