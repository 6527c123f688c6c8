#include "sim/control/control_scenario.hpp"

#include "models/src/model_registry.hpp"
#include "sim/control/job_clock_plan.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>

namespace dvfs {

namespace {

bool boolean(const JsonReader& r, const char* key, bool fallback) {
  if (!r.has(key)) return fallback;
  if (!r.raw(key).is_boolean()) r.fail(key, "expected true or false");
  return r.raw(key).get<bool>();
}

int int_in(const JsonReader& r, const char* key, int fallback, long lo, long hi) {
  if (!r.has(key)) return fallback;
  const long v = r.integer(key);
  if (v < lo || v > hi) r.fail(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
  return static_cast<int>(v);
}

void int_range(const JsonReader& r, const char* key, int& lo, int& hi) {
  if (!r.has(key)) return;
  const Json& v = r.raw(key);
  if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer() || v[0].get<long>() < 1 ||
      v[1].get<long>() < v[0].get<long>() || v[1].get<long>() > 1000000)
    r.fail(key, "expected [lowest, highest], integers with 1 <= lowest <= highest");
  lo = v[0].get<int>();
  hi = v[1].get<int>();
}

}  // namespace

GrpoJobSpec read_control_job(const JsonReader& r, std::size_t index) {
  r.only_keys({"name", "kind", "model", "tp", "dp", "prompts_per_step", "group_size", "group_size_range", "concurrency",
               "concurrency_range", "prompt_tokens", "max_response_tokens", "response_median_tokens", "response_sigma",
               "train_micro_batch", "reference_forward", "decode_host_overhead_s", "decode_allreduce_s", "step_host_s",
               "start_offset_s", "start_offset_spread_s", "coalesce_span_s", "seed"});
  GrpoJobSpec j;
  j.json_path = r.path();
  j.name = r.string_or("name", "job" + std::to_string(index));
  const std::string kind = r.string_or("kind", "grpo");
  if (kind == "training") j.generation = false;
  else if (kind != "grpo") r.fail("kind", "expected grpo or training, got \"" + kind + "\"");
  j.model = r.string_or("model", j.model);
  grpo_model_preset(j.model, r.file(), r.field("model"));
  j.tp = int_in(r, "tp", 1, 1, 64);
  j.dp = int_in(r, "dp", 1, 1, 65536);
  j.prompts_per_step = int_in(r, "prompts_per_step", j.prompts_per_step, 1, 1000000);
  int_range(r, "group_size_range", j.group_size_min, j.group_size_max);
  int_range(r, "concurrency_range", j.concurrency_min, j.concurrency_max);
  j.group_size = int_in(r, "group_size", std::clamp(j.group_size, j.group_size_min, j.group_size_max), j.group_size_min, j.group_size_max);
  j.concurrency = int_in(r, "concurrency", std::clamp(j.concurrency, j.concurrency_min, j.concurrency_max), j.concurrency_min, j.concurrency_max);
  j.prompt_tokens = int_in(r, "prompt_tokens", j.prompt_tokens, 1, 1 << 20);
  j.max_response_tokens = int_in(r, "max_response_tokens", j.max_response_tokens, 1, 1 << 20);
  // A median beyond the longest response (1e9 of 1024 tokens) or a sigma of 1e300 drew every response at the cap.
  if (r.has("response_median_tokens")) j.response_median_tokens = r.number_in("response_median_tokens", 1, j.max_response_tokens, "tokens (1 to max_response_tokens)");
  if (r.has("response_sigma")) j.response_sigma = r.number_in("response_sigma", 0, 10, "(a lognormal's sigma)");
  j.train_micro_batch = int_in(r, "train_micro_batch", j.train_micro_batch, 1, 4096);
  j.reference_forward = boolean(r, "reference_forward", j.reference_forward);
  if (r.has("decode_host_overhead_s")) j.decode_host_overhead_s = r.number_in("decode_host_overhead_s", 0, 10, "s");
  if (r.has("decode_allreduce_s")) j.decode_allreduce_s = r.number_in("decode_allreduce_s", 0, 10, "s");
  if (r.has("step_host_s")) j.step_host_s = r.number_in("step_host_s", 0, 3600, "s");
  if (r.has("start_offset_s")) j.start_offset_s = r.number_in("start_offset_s", 0, kMaxControlDurationS, "s");
  if (r.has("start_offset_spread_s")) j.start_offset_spread_s = r.number_in("start_offset_spread_s", 0, kMaxControlDurationS, "s");
  if (r.has("coalesce_span_s")) j.coalesce_span_s = r.number_in("coalesce_span_s", 1e-6, 60, "s");
  if (r.has("seed")) {
    const long s = r.integer("seed");
    if (s < 0) r.fail("seed", "expected an integer >= 0");
    j.seed = static_cast<std::uint64_t>(s);
  }
  return j;
}

namespace {

BudgetSpec read_budget(const JsonReader& r, std::size_t index) {
  r.only_keys({"name", "scope", "gpus_per_rack", "budget_w", "budget_w_per_gpu", "budget_frac_of_tdp", "controlled"});
  BudgetSpec b;
  b.name = r.string_or("name", "budget" + std::to_string(index));
  b.scope = r.string_or("scope", "fleet");
  if (b.scope != "gpu" && b.scope != "node" && b.scope != "rack" && b.scope != "fleet")
    r.fail("scope", "expected gpu, node, rack or fleet, got \"" + b.scope + "\"");
  b.gpus_per_rack = int_in(r, "gpus_per_rack", 32, 1, 1000000);
  const int given = r.has("budget_w") + r.has("budget_w_per_gpu") + r.has("budget_frac_of_tdp");
  if (given != 1) r.fail("budget_w", "expected exactly one of budget_w, budget_w_per_gpu, budget_frac_of_tdp");
  if (r.has("budget_w")) b.budget_w = r.number("budget_w");
  if (r.has("budget_w_per_gpu")) b.budget_w_per_gpu = r.number("budget_w_per_gpu");
  if (r.has("budget_frac_of_tdp")) b.budget_frac_of_tdp = r.number("budget_frac_of_tdp");
  const char* key = r.has("budget_w") ? "budget_w" : r.has("budget_w_per_gpu") ? "budget_w_per_gpu" : "budget_frac_of_tdp";
  if (!(b.budget_w + b.budget_w_per_gpu + b.budget_frac_of_tdp > 0)) r.fail(key, "expected a budget > 0");
  if (b.budget_frac_of_tdp > 10) r.fail("budget_frac_of_tdp", "expected a fraction of TDP (e.g. 0.8)");
  b.controlled = boolean(r, "controlled", index == 0);
  return b;
}

ControllerSpec read_controller(const JsonReader& r, const std::string& base_dir) {
  r.only_keys({"name", "margin_frac", "down_gain", "up_step_frac", "kp", "ki", "kd", "headroom_w", "policy_file", "actions", "budget_pct"});
  ControllerSpec c;
  c.name = r.string_or("name", c.name);
  c.margin_frac = r.number_or("margin_frac", c.margin_frac);
  c.down_gain = r.number_or("down_gain", c.down_gain);
  c.up_step_frac = r.number_or("up_step_frac", c.up_step_frac);
  c.kp = r.number_or("kp", c.kp);
  c.ki = r.number_or("ki", c.ki);
  c.kd = r.number_or("kd", c.kd);
  c.headroom_w = r.number_or("headroom_w", c.headroom_w);
  c.budget_pct = r.number_or("budget_pct", c.budget_pct);
  if (r.has("policy_file")) c.policy_file = normalize_path(join_path(base_dir, r.string("policy_file")));
  if (r.has("actions")) {
    const Json& a = r.raw("actions");
    const bool just_target = a == Json::array({"power_target"}), both = a == Json::array({"power_target", "concurrency"});
    if (!just_target && !both) r.fail("actions", "expected [\"power_target\"] or [\"power_target\", \"concurrency\"]");
    c.action.concurrency = both;
  }
  return c;
}

}  // namespace

bool is_control_scenario(const std::string& path) { return is_json_object_with_key(path, "control"); }

ControlScenario load_control_scenario(const std::string& path) {
  return parse_control_scenario(read_json_file(path), path, dirname_of(path));
}

ControlScenario parse_control_scenario(const Json& doc, const std::string& file, const std::string& base_dir) {
  JsonReader top(doc, file, "");
  top.only_keys({"name", "description", "gpu", "control"});
  ControlScenario sc;
  sc.file = file;
  sc.name = top.string_or("name", "power-budget");
  sc.description = top.string_or("description", "");
  sc.gpu = top.string_or("gpu", sc.gpu);
  const JsonReader c = top.child("control");
  c.only_keys({"interval_s", "duration_s", "seed", "telemetry", "caps", "jobs", "budgets", "controller", "reward", "cluster"});
  if (c.has("interval_s")) sc.interval_s = c.positive("interval_s");
  if (c.has("duration_s")) sc.duration_s = c.positive("duration_s");
  if (sc.duration_s < sc.interval_s) c.fail("duration_s", "expected at least one control interval");
  if (c.has("seed")) {
    const long s = c.integer("seed");
    if (s < 0) c.fail("seed", "expected an integer >= 0");
    sc.seed = static_cast<std::uint64_t>(s);
  }
  if (c.has("telemetry")) {
    const JsonReader t = c.child("telemetry");
    t.only_keys({"field", "bin_s", "cap_latency_s"});
    const std::string f = t.string_or("field", "average");
    if (!nvml_field_from_string(f, sc.field)) t.fail("field", "expected average, instant, energy-counter or exact, got \"" + f + "\"");
    if (t.has("bin_s")) sc.bin_s = t.positive("bin_s");
    if (t.has("cap_latency_s")) sc.cap_latency_s = t.non_negative("cap_latency_s");
    if (sc.cap_latency_s > kMaxCapLatencyS) {  // 1e9 s: a cap that never takes effect, reported as a controlled run
      std::ostringstream os;
      os << "expected at most " << kMaxCapLatencyS << " s (README \"Limits and bad input\"), got " << sc.cap_latency_s;
      t.fail("cap_latency_s", os.str());
    }
  }
  if (c.has("caps")) {
    const JsonReader k = c.child("caps");
    k.only_keys({"min_w", "max_w"});
    if (k.has("min_w")) sc.min_cap_w = k.positive("min_w");
    if (k.has("max_w")) sc.max_cap_w = k.positive("max_w");
    // As the native policy's power_cap_w: a cap at or below idle power can never be met, and above the board's limit
    // the board does not go (max_w 1e9 let the fleet reach 111 % of nameplate; 1e-6 W was clamped without a word).
    const GpuModel m = load_gpu_model(sc.gpu, file, "gpu");
    for (const char* key : {"min_w", "max_w"}) {
      if (!k.has(key)) continue;
      const std::string problem = m.power_cap_problem(k.number(key));
      if (!problem.empty()) k.fail(key, problem);
    }
    // The session's defaults where one is not given: min 200 W (or the board's limit below it), max the board's limit.
    const double lo = sc.min_cap_w > 0 ? sc.min_cap_w : std::min(200.0, m.power_cap_w());
    const double hi = sc.max_cap_w > 0 ? sc.max_cap_w : m.power_cap_w();
    if (lo > hi) {
      std::ostringstream os;
      os << "expected min_w <= max_w (min_w " << lo << " W" << (sc.min_cap_w > 0 ? "" : ", the default") << ", max_w " << hi << " W"
         << (sc.max_cap_w > 0 ? "" : ", the default") << ")";
      k.fail(sc.min_cap_w > 0 ? "min_w" : "max_w", os.str());
    }
  }
  const JsonReader jobs = c.child("jobs");
  if (!jobs.is_array() || jobs.size() == 0) c.fail("jobs", "expected a list of jobs");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    sc.jobs.push_back(read_control_job(jobs.at(i), i));
    for (std::size_t k = 0; k < i; ++k)  // results are reported per job name: two of one name read as one
      if (sc.jobs[k].name == sc.jobs[i].name)
        jobs.at(i).fail("name", "expected a name no other job has (\"" + sc.jobs[i].name + "\" is jobs[" + std::to_string(k) + "]'s)");
  }
  if (c.has("budgets")) {
    const JsonReader b = c.child("budgets");
    if (!b.is_array()) c.fail("budgets", "expected a list of budgets");
    for (std::size_t i = 0; i < b.size(); ++i) sc.budgets.push_back(read_budget(b.at(i), i));
  }
  if (c.has("controller")) sc.controller = read_controller(c.child("controller"), base_dir);
  if (c.has("reward")) {
    const JsonReader w = c.child("reward");
    w.only_keys({"tokens_scale", "violation_penalty", "excess_penalty"});
    if (w.has("tokens_scale")) sc.reward.tokens_scale = w.positive("tokens_scale");
    if (w.has("violation_penalty")) sc.reward.violation_penalty = w.non_negative("violation_penalty");
    if (w.has("excess_penalty")) sc.reward.excess_penalty = w.non_negative("excess_penalty");
  }
  if (c.has("cluster")) read_cluster_json(c.child("cluster"), sc.cluster);
  make_controller(sc.controller, file);  // checks the name, the parameters and a policy file now
  check_controller_budgets(sc, sc.controller);
  check_control_timing(sc.gpu, sc.interval_s, sc.bin_s, sc.duration_s, file, "control.interval_s", "control.telemetry.bin_s",
                       "control.duration_s");
  return sc;
}

