#pragma once
// Per-rank clock plans in the format of the Perseus artifact's N.sched.json (Chung et al., SOSP'24):
//   [{"rank": 0, "power_states": [1410, 1410, 1320, ...]}, {"rank": 1, ...}, ...]
// `power_states` holds one SM clock (MHz) per pipeline *instruction* of the rank, in execution order.
// In the artifact the instructions are those of Merak's 1F1B schedule with merged point-to-point
// transfers (DeepSpeed's TrainSchedule with send/recv pairs fused): per step a transfer, the data load
// on the first and last stage, the forward or backward, and at the end two gradient reductions and
// the optimizer step. Perseus sets a clock per computation; every other instruction carries the clock
// of the computation before it (the first ones, the first computation's). So a 4-stage x 128
// micro-batch plan has 518, 520, 518 and 516 entries, not 2 x 128 (see traces/perseus-runs/PROVENANCE.md).
// A plan may also give exactly one clock per computation (2 x micro-batches x chunks per rank).
#include "sim/core/json_util.hpp"
#include "sim/pipeline/schedule.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct RankClockPlan {
  int rank = 0;
  std::vector<double> power_states_mhz;
};

struct ClockPlanFile {
  std::string file;
  std::vector<RankClockPlan> ranks;  // in rank order 0, 1, ...
};

// Reads a plan (.json, or gzip-compressed); InputError(file, "[r].field", expected) on anything else.
ClockPlanFile read_clock_plan(const std::string& path);
Json clock_plan_to_json(const ClockPlanFile& plan);
void write_clock_plan(const std::string& path, const ClockPlanFile& plan);

enum class MerakInstruction { p2p, load, forward, backward, reduce, step };
// The instruction list of one stage in Merak's merged-transfer 1F1B schedule.
std::vector<MerakInstruction> merak_instructions(int stage, int stages, int microbatches);

// How a rank's power_states map to its computations.
enum class PlanLayout { per_computation, merak_1f1b };
const char* to_string(PlanLayout l);

// Per stage: the clock of each computation in the stage's schedule order (schedule_ops). Throws
// InputError naming the rank when the plan has the wrong number of ranks, or a rank's entry count is
// neither one per computation nor (1F1B, one chunk) Merak's instruction count.
std::vector<std::vector<double>> computation_clocks(const ClockPlanFile& plan, int stages, int microbatches, int chunks,
                                                    PipelineSchedule schedule, PlanLayout* layout = nullptr);

// The plan a runtime like Perseus's reads: one entry per Merak instruction (1F1B) or per computation.
ClockPlanFile plan_from_computation_clocks(const std::vector<std::vector<double>>& clocks, int stages, int microbatches,
                                           PlanLayout layout);

}  // namespace dvfs
