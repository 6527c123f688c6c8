#pragma once
// Reading a scenario file (scenarios/*.json) into a Scenario (sim/scenario/scenario.hpp). Every key is
// validated; errors name the file, the field and what was expected. The policy key is checked against
// the policy registry (sim/simulation/policy_catalog.hpp): its name, and which keys that policy takes.
#include "sim/core/json_util.hpp"
#include "sim/scenario/scenario.hpp"

#include <string>

namespace dvfs {

Scenario load_scenario(const std::string& path);
// The JSON document of a scenario file. A trace or a recording directory given where a scenario was expected (a user
// who typed `dvfs-sim run trace.json.gz`) is refused as what it is, with the scenario that would replay it.
Json read_scenario_document(const std::string& path);
// `file` names the source in errors; relative paths resolve against `base_dir`.
Scenario parse_scenario(const Json& doc, const std::string& file, const std::string& base_dir);

}  // namespace dvfs
