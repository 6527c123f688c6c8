// Fuzz target: the Kineto (PyTorch profiler) trace importer, traces/src/kineto_importer.*, on the
// trace's JSON text (both schemas; steps, annotations, collectives, correlation). Also differential: wherever
// the streaming reader (traces/src/kineto_stream.*) reads the text, the checked reader must read it too and give
// the same workload byte for byte (a FINDING otherwise), so the streaming reader never accepts what the checked
// reader refuses and never reads a trace differently.
#include "fuzz/fuzz_support.hpp"
#include "sim/core/errors.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/workload_cache.hpp"

#include <cstdio>
#include <cstdlib>

namespace {

// The import's bytes as the workload cache encodes them (every field), "" where the streaming reader declines.
std::string streaming_bytes(const std::string& text, const dvfs::Classifier& classifier) {
  try {
    dvfs::CachedImport c;
    c.workload = dvfs::import_kineto_text(text, "fuzz-trace.json", classifier, &c.report, dvfs::KinetoReader::streaming);
    return dvfs::encode_cached_import("fuzz", c);
  } catch (const dvfs::StreamingDeclined&) {
    return "";
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const dvfs::Classifier classifier = dvfs::Classifier::load_default();
  const std::string text(reinterpret_cast<const char*>(data), size);
  dvfs::fuzz::expect_input_errors_only("kineto_importer", [&] {
    dvfs::ImportReport report;
    const dvfs::Workload wl = dvfs::import_kineto_text(text, "fuzz-trace.json", classifier, &report);
    (void)wl;
  });
  dvfs::fuzz::expect_input_errors_only("kineto_importer (streaming vs checked reader)", [&] {
    const std::string streaming = streaming_bytes(text, classifier);
    if (streaming.empty()) return;
    std::string checked;
    try {
      dvfs::CachedImport c;
      c.workload = dvfs::import_kineto_text(text, "fuzz-trace.json", classifier, &c.report, dvfs::KinetoReader::checked);
      checked = dvfs::encode_cached_import("fuzz", c);
    } catch (const dvfs::InputError& e) {
      std::fprintf(stderr, "FINDING kineto_importer: the streaming reader read a trace the checked reader refuses: %s\n", e.what());
      std::abort();
    }
    if (checked != streaming) {
      std::fprintf(stderr, "FINDING kineto_importer: the streaming and checked readers give different workloads\n");
      std::abort();
    }
  });
  return 0;
}
