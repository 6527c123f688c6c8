#include "sim/simulation/scenario_file.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/text_format.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "traces/src/trace_formats.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace dvfs {

namespace {

// "static" / "a, b": the policies taking `key`, for "only the ... policy takes ..." messages.
std::string takers(const std::string& key, std::optional<PolicyKind> kind = std::nullopt) {
  return join_names(policy_registry().names_accepting(key, kind));
}

// trace (one path, or a list of ranks' paths), or a synthetic workload with its template recording.
void read_workload(const JsonReader& r, const std::string& base_dir, Scenario& s) {
  if (r.has("synthetic")) {
    s.synthetic = r.raw("synthetic");
    if (!s.synthetic.is_object()) r.fail("synthetic", "expected an object {model, tp, pp, dp, ...}");
  }
  auto trace_path = [&](const std::string& p, const std::string& field) {
    const std::string full = normalize_path(join_path(base_dir, p));
    // A Chakra prefix P stands for its rank files P.0.et, P.1.et, ... (docs/chakra.md).
    if (!file_exists(full) && !file_exists(full + ".0.et") && !file_exists(full + ".0.et.gz"))
      r.fail(field.c_str(), "file or directory not found: " + full +
                                " (expected a recording directory, a Kineto .json/.json.gz trace, an nsys .sqlite export or Chakra .et files)");
    if (p.empty()) r.fail(field.c_str(), "expected a path, got an empty string");
    // /dev/zero was read until memory ran out; a FIFO blocked
    if (file_exists(full) && !is_directory(full) && !is_regular_file(full))
      r.fail(field.c_str(), "not a regular file: " + full + " (a device, pipe or socket; expected a trace file or a recording directory)");
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
}

// The policy object's keys: each must be one its policy takes (checked before its values are read, so
// that a key given to the wrong policy says which policies take it).
void check_policy_keys(const JsonReader& p, const PolicyEntry* entry, const std::string& name) {
  std::vector<std::string> allowed = {"name"};
  for (const std::string& k : policy_registry().keys()) allowed.push_back(k);
  for (auto it = p.node().begin(); it != p.node().end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      throw InputError(p.file(), p.field(it.key().c_str()), "unknown key (expected one of: " + join_names(allowed) + ")");
  auto takes = [&](const char* key) { return entry && entry->accepts(key); };
  for (const char* clock : {"sm_mhz", "mem_mhz"})
    if (p.has(clock) && !takes(clock))
      p.fail(p.has("sm_mhz") ? "sm_mhz" : "mem_mhz", "only the " + takers(clock) + " policy takes clocks (policy is \"" + name + "\")");
  if (p.has("budget_pct") && !takes("budget_pct"))
    p.fail("budget_pct", "only the planned policies (" + takers("budget_pct", PolicyKind::planned) + ") and " +
                             takers("budget_pct", PolicyKind::pipeline) + " take a slowdown budget");
  if (p.has("power_cap_w") && !takes("power_cap_w")) p.fail("power_cap_w", "only the " + takers("power_cap_w") + " policy takes a power cap");
}

// `policy`: a name, or {name, ...the keys that policy takes}; then `clock_plan`, read by the policy taking it.
void read_policy(const JsonReader& r, const std::string& base_dir, Scenario& s) {
  const Json& pol = r.raw("policy");
  std::optional<JsonReader> object;
  if (pol.is_string()) {
    s.policy.name = pol.get<std::string>();
  } else if (pol.is_object()) {
    object.emplace(pol, r.file(), "policy");
    s.policy.name = object->string("name");
    s.policy.object = pol;
  } else {
    r.fail("policy", "expected a policy name or an object {name, ...}, got " + json_type_name(pol));
  }
  // the name first: an unknown policy is named as such, not by the first key it would not take
  const PolicyEntry* entry = &policy_registry().at(s.policy.name, r.file(), object ? "policy.name" : "policy");
  if (object) check_policy_keys(*object, entry, s.policy.name);
  // The pipeline policies plan a pipeline-parallel iteration: they need a synthetic multi-GPU workload.
  if (entry->kind == PolicyKind::pipeline && s.synthetic.is_null())
    r.fail("policy", "\"" + s.policy.name + "\" plans a pipeline-parallel iteration: it needs a `synthetic` workload");
  if (r.has("clock_plan")) {
    if (!entry->accepts("clock_plan"))
      r.fail("clock_plan", "a clock plan is replayed by the " + takers("clock_plan") + " policy (policy is \"" + s.policy.name + "\")");
    const std::string given = r.string("clock_plan");
    s.clock_plan = normalize_path(join_path(base_dir, given));
    // "" and a directory read as the scenario's folder: "malformed JSON" naming ".".
    if (given.empty() || !file_exists(s.clock_plan) || is_directory(s.clock_plan))
      r.fail("clock_plan", "no plan file at \"" + given + "\" (expected a plan in Perseus's N.sched.json format)");
    // With a given plan the budget plans nothing: budget_pct 10 beside a plan changed nothing, without a word.
    if (s.policy.name == "critical-path" && object && object->has("budget_pct"))
      r.fail("clock_plan", "a given clock plan is replayed as it is: drop policy.budget_pct, which only shapes a plan the policy makes");
  }
  if (entry->parse) entry->parse(r, object ? &*object : nullptr, s.policy);
}

void read_switch_latency(const JsonReader& r, ReplayOptions& replay) {
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
      out.mean_s = l.number_in(shorthand, 0, kMaxSwitchLatencyS, "s");
      out.spread_s = 0.0;
    }
  };
  domain("sm", "nvml_s", replay.sm_latency);
  domain("mem", "mem_nvml_s", replay.mem_latency);
  if (l.has("firmware_s")) replay.firmware_latency_s = l.number_in("firmware_s", 0, kMaxSwitchLatencyS, "s");
}

// seed, repeat, engine, output.
void read_run_options(const JsonReader& r, const std::string& base_dir, Scenario& s) {
  if (r.has("seed")) {
    const Json& seed = r.raw("seed");
    if (!seed.is_number_integer()) r.fail("seed", "expected a non-negative integer, got " + json_type_name(seed));
    if (!seed.is_number_unsigned() && seed.get<long long>() < 0)
      r.fail("seed", "expected a non-negative integer, got " + std::to_string(seed.get<long long>()));
    s.replay.seed = seed.get<std::uint64_t>();
  }
  s.replay.repeat = static_cast<int>(r.integer_in_or("repeat", 1, kMaxRepeat, 1));
  std::string mode = r.string_or("engine", "local-loop");
  if (mode == "local-loop") s.mode = EngineMode::local_loop;
  else if (mode == "event") s.mode = EngineMode::event;
  else r.fail("engine", "unknown engine mode \"" + mode + "\" (expected \"local-loop\" or \"event\")");
  const std::string overlap = r.string_or("stream_overlap", "contention");
  if (!stream_overlap_from_string(overlap, s.replay.stream_overlap))
    r.fail("stream_overlap", "unknown stream overlap \"" + overlap + "\" (expected \"contention\" or \"busy-union\")");

  if (r.has("output")) {
    JsonReader o = r.child("output");
    o.only_keys({"dir", "timeline_interval_s"});
    if (o.has("dir")) {
      if (o.string("dir").empty()) o.fail("dir", "expected a folder path, got an empty string (it wrote into the current folder)");
      s.output_dir = normalize_path(join_path(base_dir, o.string("dir")));
    }
    if (o.has("timeline_interval_s")) s.replay.timeline_interval_s = o.positive("timeline_interval_s");
  }
}

// A GPU model given as a file (a path, or a name ending in .json: resolve_model_path's rule) is relative to
// the scenario's folder. It is made absolute here: the model loaders join a relative path to the folder of
// the scenario file, which would join it a second time.
std::string model_path(const std::string& name_or_path, const std::string& base_dir) {
  if (name_or_path.find('/') == std::string::npos && name_or_path.find(".json") == std::string::npos) return name_or_path;
  return normalize_path(std::filesystem::absolute(join_path(base_dir, name_or_path)).string());
}

// What to write instead, for the errors of read_scenario_document: the replay scenario that names `trace`.
std::string scenario_naming(const std::string& trace) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(trace, ec);  // a scenario resolves paths from its own folder
  const std::string shown = Json(ec ? trace : absolute.lexically_normal().string()).dump(-1, ' ', false, Json::error_handler_t::replace);
  return "a scenario file for `dvfs-sim run` names it: {\"trace\": " + shown +
         ", \"gpu\": \"h200\", \"policy\": \"native\"} (README, \"Scenarios\"; `dvfs-sim models` lists the GPUs)";
}

