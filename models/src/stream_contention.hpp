#pragma once
// Contention between kernels that run at the same time on different streams of one GPU (issue 19): data (a
// contention file, models/contention/NAME.json, with provenance) and pure functions. Three things are shared:
//  - the SMs: each kernel asks for the share of the SMs its launch can occupy (a full grid asks for all of them;
//    an NCCL kernel for the SMs given to communication). While the asks sum to more than the GPU, the block
//    scheduler time-slices them: each runs at 1/(sum of asks) of its alone speed, plus an overlap gain for
//    kernels that lean on different units (a compute-bound beside a memory-bound one: the difference of their
//    DRAM shares, times `overlap_gain`);
//  - DRAM bandwidth: the running kernels' DRAM shares (alone bytes/s over the peak) scaled by their rates sum to
//    at most 1;
//  - the power cap: the firmware holds the window-averaged power at the cap. A timeline whose mean power is
//    below the cap lets kernels that were power-capped alone run at higher clocks (up to the top clock), one
//    above it lowers the clocks of everything (settle_under_cap).
#include "sim/core/json_util.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct ContentionModel {
  std::string name;               // file stem, e.g. "h200-streams"
  std::string gpu;                // the GPU model it was fit for
  double overlap_gain = 0;        // extra joint speed of two time-sliced kernels per unit of DRAM-share difference
  double copy_sm_share = 1;       // SM share a copy-engine transfer behaves as if it took (measured: it stalls beside SM kernels)
  double clock_time_share = 0.4;  // share of a kernel's time that scales with 1/f_sm
  double power_clock_exponent = 2;  // dynamic power ~ f_sm^exponent along the cap's clock moves
  double cap_factor = 1;          // the window-averaged power the firmware settles at, over the power limit
};

ContentionModel load_contention_model(const std::string& path);
ContentionModel contention_model_from_json(const Json& doc, const std::string& path);

// What one running kernel asks of the GPU.
struct StreamDemand {
  double sm_share = 1;      // (0, 1]: SMs its launch can occupy (a copy-engine transfer: copy_sm_share)
  double memory_share = 0;  // [0, 1]: DRAM bandwidth it drew alone, over the peak
};

// Each running kernel's speed relative to running alone (1 = alone speed), for kernels on different streams.
std::vector<double> concurrent_rates(const ContentionModel& m, const std::vector<StreamDemand>& running);

// Power of a set of running kernels: the static part once, each kernel's dynamic part (its alone power less the
// static part) in proportion to its rate.
double concurrent_power_w(double static_w, const std::vector<double>& alone_power_w, const std::vector<double>& rates);

// A piece of a replayed timeline at the alone clocks: its length, power and whether the clocks of the kernels
// running in it could rise (they ran power-capped alone) and by how much at most (top clock / alone clock).
struct TimelineSegment {
  double seconds = 0;
  double power_w = 0;
  bool elastic = false;
  double max_clock_ratio = 1;
};

struct CapSettlement {
  double seconds = 0, energy_j = 0;
  double clock_ratio = 1;  // clock of the elastic segments over their alone clock (< 1: the cap lowered everything)
  bool capped = false;     // the settled mean power is at the cap
};

// Time and energy of a timeline once the firmware has held its mean power at cap_factor x cap_w.
CapSettlement settle_under_cap(const ContentionModel& m, double static_w, double cap_w, const std::vector<TimelineSegment>& segments);

}  // namespace dvfs
