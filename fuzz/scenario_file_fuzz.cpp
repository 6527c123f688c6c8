// Fuzz target: scenario files (scenarios/*.json) as `dvfs-sim run` reads them: the kind is chosen as
// run_scenario does, then the replay / multi-rank / synthetic parser (sim/simulation/scenario_file.cpp) or
// the registered kind's own check (control, fleet, lifecycle: sim/simulation/scenario_kinds.hpp).
// Relative paths resolve as for a file one folder below scenarios/ (as the shipped ones are).
#include "fuzz/fuzz_support.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "sim/simulation/scenario_kinds.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string base_dir = dvfs::fuzz::source_dir() + "/scenarios/fuzz";
  const std::string file = base_dir + "/scenario.json";
  const std::string text(reinterpret_cast<const char*>(data), size);
  dvfs::fuzz::expect_input_errors_only("scenario_file", [&] {
    const dvfs::Json doc = dvfs::parse_json_text(text, file);
    if (const dvfs::ScenarioKindSpec* k = dvfs::registered_kind(doc)) k->check(doc, file, base_dir);
    else (void)dvfs::parse_scenario(doc, file, base_dir);
  });
  return 0;
}
