// The lifecycle scenario kind, {"lifecycle": ...}: a whole job phase by phase (docs/lifecycle.md). Writes summary.json.
#include "sim/core/json_util.hpp"
#include "sim/lifecycle/lifecycle_run.hpp"
#include "sim/simulation/scenario_kinds.hpp"

namespace dvfs {

void register_lifecycle_kind(ScenarioKindRegistry& r) {
  ScenarioKindSpec s;
  s.kind = ScenarioKind::lifecycle;
  s.key = "lifecycle";
  s.run = [](const Json& doc, const std::string& file, const std::string& base_dir) {
    ScenarioRun run;
    JsonReader rd(doc, file, "");
    rd.only_keys({"name", "description", "lifecycle", "output"});
    run.name = rd.string("name");
    if (rd.has("output")) {
      JsonReader o = rd.child("output");
      o.only_keys({"dir"});
      run.output_dir = join_path(base_dir, o.string("dir"));
    }
    run.summary = run_lifecycle(doc, file, base_dir);
    return run;
  };
  s.report = format_lifecycle_run;
  s.outputs = write_summary_json;
  r.add(s);
}

}  // namespace dvfs
