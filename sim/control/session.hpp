#pragma once
// A control session: post-training jobs (traces/src/grpo.hpp) on simulated GPUs, advanced one control
// interval at a time so that a controller (C++ or Python) can read what an operator measures and set the
// actuators between intervals.
//
// How it meets SimGrid: one host and one actor per simulated GPU (a job's DP rank; its TP group folded), as
// in the other engines. Each actor replays its kernels in local time under a ControlledGpuPolicy, with the
// GPU's firmware power-limit loop on (its limit is the actuator); when the GPU's local time reaches a
// control tick the policy's hook sleeps until that tick on SimGrid's clock and
// waits at a gate (a semaphore) that the driver releases once the controller has acted, then reads the
// actuator board. The driver advances with Engine::run_until(tick): SimGrid 3.32 runs every event up to and
// including the tick, and the call returns once every actor is at its gate or blocked in a communication
// (a barrier, a collective). A GPU blocked in a communication is idle: its power up to the tick is filled
// in as idle power at its current clocks when the measurement is taken, and the replay records the same
// idle power when the GPU resumes. Between ticks nothing outside a GPU can change its course, so the result
// is what event-by-event simulation gives; run_to_end() (no gates) gives the same totals (tests).
#include "models/src/gpu_model.hpp"
#include "sim/control/actuators.hpp"
#include "sim/network/cluster.hpp"
#include "sim/telemetry/nvml_readout.hpp"
#include "traces/src/grpo.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dvfs {

// A power budget over a set of physical GPUs (GPU indices: jobs in order, a job's DP ranks in order, each
// holding TP consecutive GPUs); judged on the `field` of NVML the operator polls.
struct PowerBudget {
  std::string name;
  std::string level;  // gpu | node | rack | fleet (a label)
  double budget_w = 0;
  std::vector<int> gpus;
  bool controlled = false;  // the controller acts on this budget (the others are only measured)
};

struct SessionSetup {
  std::shared_ptr<const GpuModel> model;
  std::vector<std::shared_ptr<const PreparedGrpoJob>> jobs;
  std::vector<PowerBudget> budgets;
  ClusterSpec cluster;               // bandwidths resolved; gpus_per_node counts physical GPUs
  double interval_s = 0.5;           // control interval (a multiple of the model's governor period)
  double duration_s = 60;            // the session ends at this simulated time
  double bin_s = 0.025;              // resolution of the power timeline (divides the interval)
  NvmlField field = NvmlField::average;
  NvmlSpec nvml;                     // the instant field's phase is drawn per GPU from the seed
  double cap_latency_s = 0.1;        // power-limit change to effect
  double min_cap_w = 0, max_cap_w = 0;  // power-limit range (0: the model's cap and 200 W)
  // Per job (optional): a clock pair per activity name id (per-kernel DVFS); empty = the top clocks.
  std::vector<std::vector<ClockPair>> plans;
  std::uint64_t seed = 0;
};

enum class GpuPhase : int { idle = 0, generating, waiting, training, host };
const char* to_string(GpuPhase p);

struct IntervalReport {
  int tick = 0;                        // intervals completed
  double t_end_s = 0;
  std::vector<double> gpu_measured_w;  // per physical GPU: the budget's NVML field at t_end
  std::vector<double> gpu_exact_w;     // per physical GPU: true mean power over the interval
  std::vector<double> budget_measured_w, budget_exact_w;
  std::vector<int> budget_violated;    // measured > budget
  std::vector<double> job_generated_tokens, job_trained_tokens;  // completed in the interval
  std::vector<GpuPhase> gpu_phase;     // per physical GPU at t_end
  std::vector<int> gpu_throttled;      // the governor holds the SM clock below the top
};

class JobRankActor;

// The timing a session needs of `m`: the control interval a multiple of its governor's period, the telemetry bin
// dividing the interval, at most kMaxControlDurationS simulated and at most kMaxTimelineRows bins per GPU
// (sim/core/limits.hpp). Errors name `file` and the given fields (a scenario's, or a command-line option).
void check_control_timing(const GpuModel& m, double interval_s, double bin_s, double duration_s, const std::string& file,
                          const std::string& interval_field, const std::string& bin_field, const std::string& duration_field);

// SimGrid allows one live engine per process: one session at a time (a second one, or any other simulation
// while one is alive, throws std::logic_error).
class ControlSession {
 public:
  explicit ControlSession(const SessionSetup& setup);
  ~ControlSession();
  ControlSession(const ControlSession&) = delete;
  ControlSession& operator=(const ControlSession&) = delete;

  // Set the actuators before advance(); the GPUs read them at the start of the next interval.
  ActuatorBoard& board() { return board_; }
  const ActuatorBoard& board() const { return board_; }
  // Runs one control interval; the report describes it.
  const IntervalReport& advance();
  // Runs to the end without gates (actuators as set now): the event-by-event reference.
  void run_to_end();
  bool done() const { return tick_ >= ticks_total_; }
  int tick() const { return tick_; }
  int ticks_total() const { return ticks_total_; }
  double now_s() const { return tick_ * setup_.interval_s; }
  const SessionSetup& setup() const { return setup_; }
  const std::vector<IntervalReport>& reports() const { return reports_; }

  int physical_gpus() const { return physical_gpus_; }
  int job_of_gpu(int g) const { return job_of_gpu_[static_cast<std::size_t>(g)]; }
  // A job's generation progress: sequences of the current step finished / all (1 outside generation).
  double generation_progress(int job) const;
  // The true power of a physical GPU so far (bins of bin_s up to now).
  PowerSeries gpu_power(int g) const;
  // Totals so far.
  double energy_j() const;          // all physical GPUs
  double generated_tokens() const;
  double trained_tokens() const;
  int steps_done(int job) const;

 private:
  void refresh_series(double t_end);
  void start_actors();
  friend class JobRankActor;

  SessionSetup setup_;
  ActuatorBoard board_;
  std::vector<std::unique_ptr<JobRankActor>> units_;
  std::vector<int> unit_first_gpu_, unit_gpus_, job_of_gpu_, unit_of_gpu_;
  std::vector<PowerSeries> unit_series_;
  std::vector<std::size_t> unit_final_bins_;
  std::vector<NvmlSpec> unit_nvml_;
  std::vector<IntervalReport> reports_;
  int physical_gpus_ = 0, tick_ = 0, ticks_total_ = 0, ticks_per_control_ = 0;
  bool started_ = false, gating_ = true;
  double origin_s_ = 0;
  struct Engine;
  std::unique_ptr<Engine> engine_;
};

}  // namespace dvfs
