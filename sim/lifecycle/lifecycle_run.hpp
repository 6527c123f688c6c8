#pragma once
// The lifecycle scenario kind ({"lifecycle": ...}, docs/lifecycle.md): a whole training job's phases on
// SimGrid (lifecycle_sim.hpp), training steps replayed from a recording or given, then each policy of the
// scenario across the phases, with what it saves. Results per phase: time, CPU, GPU, storage and network
// energy and the share of each (all model outputs).
#include "sim/core/json_util.hpp"
#include "sim/lifecycle/lifecycle_spec.hpp"

#include <string>

namespace dvfs {

// The summary (summary.json): {"kind": "lifecycle", "phases": [...], "by_kind": {...}, "totals": {...}, "policies": [...]}.
Json run_lifecycle(const Json& doc, const std::string& file, const std::string& base_dir);
std::string format_lifecycle_run(const Json& summary);

}  // namespace dvfs
