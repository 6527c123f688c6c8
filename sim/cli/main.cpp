// dvfs-sim command line: run | models | validate | bench. Bad input is one line on stderr and exit 2.
#include "models/src/model_registry.hpp"
#include "sim/calibrate/power_fit.hpp"
#include "sim/calibrate/profile_fit.hpp"
#include "sim/calibrate/recording_fit.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/bench.hpp"
#include "sim/cli/control_commands.hpp"
#include "sim/control/control_scenario.hpp"
#include "sim/control/fleet.hpp"
#include "sim/compare.hpp"
#include "sim/critical_path/perseus_validation.hpp"
#include "models/src/retarget.hpp"
#include "sim/pipeline/perseus_runs.hpp"
#include "sim/synthetic_run.hpp"
#include "sim/policies/policy_factory.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/recording.hpp"
#include "traces/src/synthesis.hpp"
#include "sim/core/errors.hpp"
#include "sim/results/summary.hpp"
#include "sim/simulation.hpp"
#include "sim/validate/model_checks.hpp"
#include "sim/validate/validate.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace {

const char* kUsage =
    "usage: dvfs-sim <command> [options]\n"
    "  run [scenario.json] [-o DIR] [--engine local-loop|event] [--json]\n"
    "        replay a trace on a GPU model (no scenario = scenarios/default.json); writes DIR/summary.json\n"
    "        and DIR/timeline.csv (DIR defaults to the scenario's output.dir, else out/<scenario name>)\n"
    "  models [--json]              list GPU models and their provenance status\n"
    "  validate RECORDING_DIR --gpu NAME [--cluster FILE] [--json] [-o FILE]\n"
    "        replay a recording's profiled steps and compare with its measured time and energy; a directory of\n"
    "        rank<N>/ recordings is one multi-GPU job (collectives matched and run on the cluster of FILE)\n"
    "  validate --models [--json] [-o FILE]\n"
    "  validate --perseus DIR [--gpu MODEL] [--p-blocking W] [--power-cap W] [--quantum S] [--min-clock MHz]\n"
    "           [--no-frontier] [--write-plans DIR] [--json] [-o FILE]\n"
    "        every plan N of a Perseus run directory (N.sched.json + N.prof.json, .gz allowed): iteration time and\n"
    "        energy predicted from the all-max-clock plans and the GPU model vs measured, per plan and MAPE; then\n"
    "        the critical-path frontier against Perseus's own plans at equal iteration time; --write-plans: our\n"
    "        no-slowdown plan and ours at each Perseus plan's time, as N.sched.json files\n"
    "  validate --perseus-runs DIR [--p2p-latency S] [--json]\n"
    "        predict the iteration time of measured pipeline runs (Perseus artifact layout) from their\n"
    "        measured per-micro-batch forward/backward times\n"
    "        check the calibrated models on data their fits did not see (stage profiles, retargeting, H200)\n"
    "  calibrate (--profile CSV | --recording DIR | --power-suite DIR --split FILE) --base MODEL [-o OUT.json]\n"
    "            [--date YYYY-MM-DD] [--json]\n"
    "        fit a GPU model: from a per-frequency stage profile (stage,instruction,frequency,time,energy) or\n"
    "        from a recording's natural clock changes; MODEL (name or file) supplies what the data cannot\n"
    "        measure; prints the fit table and writes the model file to OUT.json\n"
    "  compare [scenario.json] --policies P1,P2,... [--budget PCT] [--latency S] [-o DIR] [--json]\n"
    "        replay the scenario's trace and GPU under each policy (the scenario's own policy is not used;\n"
    "        native always runs, as the reference) and print energy, time,\n"
    "        saving and slowdown vs native, clock switches and switching time; writes DIR/compare.csv and .json.\n"
    "        Policies: max native per-kernel per-kernel-online pass-level static-best latency-aware.\n"
    "        --budget: allowed slowdown in % for the planned ones; --latency: SM and memory switch latency in s\n"
    "  synth --model NAME [--gpus N] [--tp N] [--pp N] [--dp N] [--cp N] [--vpp N] [--microbatches N]\n"
    "        [--gpu MODEL] [--policy P] [--budget PCT] [--schedule 1f1b|gpipe|interleaved-1f1b]\n"
    "        [--gradient-sync all-reduce|reduce-scatter] [--no-overlap] [--bucket-params N] [--grad-dtype fp32|bf16]\n"
    "        [--allreduce auto|ring|tree] [--topology node-backbone|fat-tree|rail] [--placement dp-inner|pp-inner]\n"
    "        [--nodes-per-leaf N] [--inter-bw B/s] [--oversubscription X] [--straggler REPLICA:FACTOR]\n"
    "        [--latency S] [--power-cap W] [--power-budget W] [--no-sequence-parallel] [--no-memory-check] [--unfold-tp] [--per-gpu CSV] [--json] [-o FILE]\n"
    "        a transformer's training iteration synthesised from the recorded layer and replayed at kernel level\n"
    "        on a simulated cluster: gpt3-xl, gpt3-175b, qwen3-1.7b, llama-3.2-3b, llama-3.3-70b\n"
    "  bench [--events N]           replay throughput (kernel events/s) and peak memory\n";
