#pragma once
// Kernel loops recorded on another card than the one a model was fit on (split h100_held_out_loops, twenty-fifth
// round: the H200 suite's held-out loops recorded on an H100), each replayed under that card's shipped model: the
// model's measured error on data it never saw. Nothing here fits anything.
#include "sim/core/json_util.hpp"

#include "models/src/gpu_model.hpp"

#include <functional>
#include <ostream>
#include <string>

namespace dvfs {

// The split block `block` ({model, folder, idle_folders, loops}): one row per loop (validate_kernel_loop's figures
// plus kind "held-out" and the split rule's regime), idle rows (the model's idle power against each measured idle
// window), and a summary: native and recorded-clock |energy error| (mean, median, p90, max; within 8 % / 5 %) and
// the native mean per regime. No such block: null. InputError naming the split file for a malformed block or a
// missing recording.
Json sibling_loop_checks(const Json& split_doc, const std::string& split_path, const char* block);

void format_sibling_loops(std::ostream& os, const Json& checks);

// Whole workloads recorded on another card (split h100_whole_workloads, twenty-seventh round: blind-set workloads
// recorded on an H100): the block {model, workloads, folder once recorded}; each <folder>/<name> priced by
// `price(relative path, model)` (validate --models' workload row), beside the same workload's row on the card the
// model's parent was fit on where `home_rows` holds one (matched by name). Summary: native, recorded-clock and
// shapes-withheld |total energy error| (within 8 %). No block or no folder yet: null. InputError naming the split
// file for a malformed block or a missing recording.
Json sibling_workload_checks(const Json& split_doc, const std::string& split_path, const char* block, const Json& home_rows,
                             const std::function<Json(const std::string&, const GpuModel&)>& price);

void format_sibling_workloads(std::ostream& os, const Json& checks);

}  // namespace dvfs
