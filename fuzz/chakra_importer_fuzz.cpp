// Fuzz target: the Chakra execution-trace reader, traces/src/chakra/ (framing, node types, attributes,
// dependency graph, dvfs.* metadata), on one rank file's bytes.
#include "fuzz/fuzz_support.hpp"
#include "traces/src/chakra/chakra_importer.hpp"
#include "traces/src/kernel_classifier.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const dvfs::Classifier classifier = dvfs::Classifier::load_default();
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  dvfs::fuzz::expect_input_errors_only("chakra_importer", [&] {
    dvfs::ImportReport report;
    const dvfs::Workload wl = dvfs::import_chakra_bytes({bytes}, {"fuzz.0.et"}, classifier, &report);
    (void)wl;
  });
  return 0;
}
