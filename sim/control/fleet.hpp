#pragma once
// Fleet power as operators see it: many jobs of a mix on N GPUs, their summed power measured like NVML
// and judged over windows of 0.5 s, 30 s and 5 min: peak demand as a share of nameplate, violation rates
// of budgets set at fractions of nameplate, and how far a budget could be oversubscribed at a chosen
// violation rate.
//
// Jobs do not interact without a shared budget, so the fleet's power is the sum of its jobs' power. Each job
// type of the mix is simulated alone (a control session, uncontrolled, every TP group and DP rank on its own
// simulated GPU) for `duration_s` under a few seeds (variants: other response lengths); a fleet of N GPUs
// is then drawn from the mix (seeded): every job instance takes one variant shifted in time by a uniform
// draw (circularly), idle GPUs draw the model's idle power. The NVML 1 s average is linear, so the fleet's
// reading is the reading of the summed power (every GPU's window is the same 1 s); the instant field and the
// counter refresh on per-GPU phases and are not offered here.
//
//   {"name", "description", "gpu",
//    "fleet": {"sizes": [16, 64, 256, 1024], "duration_s": 1800, "seed": 0, "variants": 3,
//              "field": "average" | "exact", "sample_s": 0.5, "bin_s": 0.025, "windows_s": [0.5, 30, 300],
//              "violation_rates": [0, 0.01], "budget_fracs": [0.6, 0.7, 0.8, 0.9],
//              "mix": [{"share": 0.4, "job": {... a control job ...}}, {"share": 0.1, "idle": true}, ...]}}
#include "sim/control/control_scenario.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct FleetMixEntry {
  double share = 0;      // of the fleet's GPUs
  bool idle = false;
  GrpoJobSpec job;
};

struct FleetScenario {
  std::string file, name, description, gpu = "h200";
  std::vector<int> sizes{16, 64, 256, 1024};
  double duration_s = 1800, sample_s = 0.5, bin_s = 0.025;
  std::uint64_t seed = 0;
  int variants = 3;
  NvmlField field = NvmlField::average;
  std::vector<double> windows_s{0.5, 30, 300}, violation_rates{0, 0.01}, budget_fracs{0.6, 0.7, 0.8, 0.9};
  std::vector<FleetMixEntry> mix;
};

bool is_fleet_scenario(const std::string& path);  // a JSON object with a "fleet" key
FleetScenario load_fleet_scenario(const std::string& path);
// `file` names the source in errors.
FleetScenario parse_fleet_scenario(const Json& doc, const std::string& file);
// A duration given beside the file (a command-line option, a Python argument named `field`), checked as the file's.
void set_fleet_duration(FleetScenario& fs, double duration_s, const std::string& field);

// Result: per fleet size, the jobs drawn, and per window length the peak share of nameplate, the mean share,
// the violation rate at each budget fraction and the sustainable oversubscription at each violation rate;
// per job type its mean power and peak share alone.
// `samples`: also the fleet's measured power samples (every sample_s), per fleet size.
Json run_fleet_study(const FleetScenario& fs, bool samples = false);
std::string format_fleet_study(const Json& result);

}  // namespace dvfs
