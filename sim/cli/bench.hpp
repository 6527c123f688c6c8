#pragma once
#include <string>
#include <vector>

namespace dvfs {
// Prints replay throughput (kernel events per second, one GPU, local loop and event mode), the
// default scenario's wall time and the process's peak memory, each with its target and ratio.
// (`dvfs-sim bench [--events N]`, its Command entry in sim/cli/command.hpp.)
int run_bench(double target_events);
// Multi-GPU scale: the 70B target case and scaling tables from 8 to 8,192 GPUs (sim/cli/bench_scale.cpp).
void bench_scale();
// Power-budget control: an environment step of the 16-GPU GRPO scenario, a fleet study (sim/cli/bench_control.cpp).
void bench_control();
}  // namespace dvfs
