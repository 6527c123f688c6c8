#pragma once
// The workload behind a per-frequency stage profile (traces/profiles/perseus/stage_workloads.json):
// for each pipeline stage of a workload, the transformer shape one GPU runs, so each computation's
// FLOPs and bytes can be counted (models/src/computation_work.hpp).
#include "models/src/computation_work.hpp"

#include <map>
#include <string>

namespace dvfs {

// Stage index -> what that stage runs. Bad input: InputError naming the file and field.
using StageWorkload = std::map<int, TransformerStage>;

// `workload` is a key of the file's "workloads" (e.g. "gpt3-175b", the profile file's name before '+').
// `recompute_override`: -1 keeps the file's value, 0 / 1 forces it.
StageWorkload load_stage_workload(const std::string& file, const std::string& workload, int recompute_override = -1);

}  // namespace dvfs
