#pragma once
// `dvfs-sim validate --perseus DIR`: every plan N of a Perseus run directory (the artifact's layout:
// N.sched.json = per-rank clocks per pipeline instruction, N.prof.json = per-rank measured iteration
// time and energy and per-micro-batch forward/backward/load times; either may be gzip-compressed),
// predicted from the measured all-max-clock run(s) plus a calibrated GPU model, and compared with
// what was measured; then the time-energy frontier on the same model, against Perseus's own plans.
//
// First, the models-only prediction (issue 22): no number of the run set's N.prof.json is read to predict; the
// anchor (every computation at the highest requested clock, what lies outside the computations, busy power)
// comes from the workload and its default-settings run (perseus_workload.hpp) and the GPU model's own capped
// clock; models/calibration/perseus-split.json names the run sets no fit may see. Then the fitted variants,
// each labelled "fitted on this run set" with the plans it saw:
// The measured-anchor prediction (no number of plan N is used to predict plan N):
//  - anchor: the plans whose every instruction ran at the highest clock (0 and 1 in the artifact),
//    iterations after the first (warm-up): per stage, pass and micro-batch the mean measured time;
//    per rank the busy power P_r = (E_r - P_blocking (T - busy_r)) / busy_r from its measured energy;
//  - each computation at the plan's clock: the stage model (time share, V-f curve, power cap) moves
//    the anchor's time and energy (computation_curve.hpp, per pass the model's `computations`);
//  - the iteration: the 1F1B DAG's longest path with the measured data loads as fixed steps, plus
//    what the anchor's measured iteration time holds beyond its DAG (p2p transfers, optimizer step);
//  - energy: computations plus P_blocking for every other GPU-second (Perseus's accounting).
// Variants: the model as calibrated; the model with one clock ceiling for every board (the SM clock a
// board actually ran when the highest was asked for, under its power limit), the model's time shares
// kept ("cap-clock fit", no frontier); and each board's own ceiling with one pooled time share of this
// run set's computations ("board fit"). The fits see only the measured per-computation times of the
// even-numbered plans, never energy: the errors on the odd-numbered plans are held out. Why the board
// fit matters for energy: the anchor's busy power is scaled by g(f_e) / g(f_e at the anchor), so the
// clock the anchor really ran at sets every plan's predicted power (docs/design-notes.md,
// "Critical-path DVFS"). Per rank, each variant also reports the mean energy error over the plans.
#include "models/src/gpu_model.hpp"
#include "sim/core/json_util.hpp"
#include "sim/critical_path/frontier.hpp"
#include "sim/critical_path/perseus_workload.hpp"
#include "sim/critical_path/plan_file.hpp"
#include "sim/pipeline/perseus_runs.hpp"

#include <map>
#include <string>
#include <vector>

namespace dvfs {

struct PerseusRunSet {
  std::string dir;
  int stages = 0;  // > 0: pipeline stages of a 3D run set; its ranks are folded to them (fold_to_stages)
  std::vector<int> plans;  // plan numbers with both files, ascending
  std::vector<int> unmeasured;  // plans with a schedule and no N.prof.json beside it (not compared; reported)
  std::vector<int> unscheduled;  // measurements N.prof.json with no schedule beside them (not compared; reported)
  std::string sched_file(int n) const;
  std::string prof_file(int n) const;
  // Plan n's files, each read and checked once (on first use) however often a validation visits the plan.
  const ClockPlanFile& schedule(int n) const;
  const PerseusMeasurement& measurement(int n) const;