// The first bytes of a file (fewer when it is shorter).
std::string first_bytes(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  bytes.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return bytes;
}

// The reader other than Kineto's (trace_formats(): Nsight Systems, Chakra, ...) that claims `path`, or nullptr.
const TraceFormat* non_kineto_format(const std::string& path) {
  for (const TraceFormat& f : trace_formats())
    if (f.name != "kineto" && f.claims(path)) return &f;
  return nullptr;
}

// Whether JSON text holds `"key"` followed by a colon: that key, not a string value that spells it.
bool names_key(const std::string& text, const std::string& key) {
  const std::string quoted = "\"" + key + "\"";
  for (std::size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at + 1)) {
    std::size_t i = at + quoted.size();
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && text[i] == ':') return true;
  }
  return false;
}

// A trace file: one another reader claims, a Kineto trace by its name, or a plain .json whose first 4 KiB hold
// Kineto's "traceEvents" key (a scenario's do not).
bool trace_file(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  if (non_kineto_format(file.string()) || ends_with(name, ".json.gz") || ends_with(name, ".pt.trace.json")) return true;
  return ends_with(name, ".json") && names_key(first_bytes(file.string(), 4096), "traceEvents");
}

// A directory where a scenario belongs: a recording (replayed by naming the folder), a folder of trace files (one
// of them), of other JSON files (scenarios?), or none of these.
[[noreturn]] void refuse_directory(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string head = "is a directory, expected a scenario file (JSON)";
  if (fs::exists(fs::path(path) / "run.json", ec) || fs::exists(fs::path(path) / "rank0", ec))
    throw InputError(path, "", head + "; it holds a recording: to replay it, " + scenario_naming(path));
  std::vector<std::string> traces, jsons;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry;  // an entry that cannot be read is passed over, the walk goes on
    if (!it->is_regular_file(entry) || entry) continue;
    if (trace_file(it->path())) traces.push_back(it->path().string());
    else if (ends_with(it->path().filename().string(), ".json")) jsons.push_back(it->path().string());
  }
  std::sort(traces.begin(), traces.end());
  std::sort(jsons.begin(), jsons.end());
  if (!traces.empty())
    throw InputError(path, "", head + "; it holds " + std::to_string(traces.size()) + " trace file" + (traces.size() == 1 ? "" : "s") +
                                   ": to replay one, " + scenario_naming(traces.front()) +
                                   " (the folder instead, when they are the ranks of one job)");
  if (!jsons.empty())
    throw InputError(path, "", head + "; it holds " + std::to_string(jsons.size()) + " other JSON file" + (jsons.size() == 1 ? "" : "s") +
                                   " (scenarios?): give one of them, e.g. " + Json(jsons.front()).dump(-1, ' ', false, Json::error_handler_t::replace));
  throw InputError(path, "", head);
}

}  // namespace

