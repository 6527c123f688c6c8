#pragma once
// Budget controllers: after every control interval they read what an operator measures (the session's
// reports: NVML readings, the jobs' phases) and set the actuator board for the next one. They act on the
// session's controlled budgets, each budget on its own.
//
//  - uncontrolled: nothing is set: every GPU's power limit stays at its default (TDP), the jobs' knobs at
//    their defaults; the GPU's own governor only keeps it under TDP.
//  - static-cap: the workload-blind static cap a datacenter provisions: every GPU's limit is its equal share
//    of the budget, set once (the limits sum to the budget, so the budget holds wherever the governor does).
//  - reactive: reactive throttling in the manner of the native governor, one level up: limits start at TDP;
//    while the budget's measured power exceeds it, every GPU's limit is lowered in proportion to the excess
//    (down_gain W of limit per W over, spread equally), and raised by up_step_frac of the budget while the
//    power is more than margin_frac below it. Workload-blind (equal limits).
//  - pid: a PID loop on the measured power against budget x (1 - margin_frac) sets the budget's power target,
//    split into limits by allocate_caps (GPUs below their limit give their headroom to the throttled ones).
//  - rl: a trained policy file (MlpPolicy) maps the observation to a power target and the jobs' concurrency
//    (sim/control/observation.hpp).
//  - per-kernel: the kernel-DVFS policy on the same budget: the static cap's limits, and every GPU runs the
//    job's clock plan (sim/control/job_clock_plan.hpp, budget_pct of kernel time over the fastest pairs); the
//    session setup carries the plans (make_session_setup).
#include "sim/control/mlp_policy.hpp"
#include "sim/control/observation.hpp"
#include "sim/control/session.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dvfs {

struct ControllerSpec {
  std::string name = "uncontrolled";
  double margin_frac = 0.03;       // reactive / pid: stay this far below the budget
  double down_gain = 1.0;          // reactive
  double up_step_frac = 0.02;      // reactive
  double kp = 0.5, ki = 0.4, kd = 0.0;  // pid: W of target per W of error (and per W s, W / s)
  double headroom_w = 30;          // pid / rl: allocate_caps' headroom
  std::string policy_file;         // rl
  double budget_pct = 1.0;         // per-kernel: allowed kernel-time slowdown, %
  ActionSpec action;               // rl (from the policy file's action names)
};

std::vector<std::string> controller_names();  // uncontrolled static-cap reactive pid rl per-kernel

class Controller {
 public:
  virtual ~Controller() = default;
  virtual std::string name() const = 0;
  virtual void start(ControlSession& s) { (void)s; }  // before the first interval
  virtual void control(ControlSession& s) = 0;        // after each interval
};

// Throws InputError(file, "controller...", ...) on an unknown name, bad parameters or a policy file that
// does not fit the observation.
std::unique_ptr<Controller> make_controller(const ControllerSpec& spec, const std::string& file);

// The controlled budgets of a session.
std::vector<int> controlled_budgets(const ControlSession& s);

}  // namespace dvfs
