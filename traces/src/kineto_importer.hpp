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

#include <stdexcept>
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

// Which JSON reader imports the trace. Both give the same workload, byte for byte.
//   automatic  the streaming reader (traces/src/kineto_stream.hpp: simdjson On-Demand, one batch of events at a
//              time, never the whole document in memory); where it declines (malformed JSON, a value it does not
//              read the common way, any error), the checked reader reads the file again and names the problem.
//   checked    the checked reader only: the whole document through sim/core/json_util.hpp.
//   streaming  the streaming reader only; StreamingDeclined where it declines (tests and benchmarks).
enum class KinetoReader { automatic, checked, streaming };

struct StreamingDeclined : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Workload import_kineto(const std::string& path, const Classifier& classifier, ImportReport* report = nullptr,
                       KinetoReader reader = KinetoReader::automatic);
Workload import_kineto_text(const std::string& text, const std::string& path_for_errors,
                            const Classifier& classifier, ImportReport* report = nullptr,
                            KinetoReader reader = KinetoReader::automatic);

}  // namespace dvfs
