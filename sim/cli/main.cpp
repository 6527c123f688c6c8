// dvfs-sim command line. Each command (the table in all_commands()) declares its options once, with
// CLI11; `dvfs-sim help CMD` prints them. Usage errors are one line naming `dvfs-sim help CMD`, bad input
// one line naming the file and field; both exit 2 (sim/cli/command.hpp).
#include "models/src/model_registry.hpp"
#include "sim/calibrate/power_fit.hpp"
#include "sim/calibrate/profile_fit.hpp"
#include "sim/calibrate/recording_fit.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/compare.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/critical_path/perseus_validation.hpp"
#include "sim/calibrate/stream_contention_fit.hpp"
#include "sim/validate/stream_pairs.hpp"
#include "sim/pipeline/perseus_runs.hpp"
#include "sim/results/summary.hpp"
#include "sim/results/trace_export.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "sim/validate/model_checks.hpp"
#include "sim/validate/validate.hpp"
#include "traces/src/workload_cache.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dvfs {

bool TextOption::given() const { return option && option->count() > 0; }

TextOption& add_text_option(CLI::App& app, const std::string& names, TextOption& target, const std::string& help) {
  target.option = app.add_option(names, target.value, help);
  return target;
}

// ---- run ------------------------------------------------------------------------------------------

namespace {

struct RunArgs {
  std::string scenario, out_dir, engine, stream_overlap, trace_out, chakra_out, trace_gpus;
  bool json = false;
};

int run_main(const RunArgs& a) {
  ScenarioOptions opts;
  if (a.engine == "event") opts.engine = EngineMode::event;
  else if (a.engine == "local-loop") opts.engine = EngineMode::local_loop;
  else if (!a.engine.empty()) throw InputError("--engine", "", "expected local-loop or event, got \"" + a.engine + "\"");
  if (!a.stream_overlap.empty()) {
    StreamOverlap so;
    if (!stream_overlap_from_string(a.stream_overlap, so))
      throw InputError("--stream-overlap", "", "expected contention or busy-union, got \"" + a.stream_overlap + "\"");
    opts.stream_overlap = so;
  }
  opts.trace_out = a.trace_out;
  opts.chakra_out = a.chakra_out;
  opts.output_dir_given = !a.out_dir.empty();
  require_trace_out_for_gpus(a.trace_gpus, a.trace_out);
  if (!a.trace_gpus.empty()) opts.trace_gpus = parse_gpu_list(a.trace_gpus, "--trace-gpus");
  const ScenarioRun run = run_scenario_file(a.scenario.empty() ? default_scenario_path() : a.scenario, opts);
  if (run.is_study()) {  // studies print their result
    std::cout << (a.json ? run.summary.dump(2) + "\n" : run.report());
    return 0;
  }
  // What the summary's notes say about the trace (another vendor's GPU, unrelated ranks) is not silent.
  if (run.summary.contains("notes"))
    for (const Json& n : run.summary["notes"]) std::cerr << "dvfs-sim: warning: " << n.get<std::string>() << "\n";
  const std::string out = !a.out_dir.empty() ? a.out_dir : run.output_dir.empty() ? "out/" + run.name : run.output_dir;
  const std::vector<std::string> files = write_scenario_outputs(run, out);
  if (a.json) {
    std::cout << run.summary.dump(2) << "\n";
  } else {
    std::string list;
    for (const std::string& f : files) list += (list.empty() ? "" : ", ") + f;
    if (!run.trace_export.is_null()) list += ", " + run.trace_export["file"].get<std::string>();
    if (!run.chakra_export.is_null()) list += ", " + run.chakra_export["files"].get<std::string>();
    std::cout << run.report() << "results: " << list << "\n";
  }
  return 0;
}

// ---- models ---------------------------------------------------------------------------------------

Json model_table() {
  Json out = Json::array();
  for (const auto& name : installed_models()) {
    GpuModel m = load_gpu_model(name);
    Json computations = Json::array();
    for (const auto& kv : m.computations()) computations.push_back(kv.first);
    out.push_back({{"name", m.name()},
                   {"display_name", m.display_name()},
                   {"status", m.status()},
                   {"derived_from", m.derived_from()},
                   {"computations", computations},
                   {"sm_mhz", {m.sm_clocks_mhz().front(), m.sm_clocks_mhz().back()}},
                   {"mem_mhz", m.mem_clocks_mhz()},
                   {"power_cap_w", m.power_cap_w()},
                   {"switch_latency", to_json(m.switch_latency())},
                   {"summary", m.provenance().value("summary", "")},
                   {"file", m.source_file()}});
  }
  return out;
}

int models_main(bool json) {
  const Json out = model_table();
  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const auto& m : out) {
    std::string status = m["status"].get<std::string>();
    if (!m["derived_from"].get<std::string>().empty()) status += " (scaled from " + m["derived_from"].get<std::string>() + ")";
    std::printf("%-12s %-28s %-34s SM %4.0f-%4.0f MHz  mem", m["name"].get<std::string>().c_str(),
                m["display_name"].get<std::string>().c_str(), status.c_str(),
                m["sm_mhz"][0].get<double>(), m["sm_mhz"][1].get<double>());
    for (const auto& mem : m["mem_mhz"]) std::printf(" %.0f", mem.get<double>());
    std::printf(" MHz  cap %.0f W\n    %s\n", m["power_cap_w"].get<double>(), m["summary"].get<std::string>().c_str());
  }
  return 0;
}