void check_controller_budgets(const ControlScenario& sc, const ControllerSpec& controller) {
  if (controller.name == "uncontrolled" || controller.name == "per-kernel") return;
  for (const BudgetSpec& b : sc.budgets)
    if (b.controlled) return;
  throw InputError(sc.file, "control.budgets",
                   "the " + controller.name + " controller needs at least one budget with \"controlled\": true (" +
                       (sc.budgets.empty() ? "none given" : "none of " + std::to_string(sc.budgets.size()) + " is controlled") +
                       "); use the uncontrolled controller to run without one");
}

void set_control_duration(ControlScenario& sc, double duration_s, const std::string& field) {
  if (!(duration_s >= sc.interval_s)) throw InputError(field, "", "expected at least one control interval (" + std::to_string(sc.interval_s) + " s)");
  sc.duration_s = duration_s;
  check_control_timing(sc.gpu, sc.interval_s, sc.bin_s, sc.duration_s, sc.file, "control.interval_s", "control.telemetry.bin_s", field);
}

void check_control_timing(const std::string& gpu, double interval_s, double bin_s, double duration_s, const std::string& file,
                          const std::string& interval_field, const std::string& bin_field, const std::string& duration_field) {
  check_control_timing(load_gpu_model(gpu, file, "gpu"), interval_s, bin_s, duration_s, file, interval_field, bin_field, duration_field);
}