Json read_scenario_document(const std::string& path) {
  std::error_code ec;
  if (!path.empty() && std::filesystem::is_directory(path, ec)) refuse_directory(path);
  if (!path.empty() && std::filesystem::is_regular_file(path, ec)) {
    const std::string head = first_bytes(path, 64 * 1024);
    const auto byte = [&](std::size_t i) { return i < head.size() ? static_cast<unsigned char>(head[i]) : 0u; };
    if (byte(0) == 0x1f && byte(1) == 0x8b)
      throw InputError(path, "", "is gzip-compressed (a trace?), expected a scenario file (JSON); to replay it, " + scenario_naming(path));
    if (const TraceFormat* f = non_kineto_format(path))
      throw InputError(path, "", "is a trace of the " + f->name + " reader (" + f->description +
                                     "), expected a scenario file (JSON); to replay it, " + scenario_naming(path));
    if ((byte(0) == 0xff && byte(1) == 0xfe) || (byte(0) == 0xfe && byte(1) == 0xff))  // Windows PowerShell's default
      throw InputError(path, "", "is UTF-16 text, expected a scenario file in UTF-8 (JSON): save it as UTF-8");
    std::size_t i = head.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // a UTF-8 byte order mark
    while (i < head.size() && std::isspace(byte(i))) ++i;
    if (i < head.size() && (byte(i) < 0x20 || byte(i) >= 0x80))
      throw InputError(path, "", "is a binary file (a trace?), expected a scenario file (JSON); to replay it, " +
                                     scenario_naming(path));
    // a Kineto trace has its "traceEvents" key after a short header: refused before a parse that could take
    // gigabytes (further in, the parsed document below says so)
    if (names_key(head, "traceEvents"))
      throw InputError(path, "traceEvents", "a Kineto trace, expected a scenario file; to replay it, " + scenario_naming(path));
  }
  Json doc = read_json_file(path);
  if (doc.is_object() && doc.contains("traceEvents"))
    throw InputError(path, "traceEvents", "a Kineto trace, expected a scenario file; to replay it, " + scenario_naming(path));
  return doc;
}

