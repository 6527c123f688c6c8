#pragma once
#include "sim/policies/registry.hpp"

namespace dvfs {
// A replay-time (online) policy's per-GPU factory: looks the spec's name up among the online family
// (register_replay_policies), checks the spec against the model (clock support, naming the scenario
// field) and returns a factory making one policy instance per GPU.
PolicyFactory make_policy_factory(const PolicySpec& spec, const GpuModel& model, const std::string& scenario_file);
}  // namespace dvfs
