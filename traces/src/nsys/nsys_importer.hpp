#pragma once
// Nsight Systems traces: the SQLite file `nsys export --type sqlite` writes (docs/nsys-import.md lists the
// tables and columns read). Kernels (CUPTI_ACTIVITY_KIND_KERNEL, names through StringIds, launch shapes),
// memcpy and memset activities become the workload's device activities; NVTX push/pop and start/end ranges
// (NVTX_EVENTS) become annotations, steps and phases, attached to the kernels their CUDA runtime launch
// (CUPTI_ACTIVITY_KIND_RUNTIME, by correlation id) fell in, as the Kineto importer attaches CPU annotation
// ranges. The tables are turned into a Kineto-layout document and read by the Kineto importer, so both
// formats share one set of rules (classes, steps, phases, overlapping streams).
#include "sim/core/workload.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"

#include <string>

namespace dvfs {

// A file whose first bytes are SQLite's header ("SQLite format 3"); a .nsys-rep report is claimed too,
// so that it gets a message saying how to export it.
bool is_nsys_sqlite(const std::string& path);
// InputError naming the file, table and column when a required one is missing or has the wrong type.
Workload import_nsys_sqlite(const std::string& path, const Classifier& classifier, ImportReport* report = nullptr);

}  // namespace dvfs