// ---- validate -------------------------------------------------------------------------------------

struct ValidateArgs {
  std::string dir, gpu, out_file, perseus_runs, perseus, cluster_file, write_plans, workloads, trace_out;
  std::string stream_pairs, split, contention;
  TextOption p_blocking, power_cap, quantum, min_clock, p2p_latency, sections;
  bool json = false, models = false, no_frontier = false, no_fits = false, shapes_withheld = false;
};

PerseusValidationOptions perseus_options(const ValidateArgs& a) {
  PerseusValidationOptions po;
  if (a.p_blocking.given()) {
    po.p_blocking_w = parse_number("--p-blocking", a.p_blocking.value, "a power in W (>= 0)");
    if (po.p_blocking_w < 0) throw InputError("--p-blocking", "", "expected a power >= 0 W");
  }
  if (a.power_cap.given()) po.power_cap_w = parse_power_cap(a.power_cap.value);
  if (a.quantum.given()) po.quantum_s = parse_number("--quantum", a.quantum.value, "a time quantum in s (> 0)");
  if (a.min_clock.given()) {
    po.min_sm_mhz = parse_number("--min-clock", a.min_clock.value, "an SM clock in MHz (>= 0)");
    if (po.min_sm_mhz < 0) throw InputError("--min-clock", "", "expected an SM clock >= 0 MHz");
  }
  if (a.no_frontier) po.frontier = false;
  if (a.no_fits) po.fits = false;
  po.workloads = a.workloads;
  if (!a.write_plans.empty()) po.write_plans = a.write_plans;
  po.gpu = a.gpu;
  return po;
}

// Every plan of a Perseus run directory, time and energy (sim/critical_path/).
int validate_perseus_plans(const ValidateArgs& a, const PerseusValidationOptions& po) {
  if (po.power_cap_w < 0) throw InputError("--power-cap", "", "expected a power limit > 0 W");
  // below ~1e-9 s the quantum drowns in the iteration time's rounding ("a shortening cut did not shorten")
  if (!(po.quantum_s >= 1e-9) || po.quantum_s > 1) throw InputError("--quantum", "", "expected a time quantum from 1e-9 to 1 s");
  const Json rep = validate_perseus(a.perseus, po);
  if (!a.out_file.empty()) write_json_output(a.out_file, rep, "validation report");
  std::cout << (a.json ? rep.dump(2) + "\n" : format_perseus_report(rep));
  return 0;
}

// Two-stream kernel pairs: overlap replay and busy union against the together runs (sim/validate/stream_pairs).
int validate_stream_pairs_main(const ValidateArgs& a) {
  const std::string split = a.split.empty() ? data_dir() + "/models/calibration/stream-pairs-split.json" : a.split;
  const std::string model = a.contention.empty() ? data_dir() + "/models/contention/h200-streams.json" : a.contention;
  const Json rep = validate_stream_pairs(a.stream_pairs, split, model);
  if (!a.out_file.empty()) write_json_output(a.out_file, rep, "validation report");
  std::cout << (a.json ? rep.dump(2) + "\n" : format_stream_pairs(rep));
  return 0;
}

// `validate --models [--sections LIST]`; a bad name is reported against the option the user typed.
Json models_report(const ValidateArgs& a) {
  if (!a.sections.given()) return validate_models();
  const std::vector<std::string> sections = split_commas("--sections", a.sections.value);
  try {
    return validate_models(sections);
  } catch (const InputError& e) {
    throw InputError("--sections", "", e.problem());
  }
}