const std::string kUsageAll = std::string(kUsage) + dvfs::kControlUsage;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string take_value(std::vector<std::string>& args, std::size_t& i) {
  if (i + 1 >= args.size()) throw UsageError("option " + args[i] + " needs a value");
  return args[++i];
}

int cmd_run(std::vector<std::string> args) {
  std::string scenario_path, out_dir, engine;
  bool json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" || args[i] == "--output") out_dir = take_value(args, i);
    else if (args[i] == "--engine") engine = take_value(args, i);
    else if (args[i] == "--json") json = true;
    else if (!args[i].empty() && args[i][0] == '-') throw UsageError("unknown option for run: " + args[i]);
    else if (scenario_path.empty()) scenario_path = args[i];
    else throw UsageError("run takes one scenario file");
  }
  if (scenario_path.empty()) scenario_path = dvfs::default_scenario_path();
  if (dvfs::is_control_scenario(scenario_path)) {  // a power-budget scenario (sim/control/)
    std::vector<std::string> control_args{scenario_path};
    if (json) control_args.push_back("--json");
    return dvfs::cmd_control(control_args);
  }
  if (dvfs::is_fleet_scenario(scenario_path)) return dvfs::cmd_fleet(json ? std::vector<std::string>{scenario_path, "--json"} : std::vector<std::string>{scenario_path});
  dvfs::Scenario sc = dvfs::load_scenario(scenario_path);
  if (engine == "event") sc.mode = dvfs::EngineMode::event;
  else if (engine == "local-loop") sc.mode = dvfs::EngineMode::local_loop;
  else if (!engine.empty()) throw dvfs::InputError("--engine", "", "expected local-loop or event, got \"" + engine + "\"");
  if (out_dir.empty()) out_dir = sc.output_dir.empty() ? "out/" + sc.name : sc.output_dir;
  if (!sc.synthetic.is_null()) {  // a synthesised multi-GPU iteration
    const dvfs::Json res = dvfs::run_synthetic(dvfs::synthetic_request(sc));
    dvfs::make_directories(out_dir);
    std::ofstream(out_dir + "/summary.json") << res.dump(2) << "\n";
    if (const std::string csv = dvfs::per_gpu_csv(res); !csv.empty()) std::ofstream(out_dir + "/gpus.csv") << csv;
    std::cout << (json ? res.dump(2) + "\n" : dvfs::format_synthetic(res) + "results: " + out_dir + "/summary.json\n");
    return 0;
  }
  dvfs::SimulationResult r = dvfs::simulate(sc);
  dvfs::write_results(r, out_dir);
  if (json) {
    std::cout << r.summary.dump(2) << "\n";
  } else {
    std::cout << dvfs::format_report(r.summary);
    std::cout << "results: " << out_dir << "/summary.json, " << out_dir << "/timeline.csv\n";
  }
  return 0;
}

