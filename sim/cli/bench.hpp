#pragma once
#include <string>
#include <vector>

namespace dvfs {
// Prints replay throughput (kernel events per second, one GPU, local loop and event mode), the
// default scenario's wall time and the process's peak memory, each with its target and ratio.
// (`dvfs-sim bench [--events N] [--quick]`, its Command entry in sim/cli/command.hpp.) `quick`: every section's
// smallest case only (the study grid, the scaling tables, the 175B plan, the Kareus frontier and the fleet study
// skipped, each said so): a smoke run for the test suite, not a measurement of record.
int run_bench(double target_events, bool quick = false);
// Multi-GPU scale: the 70B target case and scaling tables from 8 to 8,192 GPUs (sim/cli/bench_scale.cpp).
void bench_scale(bool quick = false);
// Power-budget control: an environment step of the 16-GPU GRPO scenario, a fleet study (sim/cli/bench_control.cpp).
void bench_control(bool quick = false);
}  // namespace dvfs
