#pragma once
// The whole policy registry: the one place where every family registers (sim/policies/registry.hpp).
#include "sim/policies/registry.hpp"

#include <string>

namespace dvfs {

// Every policy a scenario can name, in this order: the online family, the planned family, the
// pipeline family. Built on first use.
const PolicyRegistry& policy_registry();
// "max, static, ..., critical-path+per-kernel": every name, for messages and Python's policy_names().
std::string policy_names();

}  // namespace dvfs