int cmd_models(const std::vector<std::string>& args) {
  bool json = false;
  for (const auto& a : args) {
    if (a == "--json") json = true;
    else throw UsageError("unknown option for models: " + a);
  }
  dvfs::Json out = dvfs::Json::array();
  for (const auto& name : dvfs::available_models()) {
    dvfs::GpuModel m = dvfs::load_gpu_model(name);
    out.push_back({{"name", m.name()},
                   {"display_name", m.display_name()},
                   {"status", m.status()},
                   {"derived_from", m.derived_from()},
                   {"computations", [&] {
                      dvfs::Json c = dvfs::Json::array();
                      for (const auto& kv : m.computations()) c.push_back(kv.first);
                      return c;
                    }()},
                   {"sm_mhz", {m.sm_clocks_mhz().front(), m.sm_clocks_mhz().back()}},
                   {"mem_mhz", m.mem_clocks_mhz()},
                   {"power_cap_w", m.power_cap_w()},
                   {"switch_latency", dvfs::to_json(m.switch_latency())},
                   {"summary", m.provenance().value("summary", "")},
                   {"file", m.source_file()}});
  }
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

int cmd_validate(std::vector<std::string> args) {
  std::string dir, gpu, out_file, perseus, perseus_plans;
  bool json = false, models = false;
  dvfs::ClusterSpec cluster = dvfs::default_cluster_spec();
  dvfs::Json cluster_doc;
  double p2p = 0;
  dvfs::PerseusValidationOptions po;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--models") models = true;
    else if (args[i] == "--perseus-runs") perseus = take_value(args, i);
    else if (args[i] == "--perseus") perseus_plans = take_value(args, i);
    else if (args[i] == "--p-blocking") {
      po.p_blocking_w = dvfs::parse_number("--p-blocking", take_value(args, i), "a power in W (>= 0)");
      if (po.p_blocking_w < 0) throw dvfs::InputError("--p-blocking", "", "expected a power >= 0 W");
    }
    else if (args[i] == "--power-cap") po.power_cap_w = dvfs::parse_number("--power-cap", take_value(args, i), "a power limit in W (> 0)");
    else if (args[i] == "--quantum") po.quantum_s = dvfs::parse_number("--quantum", take_value(args, i), "a time quantum in s (> 0)");
    else if (args[i] == "--min-clock") {
      po.min_sm_mhz = dvfs::parse_number("--min-clock", take_value(args, i), "an SM clock in MHz (>= 0)");
      if (po.min_sm_mhz < 0) throw dvfs::InputError("--min-clock", "", "expected an SM clock >= 0 MHz");
    }
    else if (args[i] == "--no-frontier") po.frontier = false;
    else if (args[i] == "--write-plans") po.write_plans = take_value(args, i);
    else if (args[i] == "--p2p-latency") {
      p2p = dvfs::parse_number("--p2p-latency", take_value(args, i), "a latency in seconds (>= 0)");
      if (p2p < 0) throw dvfs::InputError("--p2p-latency", "", "expected a latency >= 0 s");
    }
    else if (args[i] == "--gpu") gpu = take_value(args, i);
    else if (args[i] == "--json") json = true;
    else if (args[i] == "-o" || args[i] == "--output") out_file = take_value(args, i);
    else if (args[i] == "--cluster") {
      // A JSON file with the scenario `cluster` object (multi-rank recordings).
      const std::string file = take_value(args, i);
      dvfs::read_cluster_json(dvfs::JsonReader(cluster_doc = dvfs::read_json_file(file), file, ""), cluster);
    }
    else if (!args[i].empty() && args[i][0] == '-') throw UsageError("unknown option for validate: " + args[i]);
    else if (dir.empty()) dir = args[i];
    else throw UsageError("validate takes one recording directory");
  }
  if (!perseus_plans.empty()) {  // every plan of a Perseus run directory, time and energy (sim/critical_path/)
    if (po.power_cap_w < 0) throw dvfs::InputError("--power-cap", "", "expected a power limit > 0 W");
    if (!(po.quantum_s > 0) || po.quantum_s > 1) throw dvfs::InputError("--quantum", "", "expected a time quantum in (0, 1] s");
    po.gpu = gpu;
    const dvfs::Json rep = dvfs::validate_perseus(perseus_plans, po);
    if (!out_file.empty()) dvfs::write_json_output(out_file, rep, "validation report");
    std::cout << (json ? rep.dump(2) + "\n" : dvfs::format_perseus_report(rep));
    return 0;
  }
  if (!perseus.empty()) {
    const dvfs::Json rep = dvfs::validate_perseus_runs(perseus, {0, 1}, p2p);
    std::cout << (json ? rep.dump(2) + "\n" : dvfs::format_perseus_validation(rep));
    return 0;
  }
  if (models && (!dir.empty() || !gpu.empty())) throw UsageError("validate --models takes no recording or --gpu");
  if (!models && dir.empty()) throw UsageError("validate needs a recording directory (or --models)");
  if (!models && gpu.empty()) throw UsageError("validate needs --gpu NAME (see dvfs-sim models)");
  const bool multi = !models && dvfs::is_multi_rank_recording(dir);
  dvfs::Json rep = models ? dvfs::validate_models()
                   : multi ? dvfs::validate_multi_rank(dir, gpu, cluster)
                           : dvfs::validate_recording(dir, gpu);
  if (!out_file.empty()) dvfs::write_json_output(out_file, rep, "validation report");
  std::cout << (json ? rep.dump(2) + "\n"
                     : models ? dvfs::format_model_checks(rep)
                     : multi  ? dvfs::format_multi_rank_validation(rep)
                              : dvfs::format_validation(rep));
  return 0;
}

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

