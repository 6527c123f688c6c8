// Fuzz target: the Kineto (PyTorch profiler) trace importer, traces/src/kineto_importer.*, on the
// trace's JSON text (both schemas; steps, annotations, collectives, correlation).
#include "fuzz/fuzz_support.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const dvfs::Classifier classifier = dvfs::Classifier::load_default();
  const std::string text(reinterpret_cast<const char*>(data), size);
  dvfs::fuzz::expect_input_errors_only("kineto_importer", [&] {
    dvfs::ImportReport report;
    const dvfs::Workload wl = dvfs::import_kineto_text(text, "fuzz-trace.json", classifier, &report);
    (void)wl;
  });
  return 0;
}
