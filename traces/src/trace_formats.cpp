#include "traces/src/trace_formats.hpp"

#include "traces/src/chakra/chakra_importer.hpp"
#include "traces/src/nsys/nsys_importer.hpp"

namespace dvfs {

const std::vector<TraceFormat>& trace_formats() {
  static const std::vector<TraceFormat> formats = {
      {"nsys-sqlite", "Nsight Systems `nsys export --type sqlite` files (.sqlite; docs/nsys-import.md)", is_nsys_sqlite, import_nsys_sqlite},
      {"chakra", "MLCommons Chakra execution traces: NAME.<rank>.et[.gz] files or their prefix NAME (docs/chakra.md)", is_chakra_trace, import_chakra},
      {"kineto", "PyTorch profiler (Kineto) Chrome traces, .json or .json.gz", [](const std::string&) { return true; },
       [](const std::string& p, const Classifier& c, ImportReport* r) { return import_kineto(p, c, r); }},
  };
  return formats;
}

Workload import_trace_file(const std::string& path, const Classifier& classifier, ImportReport* report) {
  for (const TraceFormat& f : trace_formats())
    if (f.claims(path)) return f.import(path, classifier, report);
  return import_kineto(path, classifier, report);
}

}  // namespace dvfs
