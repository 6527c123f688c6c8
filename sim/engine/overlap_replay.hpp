#pragma once
// Overlap-aware replay of one GPU's streams (issue 19): the head kernel of every stream runs at the same time as
// the others, each at the rate the contention model (models/src/stream_contention.hpp) gives the running set,
// and the firmware's power cap settles the whole timeline. Its counterpart, the busy union, runs the same
// activities one after another in one queue: what the trace importer does with overlapping streams.
// Pure functions: no SimGrid, no policy.
#include "models/src/stream_contention.hpp"

#include <vector>

namespace dvfs {

// One kernel of a stream, as it ran alone.
struct StreamActivity {
  double alone_s = 0;        // duration alone
  double alone_power_w = 0;  // GPU power while it ran alone
  StreamDemand demand;       // what it asks of the SMs and of DRAM
  bool elastic = false;      // it ran power-capped alone (below the top clock), so its clock can rise
  double max_clock_ratio = 1;  // top SM clock over its clock alone
};

struct OverlapResult {
  std::vector<TimelineSegment> segments;  // at the alone clocks
  double seconds = 0, energy_j = 0;       // after the power cap settled
  double unsettled_seconds = 0;           // before it
  double clock_ratio = 1;
  std::vector<std::vector<double>> end_s;  // per stream and activity: when it ended, at the alone clocks
};

struct GpuEnvelope {
  double static_w = 0;  // power of the idle GPU at its clocks
  double cap_w = 0;     // power limit
};

// Streams run concurrently (each stream's activities in order, back to back).
OverlapResult replay_concurrent(const ContentionModel& m, const GpuEnvelope& gpu, const std::vector<std::vector<StreamActivity>>& streams);

// The busy union: the same activities in one queue, in `order` (pairs of stream index and activity index).
OverlapResult replay_busy_union(const ContentionModel& m, const GpuEnvelope& gpu, const std::vector<std::vector<StreamActivity>>& streams,
                                const std::vector<std::pair<int, int>>& order);

}  // namespace dvfs