Scenario load_scenario(const std::string& path) {
  Json doc = read_scenario_document(path);
  return parse_scenario(doc, path, dirname_of(path));
}

Scenario parse_scenario(const Json& doc, const std::string& file, const std::string& base_dir) {
  JsonReader r(doc, file, "");
  r.only_keys({"name", "description", "trace", "trace_gpu", "gpu", "policy", "switch_latency", "seed", "repeat", "engine",
               "stream_overlap", "output", "synthetic", "cluster", "clock_plan"});
  Scenario s;
  s.file = file;
  s.name = r.string_or("name", "scenario");
  // the name is the default output folder out/<name>: "../x" wrote outside out/, "" straight into it
  if (s.name.empty() || s.name == "." || s.name == ".." || s.name.find('/') != std::string::npos || s.name.find('\\') != std::string::npos)
    r.fail("name", "expected a name usable as a folder (no \"/\", not empty, \".\" or \"..\"), got " + Json(s.name).dump());
  s.description = r.string_or("description", "");
  read_workload(r, base_dir, s);
  if (!s.synthetic.is_null()) {
    // what only a trace replay reads: beside a synthetic job it was accepted and changed nothing
    for (const char* key : {"repeat", "engine", "stream_overlap", "trace_gpu"})
      if (r.has(key)) r.fail(key, "a synthetic job does not take it (it sets how a recorded trace is replayed)");
    if (r.has("output") && r.child("output").has("timeline_interval_s"))
      r.child("output").fail("timeline_interval_s", "a synthetic job writes no timeline (summary.json, timing.json and gpus.csv)");
  }
  if (r.has("cluster")) {
    // A synthetic job reads its own cluster: the top-level one would be ignored without a word.
    if (!s.synthetic.is_null())
      r.fail("cluster", "a synthetic job takes its cluster inside `synthetic` (synthetic.cluster); the top-level `cluster` is for a "
                        "replay of several ranks' traces");
    read_cluster_json(r.child("cluster"), s.cluster);
    s.cluster_given = true;
  }
  s.gpu = model_path(r.string("gpu"), base_dir);
  if (r.has("trace_gpu")) s.trace_gpu = model_path(r.string("trace_gpu"), base_dir);
  read_policy(r, base_dir, s);
  if (r.has("switch_latency")) read_switch_latency(r, s.replay);
  read_run_options(r, base_dir, s);
  return s;
}

}  // namespace dvfs