int validate_main(const ValidateArgs& a) {
  const PerseusValidationOptions po = perseus_options(a);
  double p2p = 0;
  if (a.p2p_latency.given()) {
    p2p = parse_number("--p2p-latency", a.p2p_latency.value, "a latency in seconds (>= 0)");
    if (!(p2p >= 0 && p2p <= kMaxLinkLatencyS)) throw InputError("--p2p-latency", "", "expected a latency from 0 to 1 s");
  }
  ClusterSpec cluster = default_cluster_spec();
  if (!a.cluster_file.empty())  // a JSON file with the scenario `cluster` object (multi-rank recordings)
    read_cluster_json(JsonReader(read_json_file(a.cluster_file), a.cluster_file, ""), cluster);
  if (a.sections.given() && !a.models) throw UsageError("validate --sections goes with --models");
  if (a.models && (!a.perseus.empty() || !a.perseus_runs.empty() || !a.stream_pairs.empty()))
    throw UsageError("validate --models takes no --perseus, --perseus-runs or --stream-pairs (one check per call)");
  if (!a.perseus.empty()) return validate_perseus_plans(a, po);
  if (!a.stream_pairs.empty()) return validate_stream_pairs_main(a);
  if (!a.split.empty() || !a.contention.empty()) throw UsageError("validate --split and --contention go with --stream-pairs DIR");
  if (!a.perseus_runs.empty()) {
    const Json rep = validate_perseus_runs(a.perseus_runs, {0, 1}, p2p);
    std::cout << (a.json ? rep.dump(2) + "\n" : format_perseus_validation(rep));
    return 0;
  }
  if (a.models && (!a.dir.empty() || !a.gpu.empty())) throw UsageError("validate --models takes no recording or --gpu");
  if (!a.models && a.dir.empty()) throw UsageError("validate needs a recording directory (or --models)");
  if (!a.models && a.gpu.empty()) throw UsageError("validate needs --gpu NAME (see dvfs-sim models)");
  const bool multi = !a.models && is_multi_rank_recording(a.dir);
  if (!a.trace_out.empty() && (a.models || multi))
    throw UsageError("validate --trace-out takes one single-GPU recording (not --models or a multi-rank directory)");
  if (a.shapes_withheld && (a.models || multi))
    throw UsageError("validate --shapes-withheld takes one single-GPU recording (not --models or a multi-rank directory)");
  const Json rep = a.models ? models_report(a)
                   : multi  ? validate_multi_rank(a.dir, a.gpu, cluster)
                            : validate_recording(a.dir, a.gpu, a.trace_out, a.shapes_withheld);
  if (!a.out_file.empty()) write_json_output(a.out_file, rep, "validation report");
  std::cout << (a.json ? rep.dump(2) + "\n"
                       : a.models ? format_model_checks(rep)
                       : multi    ? format_multi_rank_validation(rep)
                                  : format_validation(rep));
  return 0;
}

// ---- calibrate ------------------------------------------------------------------------------------

struct CalibrateArgs {
  std::string profile, recording, suite, split, base, out_file, date, stream_pairs, window;
  bool json = false;
};

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

void check_date(const std::string& date) {
  int y = 0, mo = 0, d = 0;
  char tail = 0;
  if (date.size() != 10 || std::sscanf(date.c_str(), "%4d-%2d-%2d%c", &y, &mo, &d, &tail) != 3 || mo < 1 || mo > 12 || d < 1 || d > 31)
    throw InputError("--date", "", "expected a date YYYY-MM-DD, got \"" + date + "\"");
}

// The contention model of concurrent streams, fit on the pairs the split lists under fit.
int calibrate_stream_pairs_main(CalibrateArgs a) {
  if (a.split.empty()) throw UsageError("calibrate --stream-pairs needs --split FILE (which pairs are fit and which held out)");
  if (a.base.empty()) throw UsageError("calibrate --stream-pairs needs --base MODEL (the GPU the pairs ran on)");
  if (a.date.empty()) a.date = today();
  check_date(a.date);
  // The pairs' directory stays out of the record: regenerate.sh fits from a directory holding only the fit pairs.
  const std::string command = "dvfs-sim calibrate --stream-pairs DIR --split " + a.split + " --base " + a.base;
  const ContentionCalibration c = calibrate_stream_contention(a.stream_pairs, a.split, a.base, command, a.date);
  if (!a.out_file.empty()) write_json_output(a.out_file, c.model, "contention model");
  if (a.json) std::cout << Json{{"model", c.model}, {"report", c.report}}.dump(2) << "\n";
  else std::cout << format_contention_calibration(c) << (a.out_file.empty() ? "model not written (no -o)\n" : "wrote " + a.out_file + "\n");
  return 0;
}

