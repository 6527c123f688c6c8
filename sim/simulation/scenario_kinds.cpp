#include "sim/simulation/scenario_kinds.hpp"

#include "sim/core/json_util.hpp"

#include <fstream>
#include <stdexcept>

namespace dvfs {

void ScenarioKindRegistry::add(ScenarioKindSpec spec) {
  if (spec.key.empty() || !spec.run || !spec.check || !spec.report)
    throw std::logic_error("scenario kind \"" + spec.key + "\" registered without its key, run, check or report");
  for (const ScenarioKindSpec& s : specs_)
    if (s.key == spec.key)
      throw std::logic_error("scenario kind registered twice: " + spec.key);
  specs_.push_back(std::move(spec));
}

const ScenarioKindSpec* ScenarioKindRegistry::for_document(const Json& doc) const {
  if (!doc.is_object()) return nullptr;
  for (const ScenarioKindSpec& s : specs_)
    if (doc.contains(s.key)) return &s;
  return nullptr;
}

const ScenarioKindSpec* ScenarioKindRegistry::find(const std::string& key) const {
  for (const ScenarioKindSpec& s : specs_)
    if (s.key == key) return &s;
  return nullptr;
}

const ScenarioKindRegistry& scenario_kind_registry() {
  static const ScenarioKindRegistry registry = [] {
    ScenarioKindRegistry r;
    register_control_kinds(r);
    register_lifecycle_kind(r);
    return r;
  }();
  return registry;
}

std::vector<std::string> write_summary_json(const Json& summary, const std::string& dir) {
  make_directories(dir);
  std::ofstream(dir + "/summary.json") << summary.dump(2) << "\n";
  return {dir + "/summary.json"};
}

}  // namespace dvfs
