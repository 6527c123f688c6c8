#include "sim/policies/policy_factory.hpp"

#include "sim/core/errors.hpp"

namespace dvfs {

PolicyFactory make_policy_factory(const PolicySpec& spec, const GpuModel& model, const std::string& scenario_file) {
  static const PolicyRegistry online = [] {
    PolicyRegistry r;
    register_replay_policies(r);
    return r;
  }();
  const PolicyEntry* e = online.find(spec.name);
  if (!e)
    throw InputError(scenario_file, "policy", "policy \"" + spec.name + "\" is not a replay-time policy (expected one of: " +
                                                  join_names(online.names()) + ")");
  return e->make(spec, model, scenario_file);
}

}  // namespace dvfs
