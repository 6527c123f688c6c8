// The lifecycle scenario kind, {"lifecycle": ...}: a whole job phase by phase (docs/lifecycle.md). Writes summary.json.
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/lifecycle/lifecycle_run.hpp"
#include "sim/lifecycle/lifecycle_spec.hpp"
#include "sim/simulation/scenario_kinds.hpp"
#include "sim/simulation/simulation.hpp"

#include <fstream>

namespace dvfs {

namespace {

// The document's own keys: its name and where its results go.
ScenarioRun lifecycle_header(const Json& doc, const std::string& file, const std::string& base_dir) {
  ScenarioRun run;
  JsonReader rd(doc, file, "");
  rd.only_keys({"name", "description", "lifecycle", "output"});
  run.name = rd.string("name");
  if (rd.has("output")) {
    JsonReader o = rd.child("output");
    o.only_keys({"dir"});
    run.output_dir = join_path(base_dir, o.string("dir"));
  }
  return run;
}

// dir/summary.json, checked: an output path that is an existing file (or a folder without write permission) wrote
// nothing while the run exited 0 and printed the path as written.
std::vector<std::string> write_lifecycle_summary(const Json& summary, const std::string& dir) {
  make_directories(dir);
  const std::string path = dir + "/summary.json";
  std::ofstream f(path);
  f << summary.dump(2) << "\n";
  f.close();
  if (!f) throw InputError(dir, "", "cannot write result files");
  return {path};
}

}  // namespace

void register_lifecycle_kind(ScenarioKindRegistry& r) {
  ScenarioKindSpec s;
  s.key = "lifecycle";
  s.run = [](const Json& doc, const std::string& file, const std::string& base_dir) {
    ScenarioRun run = lifecycle_header(doc, file, base_dir);
    run.summary = run_lifecycle(doc, file, base_dir);
    return run;
  };
  s.check = [](const Json& doc, const std::string& file, const std::string& base_dir) {
    (void)lifecycle_header(doc, file, base_dir);
    (void)parse_lifecycle(doc, file, base_dir);
  };
  s.report = format_lifecycle_run;
  s.outputs = write_lifecycle_summary;
  r.add(s);
}

}  // namespace dvfs
