#pragma once
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"

namespace dvfs {
// Checks the spec against the model (clock support, naming the scenario field) and returns a factory
// making one policy instance per GPU.
PolicyFactory make_policy_factory(const PolicySpec& spec, const GpuModel& model, const std::string& scenario_file);
}  // namespace dvfs