int calibrate_main(CalibrateArgs a) {
  if (!a.stream_pairs.empty()) {
    if (!a.profile.empty() || !a.recording.empty() || !a.suite.empty())
      throw UsageError("calibrate --stream-pairs takes no --profile, --recording or --power-suite");
    return calibrate_stream_pairs_main(a);
  }
  if (int(!a.profile.empty()) + int(!a.recording.empty()) + int(!a.suite.empty()) != 1)
    throw UsageError("calibrate needs exactly one of --profile CSV, --recording DIR or --power-suite DIR");
  if (!a.suite.empty() && a.split.empty())
    throw UsageError("calibrate --power-suite needs --split FILE (which loops are fit and which held out)");
  if (!a.window.empty() && a.suite.empty()) throw UsageError("calibrate --power-window goes with --power-suite");
  if (a.base.empty()) throw UsageError("calibrate needs --base MODEL (a model name or file supplying clock tables, idle power, cap and specs)");
  if (a.date.empty()) a.date = today();
  check_date(a.date);
  const std::string command = "dvfs-sim calibrate " +
                              (!a.suite.empty() ? "--power-suite " + a.suite + (a.window.empty() ? "" : " --power-window " + a.window) +
                                                      " --split " + a.split
                               : a.profile.empty() ? "--recording " + a.recording : "--profile " + a.profile) +
                              " --base " + a.base;
  const std::string base_path = resolve_model_path(a.base, "", "--base");
  Json model, report;
  std::string text;
  if (!a.profile.empty()) {
    ProfileCalibration c = calibrate_from_profile(a.profile, base_path, command, a.date);
    model = c.model;
    report = {{"fit_error_in_sample", c.fit_error.to_json()}, {"table", c.table}};
    text = format_profile_calibration(c);
  } else if (!a.suite.empty()) {
    PowerSuiteCalibration c = calibrate_from_power_suite(a.suite, a.split, base_path, command, a.date, a.window);
    model = c.model;
    report = c.report;
    text = format_power_suite_calibration(c);
  } else {
    RecordingCalibration c = calibrate_from_recording(a.recording, base_path, command, a.date);
    model = c.model;
    report = c.report;
    text = format_recording_calibration(c);
  }
  if (!a.out_file.empty()) write_json_output(a.out_file, model, "model file");
  if (a.json) std::cout << Json{{"model", model}, {"report", report}}.dump(2) << "\n";
  else std::cout << text << (a.out_file.empty() ? "model not written (no -o)\n" : "wrote " + a.out_file + "\n");
  return 0;
}

// ---- compare --------------------------------------------------------------------------------------

struct CompareArgs {
  std::string scenario, out_dir, policies;
  TextOption budget, latency;
  bool json = false, trace = false;
};

int compare_main(const CompareArgs& a) {
  double budget = 0;
  std::optional<double> latency;
  if (a.budget.given()) {
    budget = parse_budget(a.budget.value);
  }
  if (a.latency.given()) {
    latency = parse_number("--latency", a.latency.value, "a switch latency in seconds (>= 0)");
    if (*latency < 0 || *latency > 3600)
      throw InputError("--latency", "", "expected a switch latency >= 0 s (at most 3600), got " + a.latency.value);
  }
  const std::string path = a.scenario.empty() ? default_scenario_path() : a.scenario;
  if (scenario_kind(read_scenario_document(path)) == ScenarioKind::synthetic) {  // pipeline policies on a synthesised job
    if (latency || a.trace || !a.out_dir.empty()) throw UsageError("compare on a synthetic scenario takes --policies, --budget and --json only");
    const Json t = compare_synthetic(path, a.policies.empty() ? std::vector<std::string>{} : split_commas("--policies", a.policies), budget);
    std::cout << (a.json ? t.dump(2) + "\n" : format_synthetic_comparison(t));
    return 0;
  }
  Scenario sc = load_scenario(path);
  // compare runs its own policies: a scenario's fixed clock plan would be planned over without a word
  if (!sc.clock_plan.empty())
    throw InputError(path, "clock_plan", "compare plans each policy itself on a trace replay; a clock plan is replayed by dvfs-sim run");
  if (latency) set_fixed_switch_latency(sc.replay, *latency);
  const std::vector<std::string> policies = a.policies.empty() ? default_comparison() : split_commas("--policies", a.policies);
  // a budget no listed policy reads was printed in the header as if it applied
  if (a.budget.given() && std::none_of(policies.begin(), policies.end(), [](const std::string& p) {
        const PolicyEntry* e = policy_registry().find(p);
        return e && e->accepts("budget_pct");
      }))
    throw InputError("--budget", "", "none of the policies compared takes a slowdown budget (a planned or critical-path policy does)");
  const std::string out_dir = !a.out_dir.empty() ? a.out_dir : (sc.output_dir.empty() ? "out/" + sc.name : sc.output_dir) + "/compare";
  make_directories(out_dir);
  const Json table = compare_policies(sc, policies, budget, a.trace ? out_dir : "");
  if (table.contains("notes"))
    for (const Json& n : table["notes"]) std::cerr << "dvfs-sim: warning: " << n.get<std::string>() << "\n";
  std::ofstream(out_dir + "/compare.json") << table.dump(2) << "\n";
  std::ofstream csv(out_dir + "/compare.csv");
  csv << comparison_csv(table);
  if (!csv) throw InputError(out_dir, "", "cannot write compare.csv");
  std::cout << (a.json ? table.dump(2) + "\n" : format_comparison(table) + "results: " + out_dir + "/compare.csv, " + out_dir + "/compare.json\n");
  return 0;
}

}  // namespace

