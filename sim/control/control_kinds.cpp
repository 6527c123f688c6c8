// The power-budget scenario kinds: {"control": ...} (a scenario under its controller) and {"fleet": ...} (a fleet
// power study). Both are studies: their result is what they print, they write no files.
#include "sim/control/control_run.hpp"
#include "sim/control/control_scenario.hpp"
#include "sim/control/controllers.hpp"
#include "sim/control/fleet.hpp"
#include "sim/simulation/scenario_kinds.hpp"

namespace dvfs {

void register_control_kinds(ScenarioKindRegistry& r) {
  ScenarioKindSpec control;
  control.key = "control";
  control.run = [](const Json& doc, const std::string& file, const std::string& base_dir) {
    const ControlScenario sc = parse_control_scenario(doc, file, base_dir);
    ScenarioRun run;
    run.name = sc.name;
    make_controller(sc.controller, file);  // an unknown controller fails before the run
    run.summary = run_control(sc, sc.controller);
    return run;
  };
  control.check = [](const Json& doc, const std::string& file, const std::string& base_dir) {
    (void)parse_control_scenario(doc, file, base_dir);
  };
  control.report = format_control_run;
  r.add(control);

  ScenarioKindSpec fleet;
  fleet.key = "fleet";
  fleet.run = [](const Json& doc, const std::string& file, const std::string&) {
    const FleetScenario fs = parse_fleet_scenario(doc, file);
    ScenarioRun run;
    run.name = fs.name;
    run.summary = run_fleet_study(fs);
    return run;
  };
  fleet.check = [](const Json& doc, const std::string& file, const std::string&) { (void)parse_fleet_scenario(doc, file); };
  fleet.report = format_fleet_study;
  r.add(fleet);
}

}  // namespace dvfs
