#pragma once
// The trace formats a scenario's `trace` file may be in, and the one place that picks the reader: a new
// format is a reader in a folder of its own under traces/src/ and one line in trace_formats()'s table
// (traces/src/trace_formats.cpp). A file no reader claims is read as Kineto JSON (.json / .json.gz), the
// format recordings use (docs/recording-format.md).
#include "sim/core/workload.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"

#include <functional>
#include <string>
#include <vector>

namespace dvfs {

struct TraceFormat {
  std::string name;         // e.g. "kineto", "nsys-sqlite"
  std::string description;  // one line: what files it reads
  std::function<bool(const std::string& path)> claims;  // by name or first bytes; Kineto claims what no other does
  std::function<Workload(const std::string& path, const Classifier&, ImportReport*)> import;
};

// The registered formats, Kineto last.
const std::vector<TraceFormat>& trace_formats();
// The reader of the first format that claims `path`.
Workload import_trace_file(const std::string& path, const Classifier& classifier, ImportReport* report = nullptr);

}  // namespace dvfs