 private:
  mutable std::map<int, ClockPlanFile> schedules_;
  mutable std::map<int, PerseusMeasurement> measurements_;
};
PerseusRunSet find_perseus_runs(const std::string& dir);

// The DAG and curves a model predicts a run set with.
struct PerseusPrediction {
  IterationDag dag;
  std::vector<ComputationCurve> curves;  // per node (per stage, pass and micro-batch)
  std::vector<std::vector<int>> node_of;  // [stage][schedule index] -> DAG node
  double p_blocking_w = 0, cap_clock_mhz = 0;
  double time_sm = -1;  // the computations' time share used; < 0: the model's own per pass
  std::vector<double> rank_cap_clock_mhz;  // per rank, when each board has its own ceiling (else empty)
  double anchor_iteration_s = 0, anchor_energy_j = 0, residual_s = 0;
  std::vector<double> busy_power_w;  // per rank, at the anchor
  std::vector<double> busy_share;    // per rank, at the anchor: computation time / iteration time
  std::vector<int> anchor_plans;  // measured anchor plans; empty for the models-only anchor
  int gpus_per_stage = 1;          // a 3D run's data- and tensor-parallel GPUs per stage (energies x this)
  std::string anchor_file;
};

// The measured anchor: the plans whose every instruction ran at the highest clock, iterations after the warm-up.
PerseusAnchor measured_anchor(const PerseusRunSet& runs, const GpuModel& model, double p_blocking_w);
PerseusPrediction build_perseus_prediction(const PerseusAnchor& anchor, const GpuModel& model, double p_blocking_w,
                                           double cap_clock_mhz, double min_sm_mhz = 0, double time_sm = -1,
                                           const std::vector<double>& rank_cap_clock_mhz = {});

// `min_sm_mhz`: clocks below it stay replayable but are not offered to the frontier solver.
// `cap_clock_mhz` > 0: the board's clock ceiling (f_e = min(f, ceiling)) instead of the model's power cap.
// `time_sm` >= 0: every computation's share of time that scales with 1/f (at the highest clock) instead
// of the model's `computations.*.time_sm` (a run set's own, from fit_board_response).
// `rank_cap_clock_mhz` (one per rank, or empty): each rank's own ceiling in place of `cap_clock_mhz`.
PerseusPrediction build_perseus_prediction(const PerseusRunSet& runs, const GpuModel& model, double p_blocking_w,
                                           double cap_clock_mhz, double min_sm_mhz = 0, double time_sm = -1,
                                           const std::vector<double>& rank_cap_clock_mhz = {});

// The board's response to a requested SM clock, fitted on measured times only: per (stage, pass, clock)
// of `plans`, the measured time of its computations over their anchor time (one ratio per distinct
// condition: the thousands of computations Perseus runs at a few low clocks are replicates, and would
// otherwise outvote the few at high clocks that show where the time stops falling), least squares of
// shape(min(f, ceiling)) / shape(ceiling) against it over the model's table clocks as ceilings and, with
// `fit_time_share`, the pooled time share b in [0, 1] (steps of 0.001) of shape(f) = b f_max / f + 1 - b;
// without it each pass keeps the model's share. `per_rank`: each rank (GPU) its own ceiling, the share
// still pooled (a board under its power limit settles where its own computation's power meets the limit).
struct BoardResponse {
  double cap_clock_mhz = 0;  // pooled; with per_rank, the ceiling of the rank with the most computation time
  std::vector<double> rank_cap_clock_mhz;  // per_rank only
  double time_sm = -1;  // < 0: not fitted
  double rms_pct = 0;   // rms relative error of the ratios at the optimum
  int bins = 0;         // distinct (stage, pass, clock) conditions
};
BoardResponse fit_board_response(const PerseusRunSet& runs, const std::vector<int>& plans, const PerseusPrediction& anchor,
                                 const GpuModel& model, bool fit_time_share, bool per_rank = false);
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
  std::string workloads;       // the workloads file ("" = traces/perseus-baselines/workloads.json)
  bool fits = true;            // also the fitted variants (measured anchor, cap-clock fit, board fit)
};

// Our plan as a Perseus plan file: a clock per Merak 1F1B instruction (computations' clocks carried over).
ClockPlanFile perseus_plan_file(const PerseusPrediction& p, const IterationPlan& plan);

Json validate_perseus(const std::string& dir, const PerseusValidationOptions& o);
std::string format_perseus_report(const Json& report);

}  // namespace dvfs
