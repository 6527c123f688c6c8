#pragma once
// NCCL kernels replayed beside the other streams' activities they overlapped in the trace (issue 19). The importer
// keeps one queue per rank, the busy union (an activity that started while another was running is clipped to the
// part past it; Rank::clipped keeps what it clipped), so a collective whose duration the network decides ends up
// serialised after, or before, the compute it overlapped. With StreamOverlap::contention the replayer runs each
// such collective beside that compute instead:
//  - an overlap window is a collective and the activities of other streams around it in the queue that overlapped
//    it in the trace (the ones still running when it started, the ones that started before it ended), within one step;
//  - the collective starts at its recorded offset into the window and lasts what the network says (its duration is
//    the network's, as in the busy union); while it runs, the other activities run at the compute rate the contention
//    model (models/src/stream_contention.hpp) gives the pair, and the GPU draws the collective's dynamic power
//    (its power less the idle power) times its rate on top; a collective that outlasts the compute runs on alone;
//  - the activities' durations are first brought back to alone durations: the part of each that overlapped the
//    recorded collective ran at the compute rate in the trace too (so a replay of the recording's own collective
//    time gives back the recorded span);
//  - where the pair would draw more than the power limit (or, where the replay let the kernel alone exceed it, more
//    than the kernel alone), the clocks fall until it does not (throttle_to_cap).
// Pure functions: no SimGrid, no policy.
#include "models/src/gpu_model.hpp"
#include "models/src/stream_contention.hpp"
#include "sim/core/workload.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace dvfs {

enum class StreamOverlap { contention, busy_union };
const char* to_string(StreamOverlap s);
// "contention" or "busy-union"; false for anything else.
bool stream_overlap_from_string(const std::string& s, StreamOverlap& out);

struct OverlapWindow {
  std::size_t first = 0, collective = 0, last = 0;  // queue indices: [first, last] holds the collective and the rest
  double offset_s = 0;         // the collective's recorded start after the window's first activity's recorded start
  double compute_rate = 1;     // the other streams' speed beside the collective, relative to alone
  double collective_rate = 1;  // the collective's (its dynamic power is drawn at this rate)
  // The power cap (models/src/stream_contention.hpp): where the pair draws more than cap_factor x the GPU's power limit,
  // the clocks fall until it does not (dynamic power ~ f^power_clock_exponent, time ~ 1 - s + s/f, s = clock_time_share).
  double cap_factor = 1, power_clock_exponent = 2, clock_time_share = 0.4;
};

// A kernel beside a collective that would draw `power_w` (idle part `idle_w`) over a cap of `cap_w`: the clock ratio
// f <= 1 that brings it to the cap, and what that does to its time (factor >= 1) and to its dynamic power (factor <= 1).
struct CapThrottle {
  double time_factor = 1, power_factor = 1;
};
CapThrottle throttle_to_cap(double power_w, double idle_w, double cap_w, const OverlapWindow& w);

// The windows of a rank, in queue order and disjoint; `rank`'s kernels inside them get their alone durations (and
// work rates). A rank with no clipped activity has none and is left as it is.
std::vector<OverlapWindow> plan_stream_overlap(Rank& rank, const ContentionModel& m, const GpuModel& model);

// A kernel of alone time `alone_s` that starts at `start_s`, with a collective running over [from_s, to_s] that
// slows it to `rate`: how long it takes, and how much of that lies beside the collective.
struct BesideCollective {
  double seconds = 0, overlapped_s = 0;
};
BesideCollective kernel_beside_collective(double start_s, double alone_s, double from_s, double to_s, double rate);

// The contention model a GPU's overlap replay uses: models/contention/<gpu>-streams.json where there is one, else
// the H200's (the only one calibrated; an approximation for other GPUs).
std::string contention_model_path(const std::string& gpu_name);

}  // namespace dvfs
