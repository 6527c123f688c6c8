#pragma once
#include <string>
#include <vector>

namespace dvfs {
// dvfs-sim control SCENARIO [--controller NAME[,NAME...]] [--policy-file F] [--seed N] [--duration S] [--json] [-o FILE]
int cmd_control(const std::vector<std::string>& args);
// dvfs-sim fleet SCENARIO [--sizes N,N,...] [--duration S] [--json] [-o FILE]
int cmd_fleet(const std::vector<std::string>& args);
extern const char* kControlUsage;
}  // namespace dvfs