// ---- the command table ----------------------------------------------------------------------------

Command run_command() {
  Command c;
  c.name = "run";
  c.summary = "run a scenario: a trace replay, a multi-rank job, a synthetic iteration, a power-budget or fleet study, a job's lifecycle";
  c.description =
      "Runs a scenario file (no file: scenarios/default.json of dvfs-sim's data directory, $DVFS_SIM_DATA or the\n"
      "source tree it was built from, writing beside it unless -o is given); its kind comes from its keys (trace, synthetic,\n"
      "control, fleet, lifecycle). Trace replays write DIR/summary.json and DIR/timeline.csv, synthetic and lifecycle\n"
      "runs DIR/summary.json"
      " (DIR: -o, else the scenario's output.dir, else out/<scenario name>); power-budget and fleet studies print\n"
      "their result. Scenario policies: `dvfs-sim help policies`.";
  c.unknown_option = "unknown option for run: ";
  c.extra_argument = "run takes one scenario file";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto a = std::make_shared<RunArgs>();
    app.add_option("scenario", a->scenario, "scenario file (default: scenarios/default.json)");
    app.add_option("-o,--output", a->out_dir, "directory for the result files");
    app.add_option("--engine", a->engine, "local-loop or event: overrides the scenario's engine (trace replays)");
    app.add_option("--stream-overlap", a->stream_overlap,
                   "contention or busy-union: overrides the scenario's stream_overlap (how NCCL kernels that overlapped other "
                   "streams replay; docs/design-notes.md, \"Multi-GPU engine\")");
    app.add_option("--trace-out", a->trace_out,
                   "also write the simulated run as a Chrome trace in Kineto's layout (FILE.json.gz: gzip; docs/trace-export.md)");
    app.add_option("--trace-gpus", a->trace_gpus, "--trace-out: only these GPUs, e.g. 0-7,64 (a Perfetto-sized slice of a large run)");
    app.add_option("--chakra-out", a->chakra_out,
                   "also write the simulated run as Chakra execution traces, DIR/trace.<rank>.et (docs/chakra.md)");
    app.add_flag("--json", a->json, "print the summary as JSON");
    return [a] { return run_main(*a); };
  };
  return c;
}

Command models_command() {
  Command c;
  c.name = "models";
  c.summary = "list the GPU models and their provenance status";
  c.description = "Lists every GPU model (models/gpus/): clock ranges, power cap, calibration status and provenance.";
  c.unknown_option = "unknown option for models: ";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto json = std::make_shared<bool>(false);
    app.add_flag("--json", *json, "print the table as JSON");
    return [json] { return models_main(*json); };
  };
  return c;
}

