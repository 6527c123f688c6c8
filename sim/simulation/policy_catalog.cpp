#include "sim/simulation/policy_catalog.hpp"

#include "sim/critical_path/pipeline_plans.hpp"
#include "sim/kareus/kareus.hpp"
#include "sim/planning/planned_policies.hpp"

namespace dvfs {

const PolicyRegistry& policy_registry() {
  static const PolicyRegistry registry = [] {
    PolicyRegistry r;
    register_replay_policies(r);         // sim/policies/replay_policies.cpp
    register_planned_policies(r);        // sim/planning/planned_policies.cpp
    register_critical_path_policies(r);  // sim/critical_path/pipeline_plans.cpp
    register_kareus_policy(r);           // sim/kareus/kareus.cpp
    return r;
  }();
  return registry;
}

std::string policy_names() { return join_names(policy_registry().names()); }

}  // namespace dvfs
