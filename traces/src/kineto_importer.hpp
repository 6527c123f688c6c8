#pragma once
// PyTorch profiler (Kineto) Chrome-trace importer, .json or .json.gz. Reads the current schema
// (cat "kernel"/"gpu_memcpy"/"gpu_memset", args.stream, args.grid/block/...) and the 2021 schema
// (cat "Kernel"/"Memcpy"/"Memset", tid "stream 7"). Annotations come from gpu_user_annotation
// ranges or, where a device has none, from CPU user_annotation ranges through launch correlation.
#include "sim/core/workload.hpp"
#include "traces/src/kernel_classifier.hpp"

#include <string>

namespace dvfs {

struct ImportReport {
  std::string schema;                  // "kineto" or "kineto-2021"
  std::size_t activities = 0;
  std::size_t overlapped_activities = 0;  // started before an earlier one ended (other streams)
  std::string step_source;             // "gpu_user_annotation", "cpu annotation via correlation", "none"
  std::string annotation_source;
};

Workload import_kineto(const std::string& path, const Classifier& classifier, ImportReport* report = nullptr);
Workload import_kineto_text(const std::string& text, const std::string& path_for_errors,
                            const Classifier& classifier, ImportReport* report = nullptr);

}  // namespace dvfs
