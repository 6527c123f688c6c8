#pragma once
// What a controller may set (the actuator board). Simulated GPUs and jobs read it at their next control
// tick (power limit, SM clock ceiling) or their next decision point (a job's knobs: the next decode step
// for the concurrency, the next step for the group size).
#include <vector>

namespace dvfs {

struct GpuActuators {
  double power_cap_w = 0;     // the GPU's power limit (nvmlDeviceSetPowerManagementLimit)
  double sm_ceiling_mhz = 0;  // highest SM clock allowed (nvmlDeviceSetGpuLockedClocks max); 0 = none
};

struct JobKnobs {
  int group_size = 0;   // completions per prompt (GRPO's G)
  int concurrency = 0;  // sequences one DP rank decodes at once
};

struct ActuatorBoard {
  std::vector<GpuActuators> gpus;  // per physical GPU
  std::vector<JobKnobs> jobs;
};

}  // namespace dvfs
