#include "sim/simulation/run_scenario.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "sim/simulation/scenario_kinds.hpp"
#include "sim/synthetic_run.hpp"
#include "sim/results/summary.hpp"
#include "sim/results/simulated_workload.hpp"
#include "sim/results/trace_export.hpp"
#include "traces/src/chakra/chakra_writer.hpp"

#include <chrono>
#include <fstream>

namespace dvfs {

const char* to_string(ScenarioKind k) {
  switch (k) {
    case ScenarioKind::replay: return "replay";
    case ScenarioKind::multi_rank: return "multi-rank";
    case ScenarioKind::synthetic: return "synthetic";
    case ScenarioKind::registered: return "registered";
  }
  return "?";
}

ScenarioKind scenario_kind(const Json& doc) {
  if (!doc.is_object()) return ScenarioKind::replay;  // parse_scenario says what is wrong
  if (registered_kind(doc)) return ScenarioKind::registered;
  if (doc.contains("synthetic")) return ScenarioKind::synthetic;
  if (doc.contains("trace") && doc["trace"].is_array()) return ScenarioKind::multi_rank;
  return ScenarioKind::replay;
}

const ScenarioKindSpec* registered_kind(const Json& doc) { return scenario_kind_registry().for_document(doc); }

namespace {

ScenarioRun run_trace_scenario(Scenario sc, const ScenarioOptions& opts) {
  const GpuModel model = load_gpu_model(sc.gpu, sc.file, "gpu");
  const std::shared_ptr<const LoadedTrace> trace =
      opts.load_trace ? opts.load_trace(sc, model) : std::make_shared<const LoadedTrace>(load_scenario_trace(sc, model));
  if (!opts.trace_out.empty() || !opts.chakra_out.empty()) sc.replay.record_activities = true;
  SimulationResult r = opts.replay ? opts.replay(sc, *trace, model) : simulate(sc, *trace, model);
  ScenarioRun run;
  if (!opts.trace_out.empty())
    run.trace_export = export_replay_trace(sc, trace->workload, model, r.outcomes, opts.trace_out, opts.trace_gpus);
  if (!opts.chakra_out.empty()) {
    const TraceExport t = engine_trace_export(trace->workload, r.outcomes, model.name(), model.sm_count(), sc.replay.repeat, Json::object());
    const ChakraExportOptions co;
    run.chakra_export = chakra_export_stats_json(write_chakra_trace(simulated_workload(t), opts.chakra_out, co), opts.chakra_out, co);
  }
  const bool ranks = sc.trace_paths.size() > 1 || trace->workload.ranks.size() > 1 || !rank_directories(sc.trace_path).empty();
  run.kind = ranks ? ScenarioKind::multi_rank : ScenarioKind::replay;
  run.summary = std::move(r.summary);
  run.outcomes = std::move(r.outcomes);
  run.timing = std::move(r.timing);
  return run;
}

// Moves the machine's own figures (wall-clock seconds, peak memory) out of `doc`, keeping their paths: they
// differ between two runs, so summary.json holds none of them and timing.json holds them.
Json take_wall_clock(Json& doc) {
  static const char* const kWallClock[] = {"wall_s", "replay_s", "plan_s", "curves_s", "solve_s", "peak_rss_mib"};
  Json taken;
  if (doc.is_object()) {
    for (const char* k : kWallClock)
      if (doc.contains(k)) taken[k] = doc[k], doc.erase(k);
    for (auto it = doc.begin(); it != doc.end(); ++it)
      if (Json sub = take_wall_clock(it.value()); !sub.is_null()) taken[it.key()] = sub;
  } else if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i)
      if (Json sub = take_wall_clock(doc[i]); !sub.is_null()) taken[std::to_string(i)] = sub;
  }
  return taken;
}

// take_wall_clock's inverse: `taken` merged back into `doc`.
void put_back(Json& doc, const Json& taken) {
  if (!taken.is_object()) return;
  for (auto it = taken.begin(); it != taken.end(); ++it) {
    if (doc.is_array()) put_back(doc[std::stoul(it.key())], it.value());
    else if (it.value().is_object() && doc.contains(it.key())) put_back(doc[it.key()], it.value());
    else doc[it.key()] = it.value();
  }
}

}  // namespace

// The replay of a trace scenario as a trace file; what was written.
Json export_replay_trace(const Scenario& sc, const Workload& wl, const GpuModel& model, const std::vector<RankOutcome>& outcomes,
                         const std::string& path, const std::vector<int>& only_gpus) {
  const Json meta = {{"scenario", sc.name}, {"gpu_model", model.name()}, {"policy", sc.policy.name}, {"source", wl.source},
                     {"repeat", sc.replay.repeat}, {"timeline_interval_s", sc.replay.timeline_interval_s}};
  TraceExport t = engine_trace_export(wl, outcomes, model.name(), model.sm_count(), sc.replay.repeat, meta);
  t.only_gpus = only_gpus;
  const TraceExportStats st = write_trace_export(t, path);
  return trace_export_stats_json(st, path);
}