int cmd_calibrate(std::vector<std::string> args) {
  std::string profile, recording, suite, split, base, out_file, date;
  bool json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--profile") profile = take_value(args, i);
    else if (args[i] == "--power-suite") suite = take_value(args, i);
    else if (args[i] == "--split") split = take_value(args, i);
    else if (args[i] == "--recording") recording = take_value(args, i);
    else if (args[i] == "--base") base = take_value(args, i);
    else if (args[i] == "-o" || args[i] == "--output") out_file = take_value(args, i);
    else if (args[i] == "--date") date = take_value(args, i);
    else if (args[i] == "--json") json = true;
    else throw UsageError("unknown argument for calibrate: " + args[i]);
  }
  if (int(!profile.empty()) + int(!recording.empty()) + int(!suite.empty()) != 1)
    throw UsageError("calibrate needs exactly one of --profile CSV, --recording DIR or --power-suite DIR");
  if (!suite.empty() && split.empty())
    throw UsageError("calibrate --power-suite needs --split FILE (which loops are fit and which held out)");
  if (base.empty()) throw UsageError("calibrate needs --base MODEL (a model name or file supplying clock tables, idle power, cap and specs)");
  if (date.empty()) date = today();
  {
    int y = 0, mo = 0, d = 0;
    char tail = 0;
    if (date.size() != 10 || std::sscanf(date.c_str(), "%4d-%2d-%2d%c", &y, &mo, &d, &tail) != 3 || mo < 1 || mo > 12 ||
        d < 1 || d > 31)
      throw dvfs::InputError("--date", "", "expected a date YYYY-MM-DD, got \"" + date + "\"");
  }
  std::string command = "dvfs-sim calibrate " +
                        (!suite.empty() ? "--power-suite " + suite + " --split " + split
                                        : profile.empty() ? "--recording " + recording : "--profile " + profile) +
                        " --base " + base;
  const std::string base_path = dvfs::resolve_model_path(base, "", "--base");
  dvfs::Json model, report;
  std::string text;
  if (!profile.empty()) {
    dvfs::ProfileCalibration c = dvfs::calibrate_from_profile(profile, base_path, command, date);
    model = c.model;
    report = {{"fit_error_in_sample", c.fit_error.to_json()}, {"table", c.table}};
    text = dvfs::format_profile_calibration(c);
  } else if (!suite.empty()) {
    dvfs::PowerSuiteCalibration c = dvfs::calibrate_from_power_suite(suite, split, base_path, command, date);
    model = c.model;
    report = c.report;
    text = dvfs::format_power_suite_calibration(c);
  } else {
    dvfs::RecordingCalibration c = dvfs::calibrate_from_recording(recording, base_path, command, date);
    model = c.model;
    report = c.report;
    text = dvfs::format_recording_calibration(c);
  }
  if (!out_file.empty()) dvfs::write_json_output(out_file, model, "model file");
  if (json) std::cout << dvfs::Json{{"model", model}, {"report", report}}.dump(2) << "\n";
  else std::cout << text << (out_file.empty() ? "model not written (no -o)\n" : "wrote " + out_file + "\n");
  return 0;
}

