// Fuzz target: scenario files (scenarios/*.json) as `dvfs-sim run` reads them: the kind is chosen as
// run_scenario does, then the replay / multi-rank / synthetic parser (sim/simulation/scenario_file.cpp),
// the control parser (sim/control/control_scenario.cpp) or the fleet parser (sim/control/fleet.cpp).
// Relative paths resolve as for a file one folder below scenarios/ (as the shipped ones are).
#include "fuzz/fuzz_support.hpp"
#include "sim/control/control_scenario.hpp"
#include "sim/control/fleet.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/scenario_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string base_dir = dvfs::fuzz::source_dir() + "/scenarios/fuzz";
  const std::string file = base_dir + "/scenario.json";
  const std::string text(reinterpret_cast<const char*>(data), size);
  dvfs::fuzz::expect_input_errors_only("scenario_file", [&] {
    const dvfs::Json doc = dvfs::parse_json_text(text, file);
    switch (dvfs::scenario_kind(doc)) {
      case dvfs::ScenarioKind::control: (void)dvfs::parse_control_scenario(doc, file, base_dir); break;
      case dvfs::ScenarioKind::fleet: (void)dvfs::parse_fleet_scenario(doc, file); break;
      default: (void)dvfs::parse_scenario(doc, file, base_dir); break;
    }
  });
  return 0;
}