Command validate_command() {
  Command c;
  c.name = "validate";
  c.summary = "compare the simulator with measurements (recordings, the models' held-out checks, Perseus runs)";
  c.description =
      "validate RECORDING_DIR --gpu NAME [--cluster FILE]: replay a recording's profiled steps and compare with its\n"
      "  measured time and energy; a directory of rank<N>/ recordings is one multi-GPU job (collectives matched and\n"
      "  run on the cluster of FILE).\n"
      "validate --models [--sections LIST]: check the calibrated models on data their fits did not see (stage profiles,\n"
      "  retargeting, H200 recordings, power suite; LIST: some of stage_profiles,retarget,recordings,power_suite).\n"
      "validate --perseus DIR: every plan N of a Perseus run directory (N.sched.json + N.prof.json, .gz allowed):\n"
      "  first the models-only prediction (no fit on DIR: the workload of traces/perseus-baselines/workloads.json, its\n"
      "  default-settings run and the GPU model; only the plans' clocks read from DIR), then the variants fitted on DIR\n"
      "  (measured all-max anchor, cap-clock fit, board fit; each says which plans it saw), per plan and MAPE; then the\n"
      "  critical-path frontier against Perseus's own plans at equal iteration time; --write-plans: our no-slowdown plan\n"
      "  and ours at each Perseus plan's time, as N.sched.json files.\n"
      "validate --stream-pairs DIR [--split FILE] [--contention FILE]: two-stream kernel pairs, the together run\n"
      "  predicted from the alone runs by the overlap-aware replay and by the busy union, fit and held-out pairs.\n"
      "validate --perseus-runs DIR: predict the iteration time of measured pipeline runs (Perseus artifact layout)\n"
      "  from their measured per-micro-batch forward/backward times.";
  c.unknown_option = "unknown option for validate: ";
  c.extra_argument = "validate takes one recording directory";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto a = std::make_shared<ValidateArgs>();
    app.add_option("recording", a->dir, "recording directory (or a directory of rank<N>/ recordings)");
    app.add_option("--gpu", a->gpu, "GPU model (name or file; see dvfs-sim models)");
    app.add_option("--cluster", a->cluster_file, "JSON file with a scenario `cluster` object (multi-rank recordings)");
    app.add_flag("--models", a->models, "check the calibrated models on held-out data");
    add_text_option(app, "--sections", a->sections,
                    "--models: only these of stage_profiles,retarget,recordings,power_suite (the first two take seconds)");
    app.add_option("--perseus", a->perseus, "a Perseus run directory: every plan's time and energy, then the frontier");
    add_text_option(app, "--p-blocking", a->p_blocking, "--perseus: power while blocked, W (>= 0)");
    add_text_option(app, "--power-cap", a->power_cap, "--perseus: the GPUs' power limit, W");
    add_text_option(app, "--quantum", a->quantum, "--perseus: the frontier's time quantum, s (in (0, 1])");
    add_text_option(app, "--min-clock", a->min_clock, "--perseus: lowest SM clock considered, MHz");
    app.add_flag("--no-frontier", a->no_frontier, "--perseus: skip the critical-path frontier");
    app.add_flag("--no-fits", a->no_fits, "--perseus: the models-only prediction alone (no variant fitted on DIR)");
    app.add_option("--workloads", a->workloads, "--perseus: workloads file (default traces/perseus-baselines/workloads.json)");
    app.add_option("--write-plans", a->write_plans, "--perseus: write our plans as N.sched.json files into this directory");
    app.add_option("--perseus-runs", a->perseus_runs, "measured pipeline runs (Perseus artifact layout)");
    app.add_option("--stream-pairs", a->stream_pairs, "two-stream kernel pairs (<pair>-a, -b, -ab recordings): overlap replay vs busy union");
    app.add_option("--split", a->split, "--stream-pairs: the split file (default models/calibration/stream-pairs-split.json)");
    app.add_option("--contention", a->contention, "--stream-pairs: contention model file (default models/contention/h200-streams.json)");
    add_text_option(app, "--p2p-latency", a->p2p_latency, "--perseus-runs: point-to-point latency, s (>= 0)");
    app.add_flag("--json", a->json, "print the report as JSON");
    app.add_option("-o,--output", a->out_file, "write the report (JSON) to this file");
    app.add_flag("--shapes-withheld", a->shapes_withheld,
                 "RECORDING: import it as a trace recorded without record_shapes would be (no work counted from operator "
                 "shapes: class priors price those kernels)");
    app.add_option("--trace-out", a->trace_out,
                   "RECORDING: write into this directory each replay as a trace and timeline, the measured telemetry and the "
                   "report (for `dvfs-sim report`; docs/trace-export.md)");
    return [a] { return validate_main(*a); };
  };
  return c;
}

Command calibrate_command() {
  Command c;
  c.name = "calibrate";
  c.summary = "fit a GPU model from a stage profile, a recording's natural clock changes, or power-suite kernel loops";
  c.description =
      "calibrate (--profile CSV | --recording DIR | --power-suite DIR --split FILE | --stream-pairs DIR --split FILE)\n"
      "--base MODEL: fit a GPU model from a per-frequency stage profile (stage,instruction,frequency,time,energy), from a\n"
      "recording's natural clock changes, or (the activity power model) from the kernel loops a split file lists as fit;\n"
      "or the two-stream contention model from the kernel pairs a split file lists as fit; MODEL (name or file) supplies\n"
      "what the data cannot measure; prints the fit table and writes the model file to OUT.json.";
  c.unknown_option = "unknown argument for calibrate: ";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto a = std::make_shared<CalibrateArgs>();
    app.add_option("--profile", a->profile, "stage profile CSV (stage,instruction,frequency,time,energy)");
    app.add_option("--recording", a->recording, "recording directory");
    app.add_option("--power-suite", a->suite, "directory of power-suite kernel loops (the activity power model)");
    app.add_option("--power-window", a->window,
                   "with --power-suite: directory of the loops measured over their own profiled window (default: the split "
                   "file's profiled_window.folder)");
    app.add_option("--split", a->split, "with --power-suite / --stream-pairs: the file naming the fit and held-out loops or pairs");
    app.add_option("--stream-pairs", a->stream_pairs, "two-stream kernel pairs: fit the contention model of concurrent streams");
    app.add_option("--base", a->base, "model (name or file) supplying clock tables, idle power, cap and specs");
    app.add_option("-o,--output", a->out_file, "write the fitted model to this file");
    app.add_option("--date", a->date, "calibration date YYYY-MM-DD (default: today)");
    app.add_flag("--json", a->json, "print the model and the report as JSON");
    return [a] { return calibrate_main(*a); };
  };
  return c;
}

