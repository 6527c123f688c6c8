#include "sim/policies/policy_factory.hpp"

#include "sim/core/errors.hpp"
#include "sim/policies/native_governor.hpp"

namespace dvfs {

PolicyFactory make_policy_factory(const PolicySpec& spec, const GpuModel& model, const std::string& scenario_file) {
  if (spec.name == "max") return [&model](int) { return std::make_unique<MaxPolicy>(model); };
  if (spec.name == "native") {
    double cap = spec.power_cap_w;
    return [&model, cap](int) { return std::make_unique<NativeGovernor>(model, cap); };
  }
  if (spec.name == "recorded") return [&model](int) { return std::make_unique<RecordedClockPolicy>(model); };
  if (spec.name == "static") {
    ClockPair c = *spec.clocks;
    if (c.mem_mhz <= 0) c.mem_mhz = model.max_mem_mhz();
    model.check_supported(c, scenario_file, "policy");
    return [c](int) { return std::make_unique<StaticPolicy>(c); };
  }
  throw InputError(scenario_file, "policy", "policy \"" + spec.name + "\" is not a replay-time policy (expected one of: max, static, native, recorded)");
}

}  // namespace dvfs
