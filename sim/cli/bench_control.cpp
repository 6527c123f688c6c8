// `dvfs-sim bench`, power-budget section: the cost of one control interval (an environment step) of the
// 16-GPU GRPO scenario, with the observation, the action and the reward, and of a fleet study.
#include "sim/cli/bench.hpp"

#include "models/src/model_registry.hpp"
#include "sim/control/control_run.hpp"
#include "sim/control/fleet.hpp"
#include "sim/control/observation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace dvfs {

void bench_control(bool quick) {
  const std::string root = data_dir();
  ControlScenario sc = load_control_scenario(root + "/scenarios/power-budget/grpo-7b-16gpu.json");
  ControllerSpec none;
  const auto t0 = std::chrono::steady_clock::now();
  SessionSetup setup = make_session_setup(sc, none);  // loads the recordings once
  const double prepare_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double best_ms = 1e30;
  int steps = 0;
  for (int rep = 0; rep < 3; ++rep) {  // best of 3 episodes on a shared machine
    setup.seed = static_cast<std::uint64_t>(rep);
    ControlSession s(setup);
    const auto t1 = std::chrono::steady_clock::now();
    const std::vector<double> action{0.0, 0.5};
    while (!s.done()) {
      apply_budget_action(s, 0, action, sc.controller.action);
      s.advance();
      (void)budget_reward(s, 0, sc.reward);
      (void)budget_observation(s, 0);
    }
    steps = s.tick();
    best_ms = std::min(best_ms, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() / steps);
  }
  std::printf("  power-budget environment step, %s (%d GPUs, %.1f s intervals, %d steps per episode): %.3f ms"
              "   target <= 5 ms   ratio %.1fx   (programs prepared once: %.2f s)\n",
              sc.name.c_str(), 16, sc.interval_s, steps, best_ms, 5.0 / best_ms, prepare_s);
  if (quick) {
    std::printf("  fleet study: skipped (--quick)\n");
    return;
  }
  const FleetScenario fs = load_fleet_scenario(root + "/scenarios/power-budget/fleet-mixed.json");
  const auto t2 = std::chrono::steady_clock::now();
  const Json f = run_fleet_study(fs);
  std::printf("  fleet study %s (%zu fleet sizes up to %d GPUs, %.0f s simulated per job type): %.1f s\n", fs.name.c_str(), fs.sizes.size(),
              fs.sizes.empty() ? 0 : fs.sizes.back(), fs.duration_s,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count());
}

}  // namespace dvfs