Command compare_command() {
  Command c;
  c.name = "compare";
  c.summary = "replay one scenario's trace under several policies, side by side against native";
  c.description =
      "Replays the scenario's trace and GPU under each policy (the scenario's own policy is not used; native always\n"
      "runs, as the reference) and prints energy, time, saving and slowdown vs native, clock switches and switching\n"
      "time; writes DIR/compare.csv and .json (DIR: -o, else <the scenario's output dir>/compare).\n"
      "A synthetic scenario: its iteration under each policy (default max, critical-path, kareus) against the first, and\n"
      "the Perseus / Kareus / both-off frontier study (energy at iso-time, time at iso-energy).";
  c.unknown_option = "unknown option for compare: ";
  c.extra_argument = "compare takes one scenario file";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto a = std::make_shared<CompareArgs>();
    app.add_option("scenario", a->scenario, "scenario file (default: scenarios/default.json)");
    std::string defaults;
    for (const std::string& p : default_comparison()) defaults += (defaults.empty() ? "" : ",") + p;
    app.add_option("--policies", a->policies, "comma-separated policies (default: " + defaults + "; any of: " +
                                                  join_names(comparable_policies()) + ")");
    add_text_option(app, "--budget", a->budget, "allowed slowdown in % for the planned policies (default 0)");
    add_text_option(app, "--latency", a->latency, "SM and memory switch latency in s (default: the scenario's / model's)");
    app.add_option("-o,--output", a->out_dir, "directory for compare.csv and compare.json");
    app.add_flag("--trace", a->trace, "also write each policy's replay as a trace, DIR/<policy>.trace.json.gz (docs/trace-export.md)");
    app.add_flag("--json", a->json, "print the table as JSON");
    return [a] { return compare_main(*a); };
  };
  return c;
}

}  // namespace dvfs

namespace {

std::vector<dvfs::Command> all_commands() {
  return {dvfs::run_command(),     dvfs::models_command(), dvfs::validate_command(),
          dvfs::calibrate_command(), dvfs::compare_command(), dvfs::synth_command(),
          dvfs::control_command(), dvfs::fleet_command(),  dvfs::bench_command(), dvfs::report_command(),
          dvfs::cache_command()};
}

std::string overview(const std::vector<dvfs::Command>& cmds) {
  std::string s = "usage: dvfs-sim <command> [options]      `dvfs-sim help COMMAND`: its options\n";
  for (const auto& c : cmds) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-10s ", c.name.c_str());
    s += buf + c.summary + "\n";
  }
  s += "  help       this list; `dvfs-sim help COMMAND` for a command, `dvfs-sim help policies` for the policies\n";
  s += "Any command: --no-cache imports traces without the workload cache (`dvfs-sim help cache`).\n";
  return s;
}

std::string policy_help() {
  std::string s = "Policies a scenario's \"policy\" names (sim/policies/registry.hpp; adding one: docs/adding-a-policy.md):\n";
  for (const dvfs::PolicyEntry& e : dvfs::policy_registry().entries()) {
    std::string keys;
    for (const auto& k : e.keys) keys += (keys.empty() ? "" : ", ") + k;
    for (const auto& k : e.scenario_keys) keys += (keys.empty() ? "" : ", ") + k + " (scenario)";
    char buf[96];
    std::snprintf(buf, sizeof buf, "  %-25s %-9s ", e.name.c_str(), dvfs::to_string(e.kind));
    s += buf + e.summary + (keys.empty() ? "" : "\n  " + std::string(36, ' ') + "keys: " + keys) + "\n";
  }
  return s;
}

