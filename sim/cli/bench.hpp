#pragma once
#include <string>
#include <vector>

namespace dvfs {
// Prints replay throughput (kernel events per second, one GPU, local loop and event mode), the
// default scenario's wall time and the process's peak memory, each with its target and ratio.
int cmd_bench(const std::vector<std::string>& args);
}  // namespace dvfs
