#pragma once
// Scenario kinds that a top-level key of the document marks ({"control": ...}, {"fleet": ...}, {"lifecycle": ...}):
// each registers, from its own folder, how a document of it runs, what `dvfs-sim run` prints for it and which
// result files it writes; run_scenario dispatches through this registry and names none of them. Trace replays
// and synthetic runs (one Scenario, replay options, exports) stay in run_scenario itself. Kinds register
// explicitly, like policies (sim/policies/registry.hpp; no static initialisers, which a static library may drop):
//   register_control_kinds    sim/control/control_kinds.cpp      control, fleet
//   register_lifecycle_kind   sim/lifecycle/lifecycle_kind.cpp   lifecycle
// A new kind: its folder with a register function and one line in scenario_kinds.cpp (and its declaration here).
#include "sim/simulation/run_scenario.hpp"

#include <functional>
#include <string>
#include <vector>

namespace dvfs {

struct ScenarioKindSpec {
  std::string key;  // the top-level key that marks a document of this kind; also the kind's name
  // Runs the document (file: for error messages; base_dir: where its relative paths resolve). run_scenario sets
  // the run's kind.
  std::function<ScenarioRun(const Json& doc, const std::string& file, const std::string& base_dir)> run;
  // Reads and checks the document as run does, without running it (the scenario-file fuzzer); InputError if bad.
  std::function<void(const Json& doc, const std::string& file, const std::string& base_dir)> check;
  std::function<std::string(const Json& summary)> report;  // what `dvfs-sim run` prints
  // The result files it writes into dir (created if missing); unset: none (a study whose result is what it prints).
  std::function<std::vector<std::string>(const Json& summary, const std::string& dir)> outputs;
};

class ScenarioKindRegistry {
 public:
  // std::logic_error on a second spec for a key, or a spec without its key, run, check or report (programming errors)
  void add(ScenarioKindSpec spec);
  const ScenarioKindSpec* for_document(const Json& doc) const;  // the first registered whose key the document has
  const ScenarioKindSpec* find(const std::string& key) const;
  const std::vector<ScenarioKindSpec>& specs() const { return specs_; }

 private:
  std::vector<ScenarioKindSpec> specs_;
};

// Every registered kind, registered once on first use.
const ScenarioKindRegistry& scenario_kind_registry();

void register_control_kinds(ScenarioKindRegistry& r);
void register_lifecycle_kind(ScenarioKindRegistry& r);

// A summary written as dir/summary.json (created if missing): the file list.
std::vector<std::string> write_summary_json(const Json& summary, const std::string& dir);

}  // namespace dvfs
