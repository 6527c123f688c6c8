// The online family: policies that decide while the replay runs, one instance per GPU.
#include "sim/policies/registry.hpp"

#include "sim/policies/native_governor.hpp"
#include "sim/policies/policy.hpp"
#include "sim/core/errors.hpp"

namespace dvfs {

namespace {

PolicyEntry max_policy() {
  PolicyEntry e;
  e.name = "max";
  e.compare_rank = 1;
  e.summary = "the highest supported clocks, never changed (a clock-locked idealisation without power cap)";
  e.make = [](const PolicySpec&, const GpuModel& model, const std::string&) -> PolicyFactory {
    return [&model](int) { return std::make_unique<MaxPolicy>(model); };
  };
  return e;
}

PolicyEntry static_policy() {
  PolicyEntry e;
  e.name = "static";
  e.summary = "fixed SM and memory clocks from the scenario (sm_mhz, mem_mhz; memory defaults to its top clock)";
  e.keys = {"sm_mhz", "mem_mhz"};
  e.parse = [](const JsonReader& scenario, const JsonReader* object, PolicySpec& spec) {
    if (!object) scenario.fail("policy", "the static policy needs {\"name\": \"static\", \"sm_mhz\": ..., \"mem_mhz\": ...}");
    spec.clocks = ClockPair{object->positive("sm_mhz"), object->number_or("mem_mhz", 0)};
  };
  e.make = [](const PolicySpec& spec, const GpuModel& model, const std::string& scenario_file) -> PolicyFactory {
    ClockPair c = *spec.clocks;
    if (c.mem_mhz <= 0) c.mem_mhz = model.max_mem_mhz();
    model.check_supported(c, scenario_file, "policy");
    return [c](int) { return std::make_unique<StaticPolicy>(c); };
  };
  return e;
}

PolicyEntry native_policy() {
  PolicyEntry e;
  e.name = "native";
  e.summary = "the GPU's own governor: boost clocks, throttled by the power-cap firmware loop (the baseline)";
  e.keys = {"power_cap_w"};
  e.parse = [](const JsonReader&, const JsonReader* object, PolicySpec& spec) {
    if (object && object->has("power_cap_w")) spec.power_cap_w = object->positive("power_cap_w");
  };
  e.make = [](const PolicySpec& spec, const GpuModel& model, const std::string& scenario_file) -> PolicyFactory {
    const double cap = spec.power_cap_w;
    // A cap at or below idle power can never be met (the firmware would sit at the lowest clock and still
    // exceed it); above the model's own cap the board's limit (and the model's calibration) ends.
    const std::string problem = cap > 0 ? model.power_cap_problem(cap) : "";
    if (!problem.empty()) throw InputError(scenario_file, "policy.power_cap_w", problem);
    return [&model, cap](int) { return std::make_unique<NativeGovernor>(model, cap); };
  };
  return e;
}

PolicyEntry recorded_policy() {
  PolicyEntry e;
  e.name = "recorded";
  e.summary = "the clocks a recording's telemetry reported for each kernel (isolates the power model from the governor)";
  e.make = [](const PolicySpec&, const GpuModel& model, const std::string&) -> PolicyFactory {
    return [&model](int) { return std::make_unique<RecordedClockPolicy>(model); };
  };
  return e;
}

}  // namespace

// Adding a replay policy: write its class and its entry function in a new file, then add one line here
// (docs/adding-a-policy.md has a worked example).
void register_replay_policies(PolicyRegistry& r) {
  r.add(max_policy());
  r.add(static_policy());
  r.add(native_policy());
  r.add(recorded_policy());
}

}  // namespace dvfs
