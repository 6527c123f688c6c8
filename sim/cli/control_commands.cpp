// `dvfs-sim control`: a power-budget scenario (scenarios/power-budget/) under one controller, or several
// side by side.
#include "sim/cli/control_commands.hpp"

#include "sim/cli/arguments.hpp"

#include "sim/control/control_run.hpp"
#include "sim/control/fleet.hpp"
#include "sim/core/errors.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace dvfs {

const char* kControlUsage =
    "  control SCENARIO [--controller NAME[,NAME...]] [--policy-file F] [--seed N] [--duration S]\n"
    "        [--set KEY=JSON ...] [--json] [-o FILE]\n"
    "        a power-budget scenario (scenarios/power-budget/) run to its end under the scenario's controller, or\n"
    "        under each one named (uncontrolled, static-cap, reactive, pid, rl) side by side: violations of the\n"
    "        budget by window, energy, generated tokens/s, tokens per MWh\n";

// Sets a dotted key (list items by index) of a scenario document to a JSON value.
void set_key(Json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError("--set", "", "expected KEY=JSON, e.g. control.jobs.0.concurrency=64");
  const std::string key = assignment.substr(0, eq);
  Json value;
  try {
    value = Json::parse(assignment.substr(eq + 1));
  } catch (const Json::parse_error&) {
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

int cmd_control(const std::vector<std::string>& a) {
  std::string file, controllers, policy_file, out_file;
  std::vector<std::string> sets;
  bool json = false;
  long seed = -1;
  double duration = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= a.size()) throw InputError(a[i], "", "this option needs a value");
      return a[++i];
    };
    if (a[i] == "--controller") controllers = value();
    else if (a[i] == "--policy-file") policy_file = value();
    else if (a[i] == "--set") sets.push_back(value());
    else if (a[i] == "--seed") {
      const double s = parse_number("--seed", value(), "a number");
      if (s < 0 || s != std::floor(s)) throw InputError("--seed", "", "expected an integer >= 0");
      seed = static_cast<long>(s);
    } else if (a[i] == "--duration") {
      duration = parse_number("--duration", value(), "a number");
      if (!(duration > 0)) throw InputError("--duration", "", "expected seconds > 0");
    } else if (a[i] == "--json") json = true;
    else if (a[i] == "-o" || a[i] == "--output") out_file = value();
    else if (!a[i].empty() && a[i][0] == '-') throw InputError(a[i], "", "unknown option for control");
    else if (file.empty()) file = a[i];
    else throw InputError(a[i], "", "control takes one scenario file");
  }
  if (file.empty()) throw InputError("control", "", "expected a scenario file (e.g. scenarios/power-budget/grpo-7b-16gpu.json)");
  Json doc = read_json_file(file);
  for (const std::string& kv : sets) set_key(doc, kv);
  ControlScenario sc = parse_control_scenario(doc, file, dirname_of(file));
  if (seed >= 0) sc.seed = static_cast<std::uint64_t>(seed);
  if (duration > 0) {
    if (duration < sc.interval_s) throw InputError("--duration", "", "expected at least one control interval");
    sc.duration_s = duration;
  }
  std::vector<ControllerSpec> specs;
  for (const std::string& name : controllers.empty() ? std::vector<std::string>{sc.controller.name} : split_commas(controllers)) {
    ControllerSpec c = sc.controller;
    c.name = name;
    if (!policy_file.empty()) c.policy_file = policy_file;
    make_controller(c, controllers.empty() ? file : "--controller");  // unknown names fail before any run
    specs.push_back(c);
  }
  Json result;
  std::string text;
  if (specs.size() == 1) {
    result = run_control(sc, specs.front());
    text = format_control_run(result);
  } else {
    result = compare_controllers(sc, specs);
    text = format_control_comparison(result);
  }
  if (!out_file.empty()) write_json_output(out_file, result, "result");
  std::cout << (json ? result.dump(2) + "\n" : text);
  return 0;
}

int cmd_fleet(const std::vector<std::string>& a) {
  std::string file, sizes, out_file;
  bool json = false;
  double duration = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto value = [&]() -> std::string {
      if (i + 1 >= a.size()) throw InputError(a[i], "", "this option needs a value");
      return a[++i];
    };
    if (a[i] == "--sizes") sizes = value();
    else if (a[i] == "--duration") {
      duration = parse_number("--duration", value(), "a number");
      if (!(duration > 0)) throw InputError("--duration", "", "expected seconds > 0");
    } else if (a[i] == "--json") json = true;
    else if (a[i] == "-o" || a[i] == "--output") out_file = value();
    else if (!a[i].empty() && a[i][0] == '-') throw InputError(a[i], "", "unknown option for fleet");
    else if (file.empty()) file = a[i];
    else throw InputError(a[i], "", "fleet takes one scenario file");
  }
  if (file.empty()) throw InputError("fleet", "", "expected a fleet scenario file (e.g. scenarios/power-budget/fleet-mixed.json)");
  FleetScenario fs = load_fleet_scenario(file);
  if (!sizes.empty()) {
    fs.sizes.clear();
    for (const std::string& s : split_commas(sizes)) {
      const double n = parse_number("--sizes", s, "a number");
      if (n < 1 || n != std::floor(n) || n > 1e6) throw InputError("--sizes", "", "expected whole numbers of GPUs >= 1");
      fs.sizes.push_back(static_cast<int>(n));
    }
  }
  if (duration > 0) {
    if (duration < 2 * fs.sample_s) throw InputError("--duration", "", "expected at least two samples");
    fs.duration_s = duration;
  }
  const Json result = run_fleet_study(fs);
  if (!out_file.empty()) write_json_output(out_file, result, "result");
  std::cout << (json ? result.dump(2) + "\n" : format_fleet_study(result));
  return 0;
}

}  // namespace dvfs