// A command's parser: its options as the command declares them.
struct Parser {
  CLI::App app;
  std::function<int()> body;
  explicit Parser(const dvfs::Command& c) : app(c.description, "dvfs-sim " + c.name) {
    // an option given twice is an error (the first value was dropped without a word); repeatable ones are lists
    app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
    app.allow_extras();                  // unknown arguments are reported with the command's own words
    body = c.declare(app);
  }
};

int run_command_line(const dvfs::Command& c, std::vector<std::string> args) {
  Parser p(c);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  try {
    p.app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::cout << p.app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    throw dvfs::UsageError(e.what());
  }
  // An empty value (`--engine ''`, `-o ''`, `report ''`) fell back to the option's default without a word.
  // A flag given twice (`--json --json`) was taken as once: refused as options given twice are.
  for (const CLI::Option* o : p.app.get_options())
    if (o->get_expected_min() == 0 && o->count() > 1 && o->get_multi_option_policy() != CLI::MultiOptionPolicy::TakeAll)
      throw dvfs::UsageError(o->get_name() + ": given " + std::to_string(o->count()) + " times; expected at most once");
  for (const CLI::Option* o : p.app.get_options())
    for (const std::string& v : o->results())
      if (v.empty() && o->get_expected_min() > 0)
        throw dvfs::UsageError(o->get_name() + ": expected a value, got an empty string");
  for (const std::string& extra : p.app.remaining()) {
    if (extra == "--") continue;
    if (!extra.empty() && extra[0] == '-') throw dvfs::UsageError(c.unknown_option + extra);
    throw dvfs::UsageError(c.extra_argument.empty() ? c.unknown_option + extra : c.extra_argument);
  }
  return p.body();
}

const dvfs::Command* find_command(const std::vector<dvfs::Command>& cmds, const std::string& name) {
  for (const auto& c : cmds)
    if (c.name == name) return &c;
  return nullptr;
}

std::string command_list(const std::vector<dvfs::Command>& cmds) {
  std::string s;
  for (std::size_t i = 0; i < cmds.size(); ++i) s += (i == 0 ? "" : i + 1 == cmds.size() ? " or " : ", ") + cmds[i].name;
  return s;
}

int usage_error(const std::string& message, const std::string& cmd) {
  std::cerr << "dvfs-sim: " << message << " (see `dvfs-sim help" << (cmd.empty() ? "" : " " + cmd) << "`)\n";
  return 2;
}

int run_cli(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // --no-cache, before any `--`, is a global option of every command: traces are imported afresh.
  int no_cache_given = 0;
  for (auto it = args.begin(); it != args.end() && *it != "--";) {
    if (*it != "--no-cache") {
      ++it;
      continue;
    }
    ++no_cache_given;
    dvfs::set_workload_cache_enabled(false);
    it = args.erase(it);
  }
  if (no_cache_given > 1)  // as any flag given twice
    return usage_error("--no-cache: given " + std::to_string(no_cache_given) + " times; expected at most once", "");
  std::string cmd;
  try {
    const std::vector<dvfs::Command> cmds = all_commands();
    if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
      if (args.size() > 1 && args[0] == "help") {
        if (args[1] == "policies") {
          std::cout << policy_help();
          return 0;
        }
        const dvfs::Command* c = find_command(cmds, args[1]);
        if (!c) return usage_error("unknown command \"" + args[1] + "\" (expected " + command_list(cmds) + ")", "");
        std::cout << Parser(*c).app.help();
        return 0;
      }
      std::cout << overview(cmds);
      return args.empty() ? 2 : 0;
    }
    cmd = args[0];
    const dvfs::Command* c = find_command(cmds, cmd);
    if (!c) return usage_error("unknown command \"" + cmd + "\" (expected " + command_list(cmds) + ")", "");
    args.erase(args.begin());
    return run_command_line(*c, args);
  } catch (const dvfs::UsageError& e) {
    return usage_error(e.what(), cmd);
  } catch (const dvfs::InputError& e) {
    std::cerr << "dvfs-sim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dvfs-sim: internal error: " << e.what() << "\n";
    return 3;
  }
}

// Whether the sanitizers' checks at exit (LeakSanitizer) need the ordinary exit.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

int main(int argc, char** argv) {
  const int rc = run_cli(argc, argv);
  // Every command's files are written and closed by now (their streams are scoped); what is left of an ordinary
  // exit is the destructors of every library's statics (SimGrid's, ns-3's, ...) and freeing memory the kernel
  // takes back anyway: ~1-2 ms of a 30 ms cached run. So flush the standard streams and end here, except in
  // sanitizer builds, whose leak check runs at exit.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  if (!kSanitized) std::_Exit(rc);
  return rc;
}
