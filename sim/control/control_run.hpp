#pragma once
// A power-budget scenario run to its end under one controller, and several controllers on the same
// scenario side by side (what `dvfs-sim control` prints).
#include "sim/control/control_scenario.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct ControlRunOptions {
  bool series = false;   // include per-interval series (budget power, tokens) in the result
};

// The scenario's controller under `name` ("" keeps the scenario's), with `policy_file` where one is given.
ControllerSpec controller_named(const ControlScenario& sc, const std::string& name, const std::string& policy_file);
// controller_named for each name, each checked (a known controller, budgets it can control) before any run starts,
// so that a bad name late in the list fails at once; `where` is what the errors name (a file, --controller).
std::vector<ControllerSpec> checked_controllers(const ControlScenario& sc, const std::vector<std::string>& names,
                                                const std::string& policy_file, const std::string& where);

// Result: totals (energy, generated and trained tokens, tokens/s, tokens per MWh, steps), per budget the
// violation rate of the measured field at the control interval and over 30 s and 5 min windows (when the run
// is that long), the same for the true power, peak share of nameplate; the summed reward of the controlled
// budgets; wall time per interval.
Json run_control(const ControlScenario& sc, const ControllerSpec& controller, const ControlRunOptions& opts = {});
std::string format_control_run(const Json& result);
// The same summary of a session driven by someone else (the Python environment).
Json session_summary(const ControlSession& s, const ControlScenario& sc, const std::string& controller, double reward, double wall_s,
                     bool series);

// Each controller on the same scenario and seed; rows in the order given, with throughput and violations
// relative to the first `uncontrolled` row when there is one.
Json compare_controllers(const ControlScenario& sc, const std::vector<ControllerSpec>& controllers);
std::string format_control_comparison(const Json& table);

}  // namespace dvfs
