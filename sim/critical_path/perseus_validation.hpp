#pragma once
// `dvfs-sim validate --perseus DIR`: every plan N of a Perseus run directory (the artifact's layout:
// N.sched.json = per-rank clocks per pipeline instruction, N.prof.json = per-rank measured iteration
// time and energy and per-micro-batch forward/backward/load times; either may be gzip-compressed),
// predicted from the measured all-max-clock run(s) plus a calibrated GPU model, and compared with
// what was measured; then the time-energy frontier on the same model, against Perseus's own plans.
//
// The prediction (no number of plan N is used to predict plan N):
//  - anchor: the plans whose every instruction ran at the highest clock (0 and 1 in the artifact),
//    iterations after the first (warm-up): per stage, pass and micro-batch the mean measured time;
//    per rank the busy power P_r = (E_r - P_blocking (T - busy_r)) / busy_r from its measured energy;
//  - each computation at the plan's clock: the stage model (time share, V-f curve, power cap) moves
//    the anchor's time and energy (computation_curve.hpp, per pass the model's `computations`);
//  - the iteration: the 1F1B DAG's longest path with the measured data loads as fixed steps, plus
//    what the anchor's measured iteration time holds beyond its DAG (p2p transfers, optimizer step);
//  - energy: computations plus P_blocking for every other GPU-second (Perseus's accounting).
// Two variants: the model as calibrated, and the model with the board's clock ceiling under its
// power limit (the SM clock the board actually ran when the highest clock was asked for) fitted on
// the per-instruction times of the even-numbered plans only: its errors on the odd-numbered plans are
// held out.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/critical_path/frontier.hpp"
#include "sim/critical_path/plan_file.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct PerseusMeasurement {
  std::string file;
  int stages = 0, microbatches = 0;
  // [rank][iteration]; iteration 0 is the warm-up.
  std::vector<std::vector<double>> iteration_s, energy_j;
  // [rank][iteration][micro-batch]; loads summed per micro-batch (the last stage logs two per micro-batch).
  std::vector<std::vector<std::vector<double>>> forward_s, backward_s, load_s;
  double mean_iteration_s() const;  // iterations after the warm-up: the slowest rank's, averaged
  double mean_energy_j() const;     // summed over ranks, averaged
};
PerseusMeasurement load_perseus_measurement(const std::string& prof_json);

struct PerseusRunSet {
  std::string dir;
  std::vector<int> plans;  // plan numbers with both files, ascending
  std::string sched_file(int n) const;
  std::string prof_file(int n) const;
};
PerseusRunSet find_perseus_runs(const std::string& dir);

// The DAG and curves a model predicts a run set with.
struct PerseusPrediction {
  IterationDag dag;
  std::vector<ComputationCurve> curves;  // per node (per stage, pass and micro-batch)
  std::vector<std::vector<int>> node_of;  // [stage][schedule index] -> DAG node
  double p_blocking_w = 0, cap_clock_mhz = 0;
  double anchor_iteration_s = 0, anchor_energy_j = 0, residual_s = 0;
  std::vector<double> busy_power_w;  // per rank, at the anchor
  std::vector<int> anchor_plans;
};

// `min_sm_mhz`: clocks below it stay replayable but are not offered to the frontier solver.
PerseusPrediction build_perseus_prediction(const PerseusRunSet& runs, const GpuModel& model, double p_blocking_w,
                                           double cap_clock_mhz, double min_sm_mhz = 0);
// The lowest clock of the stage profile a model's `computations` were fitted on (its provenance's
// calibration data, under traces/profiles/perseus/), or 0 when it has none: below it the model extrapolates.
double calibrated_min_sm_mhz(const GpuModel& model);
// The options a plan file runs (InputError naming the file and rank for a clock the model lacks).
std::vector<int> perseus_plan_options(const PerseusPrediction& p, const ClockPlanFile& plan, const GpuModel& model);

struct PerseusValidationOptions {
  std::string gpu;             // model name or file; "" = from the directory name (a100... -> a100-sxm4, a40... -> a40)
  double p_blocking_w = -1;    // < 0: the model's idle power (for a100-sxm4 and a40, Perseus's measured blocking power)
  double power_cap_w = 0;      // > 0: replaces the model's power cap (e.g. the board's limit)
  double quantum_s = 1e-3;     // frontier time unit
  double min_sm_mhz = -1;      // frontier clock floor; < 0: calibrated_min_sm_mhz(model); 0: none
  bool frontier = true;        // also solve the frontier and compare with Perseus's plans
  std::string write_plans;     // a directory: our plans in Perseus's N.sched.json format (last variant)
};

// Our plan as a Perseus plan file: a clock per Merak 1F1B instruction (computations' clocks carried over).
ClockPlanFile perseus_plan_file(const PerseusPrediction& p, const IterationPlan& plan);

Json validate_perseus(const std::string& dir, const PerseusValidationOptions& o);
std::string format_perseus_report(const Json& report);

}  // namespace dvfs
