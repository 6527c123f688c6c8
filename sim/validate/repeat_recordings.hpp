#pragma once
// Kernel loops recorded more than once (split repeat_held_out, twenty-fifth round; repeat_loops, twenty-fourth): each
// recording of a loop replayed from its own trace against the model, the spread of the measured steady power across
// recordings, and the held-out native error scored against all of a loop's recordings, printed beside the figure of
// record (each loop's one shipped recording), never in its place. Nothing here fits anything.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"

#include <functional>
#include <ostream>
#include <string>

namespace dvfs {

// The split rule's regime of a loop, by its name: tensor (gemm-, attn-), convolution (conv-), duty_and_launch_bound
// (duty-, tiny-), stores_and_copies (memset-, copy-, fill-, convert-), streaming_and_reductions (every other loop).
std::string loop_regime(const std::string& loop);

// One row per loop of `loops` (the power suite's rows: loop, kind, measured_mean_power_w, native.energy_error_pct;
// the measurement of record) with at least one more recording in the split's `repeat_held_out.folders`
// (folder/<loop>/run.json): {loop, kind, regime, recordings: [{folder, measured_mean_power_w,
// native_energy_error_pct}], spread_pct, mean_native_energy_error_pct}. InputError naming the split file when the
// block or a folder is malformed or missing.
Json repeated_loop_rows(const Json& split_doc, const std::string& split_path, const Json& loops, const GpuModel& model);

// Pure: the held-out figure of record and the same loops scored against all their recordings (a repeated loop's
// mean error), mean |error| and the count within 8 %; per regime, the median and largest spread of the repeated
// held-out loops.
Json repeated_loop_summary(const Json& loops, const Json& rows);

void format_repeated_loops(std::ostream& os, const Json& rows, const Json& summary);

// Whole workloads recorded again (split repeat_missed_workloads: its `folder`, named once recorded, holds
// <folder>/<name> for each of its `workloads`, "set/name" as the shipped recording traces/recordings/set/name):
// one row per workload, {recording, repeat: the same figures of the repeat, priced by `price` (a path relative to
// the data directory -> validate --models' workload row), shift_pct: the repeat's measured mean power against the
// shipped one's}. The shipped row is taken from `workload_rows` (matched by "recording"). No `folder`: no rows.
// InputError naming the split file when a listed workload or its repeat is missing.
Json repeated_workload_rows(const Json& split_doc, const std::string& split_path, const Json& workload_rows,
                            const std::function<Json(const std::string&)>& price);
void format_repeated_workloads(std::ostream& os, const Json& rows);

}  // namespace dvfs
