#include "sim/scenario/scenario.hpp"

#include "sim/critical_path/pipeline_plans.hpp"
#include "sim/planning/planned_policies.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"

namespace dvfs {

const char* to_string(EngineMode m) { return m == EngineMode::event ? "event" : "local-loop"; }

std::string default_scenario_path() { return data_dir() + "/scenarios/default.json"; }

Scenario load_scenario(const std::string& path) {
  Json doc = read_json_file(path);
  return parse_scenario(doc, path, dirname_of(path));
}

Scenario parse_scenario(const Json& doc, const std::string& file, const std::string& base_dir) {
  JsonReader r(doc, file, "");
  r.only_keys({"name", "description", "trace", "trace_gpu", "gpu", "policy", "switch_latency", "seed", "repeat", "engine",
               "output", "synthetic", "cluster", "clock_plan"});
  Scenario s;
  s.file = file;
  s.name = r.string_or("name", "scenario");
  s.description = r.string_or("description", "");

  if (r.has("synthetic")) {
    s.synthetic = r.raw("synthetic");
    if (!s.synthetic.is_object()) r.fail("synthetic", "expected an object {model, tp, pp, dp, ...}");
  }
  auto trace_path = [&](const std::string& p, const std::string& field) {
    const std::string full = normalize_path(join_path(base_dir, p));
    if (!file_exists(full))
      r.fail(field.c_str(), "file or directory not found: " + full + " (expected a recording directory or a Kineto .json/.json.gz trace)");
    return full;
  };
  if (r.has("trace") && r.raw("trace").is_array()) {
    // Several ranks of one job.
    const Json& list = r.raw("trace");
    if (list.empty()) r.fail("trace", "expected at least one rank's trace in the list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) r.fail("trace", "expected a list of paths (element " + std::to_string(i) + " is " + json_type_name(list[i]) + ")");
      s.trace_paths.push_back(trace_path(list[i].get<std::string>(), "trace[" + std::to_string(i) + "]"));
    }
    s.trace_path = s.trace_paths.front();
  } else {
    s.trace_path = trace_path(s.synthetic.is_null() || r.has("trace") ? r.string("trace") : data_dir() + "/traces/recordings/h200-gpt3xl", "trace");
  }
  if (r.has("cluster")) read_cluster_json(r.child("cluster"), s.cluster);
  s.gpu = r.string("gpu");
  if (s.gpu.find('/') != std::string::npos) s.gpu = join_path(base_dir, s.gpu);
  if (r.has("trace_gpu")) {
    s.trace_gpu = r.string("trace_gpu");
    if (s.trace_gpu.find('/') != std::string::npos) s.trace_gpu = join_path(base_dir, s.trace_gpu);
  }

  const Json& pol = r.raw("policy");
  if (pol.is_string()) {
    s.policy.name = pol.get<std::string>();
  } else if (pol.is_object()) {
    JsonReader p(pol, file, "policy");
    p.only_keys({"name", "sm_mhz", "mem_mhz", "power_cap_w", "budget_pct"});
    s.policy.name = p.string("name");
    if (s.policy.name == "static") {
      s.policy.clocks = ClockPair{p.positive("sm_mhz"), p.number_or("mem_mhz", 0)};
    } else if (p.has("sm_mhz") || p.has("mem_mhz")) {
      p.fail(p.has("sm_mhz") ? "sm_mhz" : "mem_mhz", "only the static policy takes clocks (policy is \"" + s.policy.name + "\")");
    }
    if (p.has("budget_pct")) {
      if (!is_planned_policy(s.policy.name) && !is_critical_path_policy(s.policy.name))
        p.fail("budget_pct", "only the planned policies (per-kernel, per-kernel-online, pass-level, static-best, "
                             "latency-aware) and critical-path, critical-path+per-kernel take a slowdown budget");
      s.policy.budget_pct = p.non_negative("budget_pct");
    }
    if (p.has("power_cap_w")) {
      if (s.policy.name != "native") p.fail("power_cap_w", "only the native policy takes a power cap");
      s.policy.power_cap_w = p.positive("power_cap_w");
    }
  } else {
    r.fail("policy", "expected a policy name or an object {name, ...}, got " + json_type_name(pol));
  }
  const char* known[] = {"max", "static", "native", "recorded"};
  bool ok = is_planned_policy(s.policy.name) || is_critical_path_policy(s.policy.name);
  for (const char* k : known) ok = ok || s.policy.name == k;
  if (!ok)
    r.fail("policy", "unknown policy \"" + s.policy.name + "\" (expected one of: " + policy_names() +
                         ", critical-path, critical-path+per-kernel)");
  // The critical-path policies plan a pipeline: they need a synthetic multi-GPU workload.
  if (is_critical_path_policy(s.policy.name) && s.synthetic.is_null())
    r.fail("policy", "\"" + s.policy.name + "\" plans a pipeline-parallel iteration: it needs a `synthetic` workload");
  if (r.has("clock_plan")) {
    if (s.policy.name != "critical-path")
      r.fail("clock_plan", "a clock plan is replayed by the critical-path policy (policy is \"" + s.policy.name + "\")");
    s.clock_plan = normalize_path(join_path(base_dir, r.string("clock_plan")));
    if (!file_exists(s.clock_plan)) r.fail("clock_plan", "file not found: " + s.clock_plan + " (expected a plan in Perseus's N.sched.json format)");
  }
  if (s.policy.name == "static" && !s.policy.clocks)
    r.fail("policy", "the static policy needs {\"name\": \"static\", \"sm_mhz\": ..., \"mem_mhz\": ...}");

  if (r.has("switch_latency")) {
    JsonReader l = r.child("switch_latency");
    if (!l.is_object()) r.fail("switch_latency", "expected an object {sm, mem, firmware_s}");
    // `nvml_s` and `mem_nvml_s` are the older shorthands for a deterministic mean latency.
    l.only_keys({"sm", "mem", "firmware_s", "nvml_s", "mem_nvml_s"});
    auto domain = [&](const char* key, const char* shorthand, DomainLatencyOverride& out) {
      if (l.has(key) && l.has(shorthand))
        l.fail(shorthand, std::string("give either ") + key + " or " + shorthand + ", not both");
      if (l.has(key)) {
        out = read_domain_latency_override(l.child(key));
      } else if (l.has(shorthand)) {
        out.mean_s = l.non_negative(shorthand);
        out.spread_s = 0.0;
      }
    };
    domain("sm", "nvml_s", s.replay.sm_latency);
    domain("mem", "mem_nvml_s", s.replay.mem_latency);
    if (l.has("firmware_s")) s.replay.firmware_latency_s = l.non_negative("firmware_s");
  }
  if (r.has("seed")) {
    const Json& seed = r.raw("seed");
    if (!seed.is_number_integer()) r.fail("seed", "expected a non-negative integer, got " + json_type_name(seed));
    if (!seed.is_number_unsigned() && seed.get<long long>() < 0)
      r.fail("seed", "expected a non-negative integer, got " + std::to_string(seed.get<long long>()));
    s.replay.seed = seed.get<std::uint64_t>();
  }
  s.replay.repeat = static_cast<int>(r.integer_or("repeat", 1));
  if (s.replay.repeat < 1) r.fail("repeat", "expected an integer >= 1");
  std::string mode = r.string_or("engine", "local-loop");
  if (mode == "local-loop") s.mode = EngineMode::local_loop;
  else if (mode == "event") s.mode = EngineMode::event;
  else r.fail("engine", "unknown engine mode \"" + mode + "\" (expected \"local-loop\" or \"event\")");

  if (r.has("output")) {
    JsonReader o = r.child("output");
    o.only_keys({"dir", "timeline_interval_s"});
    if (o.has("dir")) s.output_dir = normalize_path(join_path(base_dir, o.string("dir")));
    if (o.has("timeline_interval_s")) s.replay.timeline_interval_s = o.positive("timeline_interval_s");
  }
  return s;
}

ClusterSpec cluster_for(const Scenario& sc, const GpuModel& model) {
  return resolve_bandwidths(sc.cluster, model.specs().interconnect_gbs * 1e9, model.specs().nic_gbs * 1e9);
}

}  // namespace dvfs