namespace {

// --engine and --stream-overlap set how a recorded trace is replayed: on a run that replays none (`what`) they
// would change nothing.
void refuse_replay_options(const ScenarioOptions& opts, const std::string& what) {
  if (opts.engine) throw InputError("--engine", "", "expected a trace replay: " + what + " replays no recorded trace");
  if (opts.stream_overlap) throw InputError("--stream-overlap", "", "expected a trace replay: " + what + " replays no recorded trace");
}

}  // namespace

ScenarioRun run_scenario(const Json& doc, const std::string& file, const std::string& base_dir, const ScenarioOptions& opts) {
  const ScenarioKind kind = scenario_kind(doc);
  if (const ScenarioKindSpec* registered = registered_kind(doc)) {  // a kind with its own key: no single replay
    if (!opts.chakra_out.empty())
      throw InputError("--chakra-out", "", "expected a trace replay or synthetic scenario: a " + registered->key +
                                               " study has no single replay to export");
    if (!opts.trace_out.empty())
      throw InputError("--trace-out", "", "expected a trace replay or synthetic scenario: a " + registered->key +
                                              " study has no single replay to export");
    refuse_replay_options(opts, "a " + registered->key + " study");
    if (opts.output_dir_given && !registered->outputs)
      throw InputError("-o", "", "a " + registered->key + " study prints its result and writes no files (--json prints it as JSON)");
    ScenarioRun run = registered->run(doc, file, base_dir);
    run.kind = kind;
    run.registered = registered;
    return run;
  }
  Scenario sc = parse_scenario(doc, file, base_dir);
  if (opts.engine) sc.mode = *opts.engine;
  if (opts.stream_overlap) sc.replay.stream_overlap = *opts.stream_overlap;
  ScenarioRun run;
  if (kind == ScenarioKind::synthetic) {
    refuse_replay_options(opts, "a synthetic job");
    run.kind = kind;
    SyntheticRun req = synthetic_request(sc);
    req.trace_out = opts.trace_out;
    req.chakra_out = opts.chakra_out;
    req.trace_gpus = opts.trace_gpus;
    run.summary = run_synthetic(req);
    if (run.summary.contains("chakra_export")) {
      run.chakra_export = run.summary["chakra_export"];
      run.summary.erase("chakra_export");
    }
    if (run.summary.contains("trace_export")) {  // what was written and how long it took: not a result
      run.trace_export = run.summary["trace_export"];
      run.summary.erase("trace_export");
    }
    run.timing = take_wall_clock(run.summary);
  } else {
    run = run_trace_scenario(sc, opts);
  }
  // What an export wrote and how long it took is a wall-clock figure: timing.json (bench/trace_export.sh reads it).
  if (!run.trace_export.is_null()) run.timing["trace_export"] = run.trace_export;
  if (!run.chakra_export.is_null()) run.timing["chakra_export"] = run.chakra_export;
  run.name = sc.name;
  run.output_dir = sc.output_dir;
  return run;
}

ScenarioRun run_scenario_file(const std::string& path, const ScenarioOptions& opts) {
  return run_scenario(read_scenario_document(path), path, dirname_of(path), opts);
}

std::string ScenarioRun::report() const {
  if (registered) return registered->report(summary);
  switch (kind) {
    case ScenarioKind::synthetic: {
      Json full = summary;  // the text report prints the timings beside the model outputs
      put_back(full, timing);
      return format_synthetic(full);
    }
    default: return format_report(summary);
  }
}

bool ScenarioRun::is_study() const { return registered && !registered->outputs; }

std::vector<std::string> write_scenario_outputs(const ScenarioRun& run, const std::string& dir) {
  if (run.registered) return run.registered->outputs ? run.registered->outputs(run.summary, dir) : std::vector<std::string>{};
  switch (run.kind) {
    case ScenarioKind::synthetic: {
      make_directories(dir);
      std::ofstream(dir + "/summary.json") << run.summary.dump(2) << "\n";
      std::vector<std::string> files = {dir + "/summary.json"};
      if (!run.timing.is_null()) {
        std::ofstream(dir + "/timing.json") << run.timing.dump(2) << "\n";
        files.push_back(dir + "/timing.json");
      }
      if (const std::string csv = per_gpu_csv(run.summary); !csv.empty()) std::ofstream(dir + "/gpus.csv") << csv;
      return files;
    }
    default: {
      write_results(run.summary, run.outcomes, dir);
      if (run.timing.is_null()) return {dir + "/summary.json", dir + "/timeline.csv"};
      std::ofstream(dir + "/timing.json") << run.timing.dump(2) << "\n";
      return {dir + "/summary.json", dir + "/timeline.csv", dir + "/timing.json"};
    }
  }
}

}  // namespace dvfs