SessionSetup make_session_setup(const ControlScenario& sc, const ControllerSpec& controller) {
  SessionSetup s;
  s.model = std::make_shared<const GpuModel>(load_gpu_model(sc.gpu, sc.file, "gpu"));
  const GpuModel& m = *s.model;
  // Prepared programs are cached per process: an environment resets many times.
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const PreparedGrpoJob>> cache;
  for (std::size_t i = 0; i < sc.jobs.size(); ++i) {
    const GrpoJobSpec& j = sc.jobs[i];
    const std::string key = m.source_file() + "|" + Json{{"n", j.name}, {"m", j.model}, {"tp", j.tp}, {"dp", j.dp}, {"p", j.prompt_tokens},
                                                         {"r", j.max_response_tokens}, {"mb", j.train_micro_batch}, {"c", j.concurrency_max},
                                                         {"h", j.decode_host_overhead_s}, {"a", j.decode_allreduce_s}, {"s", j.coalesce_span_s},
                                                         {"g", j.generation}}.dump();
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it == cache.end())
      it = cache.emplace(key, std::make_shared<const PreparedGrpoJob>(prepare_grpo_job(j, m, sc.file, j.json_path.empty() ? "control.jobs[" + std::to_string(i) + "]" : j.json_path))).first;
    // The cached programs with this scenario's own knobs, lengths and seeds.
    auto job = std::make_shared<PreparedGrpoJob>(*it->second);
    job->spec = j;
    s.jobs.push_back(std::move(job));
  }
  if (controller.name == "per-kernel")
    for (const auto& job : s.jobs) s.plans.push_back(plan_job_clocks(*job, m, controller.budget_pct));
  s.interval_s = sc.interval_s;
  s.duration_s = sc.duration_s;
  s.bin_s = sc.bin_s;
  s.field = sc.field;
  s.cap_latency_s = sc.cap_latency_s;
  s.min_cap_w = sc.min_cap_w;
  s.max_cap_w = sc.max_cap_w;
  s.seed = sc.seed;
  s.cluster = resolve_bandwidths(sc.cluster, m.specs().interconnect_gbs * 1e9, m.specs().nic_gbs * 1e9);
  int gpus = 0;
  for (const GrpoJobSpec& j : sc.jobs) gpus += j.gpus();
  for (std::size_t bi = 0; bi < sc.budgets.size(); ++bi) {
    const BudgetSpec& b = sc.budgets[bi];
    const int size = b.scope == "gpu" ? 1 : b.scope == "node" ? s.cluster.gpus_per_node : b.scope == "rack" ? b.gpus_per_rack : gpus;
    for (int first = 0, k = 0; first < gpus; first += size, ++k) {
      PowerBudget pb;
      pb.name = b.scope == "fleet" ? b.name : b.name + "[" + std::to_string(k) + "]";
      pb.level = b.scope;
      for (int g = first; g < std::min(gpus, first + size); ++g) pb.gpus.push_back(g);
      const double n = static_cast<double>(pb.gpus.size());
      pb.budget_w = b.budget_w > 0 ? b.budget_w : b.budget_w_per_gpu > 0 ? b.budget_w_per_gpu * n : b.budget_frac_of_tdp * m.power_cap_w() * n;
      pb.controlled = b.controlled;
      s.budgets.push_back(std::move(pb));
    }
  }
  return s;
}

}  // namespace dvfs
