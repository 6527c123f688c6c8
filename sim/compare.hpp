#pragma once
// `dvfs-sim compare`: one scenario's trace and GPU under several policies, side by side: energy,
// time, energy saved and slowdown against `native`, clock switches and the time spent switching.
#include "sim/scenario/scenario.hpp"
#include "sim/simulation/simulation.hpp"

#include <string>
#include <vector>

namespace dvfs {

// `policies` by name (planned ones take `budget_pct`); native is always run first as the reference.
// Each row: policy, energy_j, time_s, energy_saved_pct, slowdown_pct, clock_switches,
// switch_latency_s, switch_energy_j, plan details (prediction accuracy, latency-aware choice).
// Sets the SM and memory switch latency of every driver request to `latency_s`, without spread.
void set_fixed_switch_latency(ReplayOptions& opts, double latency_s);
// The policies `compare` can replay (from the registry): max, native, recorded and the planned ones.
std::vector<std::string> comparable_policies();
// What `compare` replays when no policies are named (the registry's compare_rank): max, static-best,
// pass-level, per-kernel, per-kernel-online, latency-aware.
std::vector<std::string> default_comparison();

// `trace_dir` (not ""): each policy's replay is also written there as a trace, <policy>.trace.json.gz
// (sim/results/trace_export.hpp); each row then names its file under "trace".
Json compare_policies(const Scenario& sc, const std::vector<std::string>& policies, double budget_pct,
                      const std::string& trace_dir = "");
Json compare_policies(const Scenario& sc, const LoadedTrace& trace, const GpuModel& model,
                      const std::vector<std::string>& policies, double budget_pct, const std::string& trace_dir = "");
// A sweep for studies: the scenario's trace loaded once, compare_policies for every budget x SM and
// memory switch latency (spread 0); rows carry their budget and latency. `wall_s` is the sweep's time.
Json compare_grid(const Scenario& sc, const std::vector<std::string>& policies, const std::vector<double>& budgets_pct,
                  const std::vector<double>& latencies_s);
std::string format_comparison(const Json& table);

// A synthetic scenario (pipeline policies): each policy's replayed iteration (max, critical-path, kareus by default)
// against max, and the Perseus / Kareus / both-off frontier study (sim/simulation/kareus_study.hpp).
Json compare_synthetic(const std::string& scenario_path, const std::vector<std::string>& policies, double budget_pct);
std::string format_synthetic_comparison(const Json& table);
std::string comparison_csv(const Json& table);

}  // namespace dvfs
