// `dvfs-sim control`: a power-budget scenario (scenarios/power-budget/) under one controller, or several
// side by side.
#include "sim/cli/control_commands.hpp"

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"

#include "sim/control/control_run.hpp"
#include "sim/control/control_scenario.hpp"
#include "sim/control/fleet.hpp"
#include "sim/core/errors.hpp"
#include "sim/simulation/scenario_file.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace dvfs {

// Sets a dotted key (list items by index) of a scenario document to a JSON value.
void set_key(Json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError("--set", "", "expected KEY=JSON, e.g. control.jobs.0.concurrency=64");
  const std::string key = assignment.substr(0, eq);
  Json value;
  try {
    value = parse_json_text(assignment.substr(eq + 1), "--set " + key);
  } catch (const InputError& e) {
    if (e.problem().rfind("malformed JSON", 0) != 0) throw;  // 1e400, nesting too deep
    value = assignment.substr(eq + 1);  // a bare word is a string
  }
  Json* node = &doc;
  std::size_t start = 0;
  for (;;) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (node->is_array()) {
      char* end = nullptr;
      const long i = std::strtol(part.c_str(), &end, 10);
      if (part.empty() || *end || i < 0 || static_cast<std::size_t>(i) >= node->size())
        throw InputError("--set", key, "expected an index below " + std::to_string(node->size()) + ", got \"" + part + "\"");
      node = &(*node)[static_cast<std::size_t>(i)];
    } else {
      if (!node->is_object()) throw InputError("--set", key, "\"" + part + "\" is inside a value that is not an object");
      node = &(*node)[part];
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  *node = value;
}

namespace {

struct ControlArgs {
  std::string file, controllers, policy_file, out_file;
  std::vector<std::string> sets;
  TextOption seed, duration;
  bool json = false;
};

int control_main(const ControlArgs& a) {
  long seed = -1;
  double duration = 0;
  if (a.seed.given()) {
    const double s = parse_number("--seed", a.seed.value, "a number");
    if (s < 0 || s != std::floor(s) || s > 9007199254740992.0) throw InputError("--seed", "", "expected an integer in [0, 2^53]");
    seed = static_cast<long>(s);
  }
  if (a.duration.given()) {
    duration = parse_number("--duration", a.duration.value, "a number");
    if (!(duration > 0)) throw InputError("--duration", "", "expected seconds > 0");
  }
  if (a.file.empty()) throw UsageError("control: expected a scenario file (e.g. scenarios/power-budget/grpo-7b-16gpu.json)");
  Json doc = read_scenario_document(a.file);  // a trace given here is named as such
  for (const std::string& kv : a.sets) set_key(doc, kv);
  ControlScenario sc = parse_control_scenario(doc, a.file, dirname_of(a.file));
  if (seed >= 0) sc.seed = static_cast<std::uint64_t>(seed);
  if (duration > 0) {
    set_control_duration(sc, duration, "--duration");
  }
  const std::vector<ControllerSpec> specs =
      checked_controllers(sc, a.controllers.empty() ? std::vector<std::string>{sc.controller.name} : split_commas("--controller", a.controllers),
                          a.policy_file, a.controllers.empty() ? a.file : "--controller");
  Json result;
  std::string text;
  if (specs.size() == 1) {
    result = run_control(sc, specs.front());
    text = format_control_run(result);
  } else {
    result = compare_controllers(sc, specs);
    text = format_control_comparison(result);
  }
  if (!a.out_file.empty()) write_json_output(a.out_file, result, "result");
  std::cout << (a.json ? result.dump(2) + "\n" : text);
  return 0;
}

struct FleetArgs {
  std::string file, sizes, out_file;
  TextOption duration;
  bool json = false;
};

int fleet_main(const FleetArgs& a) {
  double duration = 0;
  if (a.duration.given()) {
    duration = parse_number("--duration", a.duration.value, "a number");
    if (!(duration > 0)) throw InputError("--duration", "", "expected seconds > 0");
  }
  if (a.file.empty()) throw UsageError("fleet: expected a fleet scenario file (e.g. scenarios/power-budget/fleet-mixed.json)");
  FleetScenario fs = parse_fleet_scenario(read_scenario_document(a.file), a.file);
  if (!a.sizes.empty()) {
    fs.sizes.clear();
    for (const std::string& s : split_commas("--sizes", a.sizes)) {
      const double n = parse_number("--sizes", s, "a number");
      if (n < 1 || n != std::floor(n) || n > 1e6) throw InputError("--sizes", "", "expected whole numbers of GPUs >= 1");
      fs.sizes.push_back(static_cast<int>(n));
    }
  }
  if (duration > 0) {
    set_fleet_duration(fs, duration, "--duration");
  }
  const Json result = run_fleet_study(fs);
  if (!a.out_file.empty()) write_json_output(a.out_file, result, "result");
  std::cout << (a.json ? result.dump(2) + "\n" : format_fleet_study(result));
  return 0;
}

}  // namespace

Command control_command() {
  Command c;
  c.name = "control";
  c.summary = "run a power-budget scenario under its controller, or several controllers side by side";
  c.description =
      "A power-budget scenario (scenarios/power-budget/) run to its end under the scenario's controller, or under\n"
      "each one named (uncontrolled, static-cap, reactive, pid, rl) side by side: violations of the budget by\n"
      "window, energy, generated tokens/s, tokens per MWh.";
  c.unknown_option = "unknown option for control: ";
  c.extra_argument = "control takes one scenario file";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto a = std::make_shared<ControlArgs>();
    app.add_option("scenario", a->file, "power-budget scenario file");
    app.add_option("--controller", a->controllers, "controller, or several comma-separated (uncontrolled, static-cap, reactive, pid, rl)");
    app.add_option("--policy-file", a->policy_file, "the rl controller's policy file");
    add_text_option(app, "--seed", a->seed, "random seed (an integer >= 0)");
    add_text_option(app, "--duration", a->duration, "simulated seconds (> 0)");
    app.add_option("--set", a->sets, "KEY=JSON: set a dotted key of the scenario (list items by index); repeatable")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_flag("--json", a->json, "print the result as JSON");
    app.add_option("-o,--output", a->out_file, "write the result (JSON) to this file");
    return [a] { return control_main(*a); };
  };
  return c;
}

Command fleet_command() {
  Command c;
  c.name = "fleet";
  c.summary = "a fleet power study: how far a fleet of jobs can be oversubscribed under a power budget";
  c.description =
      "A fleet scenario (scenarios/power-budget/fleet-*.json): per fleet size the jobs drawn, and per window length the\n"
      "peak and mean share of nameplate power, the violation rate at each budget fraction and the sustainable\n"
      "oversubscription at each violation rate.";
  c.unknown_option = "unknown option for fleet: ";
  c.extra_argument = "fleet takes one scenario file";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto a = std::make_shared<FleetArgs>();
    app.add_option("scenario", a->file, "fleet scenario file");
    app.add_option("--sizes", a->sizes, "fleet sizes in GPUs, comma-separated");
    add_text_option(app, "--duration", a->duration, "simulated seconds (> 0)");
    app.add_flag("--json", a->json, "print the result as JSON");
    app.add_option("-o,--output", a->out_file, "write the result (JSON) to this file");
    return [a] { return fleet_main(*a); };
  };
  return c;
}

}  // namespace dvfs