int cmd_compare(std::vector<std::string> args) {
  std::string scenario_path, out_dir, policies = "max,static-best,pass-level,per-kernel,per-kernel-online,latency-aware";
  double budget = 0;
  std::optional<double> latency;
  bool json = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--policies") policies = take_value(args, i);
    else if (args[i] == "--budget") {
      budget = dvfs::parse_number("--budget", take_value(args, i), "a slowdown budget in % (>= 0)");
      if (budget < 0) throw dvfs::InputError("--budget", "", "expected a slowdown budget >= 0 %, got " + args[i]);
    } else if (args[i] == "--latency") {
      latency = dvfs::parse_number("--latency", take_value(args, i), "a switch latency in seconds (>= 0)");
      if (*latency < 0 || *latency > 3600)
        throw dvfs::InputError("--latency", "", "expected a switch latency >= 0 s (at most 3600), got " + args[i]);
    } else if (args[i] == "-o" || args[i] == "--output") out_dir = take_value(args, i);
    else if (args[i] == "--json") json = true;
    else if (!args[i].empty() && args[i][0] == '-') throw UsageError("unknown option for compare: " + args[i]);
    else if (scenario_path.empty()) scenario_path = args[i];
    else throw UsageError("compare takes one scenario file");
  }
  if (scenario_path.empty()) scenario_path = dvfs::default_scenario_path();
  dvfs::Scenario sc = dvfs::load_scenario(scenario_path);
  if (latency) dvfs::set_fixed_switch_latency(sc.replay, *latency);
  const dvfs::Json table = dvfs::compare_policies(sc, dvfs::split_commas(policies), budget);
  if (out_dir.empty()) out_dir = (sc.output_dir.empty() ? "out/" + sc.name : sc.output_dir) + "/compare";
  dvfs::make_directories(out_dir);
  std::ofstream(out_dir + "/compare.json") << table.dump(2) << "\n";
  std::ofstream csv(out_dir + "/compare.csv");
  csv << dvfs::comparison_csv(table);
  if (!csv) throw dvfs::InputError(out_dir, "", "cannot write compare.csv");
  std::cout << (json ? table.dump(2) + "\n" : dvfs::format_comparison(table) + "results: " + out_dir + "/compare.csv, " + out_dir + "/compare.json\n");
  return 0;
}

int cmd_synth(std::vector<std::string> args) {
  dvfs::SyntheticRun req;
  bool json = false;
  std::string out_file, per_gpu_file;
  bool cluster_set = false, schedule_set = false;
  auto int_opt = [&](std::size_t& i, const char* what) {
    const std::string opt = args[i];
    const double v = dvfs::parse_number(opt, take_value(args, i), what);
    if (v < 1 || v != std::floor(v) || v > 1e6) throw dvfs::InputError(opt, "", std::string("expected ") + what);
    return static_cast<int>(v);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--model") req.model = take_value(args, i);
    else if (args[i] == "--gpu") req.gpu = take_value(args, i);
    else if (args[i] == "--policy") req.policy = take_value(args, i);
    else if (args[i] == "--recording") req.recording = take_value(args, i);
    else if (args[i] == "--tp") req.layout.tp = int_opt(i, "a positive integer");
    else if (args[i] == "--pp") req.layout.pp = int_opt(i, "a positive integer");
    else if (args[i] == "--dp") req.layout.dp = int_opt(i, "a positive integer");
    else if (args[i] == "--cp") req.layout.cp = int_opt(i, "a positive integer");
    else if (args[i] == "--vpp") req.layout.vpp = int_opt(i, "a positive integer");
    else if (args[i] == "--gpus") req.gpus = int_opt(i, "a positive integer");
    else if (args[i] == "--unfold-tp") req.unfold_tp = true;
    else if (args[i] == "--no-sequence-parallel") req.sequence_parallel = false;
    else if (args[i] == "--no-memory-check") req.check_memory = false;
    else if (args[i] == "--power-cap") req.power_cap_w = dvfs::parse_number("--power-cap", take_value(args, i), "a power limit in W");
    else if (args[i] == "--power-budget") {
      req.power_budget_w = dvfs::parse_number("--power-budget", take_value(args, i), "a budget in W for the whole job (> 0)");
      if (!(req.power_budget_w > 0)) throw dvfs::InputError("--power-budget", "", "expected a budget > 0 W for the whole job");
    }
    else if (args[i] == "--latency") {
      const double lat = dvfs::parse_number("--latency", take_value(args, i), "a switch latency in seconds (>= 0)");
      if (lat < 0 || lat > 3600) throw dvfs::InputError("--latency", "", "expected a switch latency >= 0 s (at most 3600)");
      dvfs::set_fixed_switch_latency(req.replay, lat);
    }
    else if (args[i] == "--per-gpu") per_gpu_file = take_value(args, i), req.per_gpu = true;
    else if (args[i] == "--no-overlap") req.overlap_gradient_sync = false;
    else if (args[i] == "--gradient-sync") {
      const std::string v = take_value(args, i);
      if (v == "all-reduce") req.gradient_sync = dvfs::GradientSync::all_reduce;
      else if (v == "reduce-scatter") req.gradient_sync = dvfs::GradientSync::reduce_scatter;
      else throw dvfs::InputError("--gradient-sync", "", "expected all-reduce or reduce-scatter, got \"" + v + "\"");
    } else if (args[i] == "--bucket-params") {
      req.bucket_params = dvfs::parse_number("--bucket-params", take_value(args, i), "a parameter count per bucket (> 0)");
      if (!(req.bucket_params > 0)) throw dvfs::InputError("--bucket-params", "", "expected a parameter count per bucket > 0");
    } else if (args[i] == "--grad-dtype") {
      const std::string v = take_value(args, i);
      if (v == "fp32") req.grad_bytes_per_param = 4;
      else if (v == "bf16") req.grad_bytes_per_param = 2;
      else throw dvfs::InputError("--grad-dtype", "", "expected fp32 or bf16, got \"" + v + "\"");
    } else if (args[i] == "--topology" || args[i] == "--placement" || args[i] == "--nodes-per-leaf") {
      // Cluster keys go through the scenario reader, so the CLI and scenarios check them alike.
      if (!cluster_set) req.cluster = dvfs::default_cluster_spec(), cluster_set = true;
      const std::string key = args[i].substr(2);
      const std::string v = take_value(args, i);
      dvfs::Json c = dvfs::Json::object();
      std::string json_key = key == "nodes-per-leaf" ? "nodes_per_leaf" : key;
      if (key == "nodes-per-leaf") c[json_key] = static_cast<long>(dvfs::parse_number("--" + key, v, "a positive integer"));
      else c[json_key] = v;
      dvfs::read_cluster_json(dvfs::JsonReader(c, "--" + key, ""), req.cluster);
    }
    else if (args[i] == "--microbatches") req.microbatches = int_opt(i, "a positive integer");
    else if (args[i] == "--budget") {
      req.budget_pct = dvfs::parse_number("--budget", take_value(args, i), "a slowdown budget in % (>= 0)");
      if (req.budget_pct < 0) throw dvfs::InputError("--budget", "", "expected a slowdown budget >= 0 %");
    } else if (args[i] == "--schedule") {
      const std::string v = take_value(args, i);
      if (!dvfs::pipeline_schedule_from_string(v, req.schedule))
        throw dvfs::InputError("--schedule", "", "expected 1f1b, gpipe or interleaved-1f1b, got \"" + v + "\"");
      schedule_set = true;
    } else if (args[i] == "--straggler") {
      // REPLICA:FACTOR
      const std::string v = take_value(args, i);
      const auto colon = v.find(':');
      if (colon == std::string::npos) throw dvfs::InputError("--straggler", "", "expected REPLICA:FACTOR, e.g. 0:1.2");
      const double rep = dvfs::parse_number("--straggler", v.substr(0, colon), "a replica index");
      if (rep < 0 || rep != std::floor(rep) || rep > 1e6) throw dvfs::InputError("--straggler", "", "expected an integer replica index >= 0");
      req.straggler_replica = static_cast<int>(rep);
      req.straggler_factor = dvfs::parse_number("--straggler", v.substr(colon + 1), "a slowdown factor");
    } else if (args[i] == "--allreduce") {
      if (!cluster_set) req.cluster = dvfs::default_cluster_spec(), cluster_set = true;
      const std::string v = take_value(args, i);
      req.auto_allreduce = false;
      if (v == "ring") req.cluster.allreduce = dvfs::AllReduceAlgorithm::ring;
      else if (v == "tree") req.cluster.allreduce = dvfs::AllReduceAlgorithm::tree;
      else if (v == "auto") req.auto_allreduce = true;
      else throw dvfs::InputError("--allreduce", "", "expected ring, tree or auto, got \"" + v + "\"");
    } else if (args[i] == "--inter-bw") {
      if (!cluster_set) req.cluster = dvfs::default_cluster_spec(), cluster_set = true;
      req.cluster.inter_bw_bps = dvfs::parse_number("--inter-bw", take_value(args, i), "a bandwidth in bytes/s (> 0)");
    } else if (args[i] == "--oversubscription") {
      if (!cluster_set) req.cluster = dvfs::default_cluster_spec(), cluster_set = true;
      req.cluster.oversubscription = dvfs::parse_number("--oversubscription", take_value(args, i), "a factor >= 1");
    } else if (args[i] == "--json") json = true;
    else if (args[i] == "-o" || args[i] == "--output") out_file = take_value(args, i);
    else throw UsageError("unknown argument for synth: " + args[i]);
  }
  if (!cluster_set) req.cluster = dvfs::default_cluster_spec();
  if (req.layout.vpp > 1 && !schedule_set) req.schedule = dvfs::PipelineSchedule::interleaved_1f1b;
  const dvfs::Json r = dvfs::run_synthetic(req);
  if (!per_gpu_file.empty()) {
    std::ofstream f(per_gpu_file);
    f << dvfs::per_gpu_csv(r);
    if (!f) throw dvfs::InputError(per_gpu_file, "", "cannot write the per-GPU table");
  }
  if (!out_file.empty()) dvfs::write_json_output(out_file, r, "result");
  std::cout << (json ? r.dump(2) + "\n" : dvfs::format_synthetic(r));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::cout << kUsageAll;
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  try {
    if (cmd == "run") return cmd_run(args);
    if (cmd == "models") return cmd_models(args);
    if (cmd == "validate") return cmd_validate(args);
    if (cmd == "bench") return dvfs::cmd_bench(args);
    if (cmd == "calibrate") return cmd_calibrate(args);
    if (cmd == "compare") return cmd_compare(args);
    if (cmd == "synth") return cmd_synth(args);
    if (cmd == "control") return dvfs::cmd_control(args);
    if (cmd == "fleet") return dvfs::cmd_fleet(args);
    throw UsageError("unknown command \"" + cmd + "\" (expected run, models, validate, calibrate, compare, synth, control, fleet or bench)");
  } catch (const UsageError& e) {
    std::cerr << "dvfs-sim: " << e.what() << "\n" << kUsageAll;
    return 2;
  } catch (const dvfs::InputError& e) {
    std::cerr << "dvfs-sim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dvfs-sim: internal error: " << e.what() << "\n";
    return 3;
  }
}
