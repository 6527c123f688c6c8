#include "sim/engine/overlap_replay.hpp"

#include <algorithm>
#include <limits>

namespace dvfs {

namespace {

TimelineSegment segment_of(const std::vector<const StreamActivity*>& running, const std::vector<double>& rates, double seconds,
                           double static_w) {
  TimelineSegment g;
  g.seconds = seconds;
  std::vector<double> power;
  g.max_clock_ratio = std::numeric_limits<double>::infinity();
  for (const StreamActivity* a : running) {
    power.push_back(a->alone_power_w);
    if (a->elastic) {
      g.elastic = true;
      g.max_clock_ratio = std::min(g.max_clock_ratio, a->max_clock_ratio);
    }
  }
  if (!g.elastic) g.max_clock_ratio = 1;
  g.power_w = concurrent_power_w(static_w, power, rates);
  return g;
}

void settle(const ContentionModel& m, const GpuEnvelope& gpu, OverlapResult& r) {
  r.unsettled_seconds = 0;
  for (const TimelineSegment& g : r.segments) r.unsettled_seconds += g.seconds;
  const CapSettlement s = settle_under_cap(m, gpu.static_w, gpu.cap_w, r.segments);
  r.seconds = s.seconds;
  r.energy_j = s.energy_j;
  r.clock_ratio = s.clock_ratio;
}

}  // namespace

OverlapResult replay_concurrent(const ContentionModel& m, const GpuEnvelope& gpu, const std::vector<std::vector<StreamActivity>>& streams) {
  OverlapResult r;
  const std::size_t n = streams.size();
  std::vector<std::size_t> head(n, 0);
  std::vector<double> left(n, 0);
  r.end_s.resize(n);
  for (std::size_t s = 0; s < n; ++s) {
    r.end_s[s].assign(streams[s].size(), 0);
    if (!streams[s].empty()) left[s] = streams[s][0].alone_s;
  }
  double now = 0;
  std::vector<std::size_t> ids;
  std::vector<const StreamActivity*> running;
  std::vector<StreamDemand> demands;
  for (;;) {
    ids.clear();
    running.clear();
    demands.clear();
    for (std::size_t s = 0; s < n; ++s)
      if (head[s] < streams[s].size()) {
        ids.push_back(s);
        running.push_back(&streams[s][head[s]]);
        demands.push_back(streams[s][head[s]].demand);
      }
    if (ids.empty()) break;
    const std::vector<double> rates = concurrent_rates(m, demands);
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < ids.size(); ++i) dt = std::min(dt, rates[i] > 0 ? left[ids[i]] / rates[i] : dt);
    if (!(dt < std::numeric_limits<double>::infinity())) dt = 0;
    if (dt > 0) r.segments.push_back(segment_of(running, rates, dt, gpu.static_w));
    now += dt;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const std::size_t s = ids[i];
      left[s] -= rates[i] * dt;
      if (left[s] <= 1e-15 + 1e-12 * streams[s][head[s]].alone_s) {  // finished (to rounding)
        r.end_s[s][head[s]] = now;
        if (++head[s] < streams[s].size()) left[s] = streams[s][head[s]].alone_s;
      }
    }
  }
  settle(m, gpu, r);
  return r;
}

OverlapResult replay_busy_union(const ContentionModel& m, const GpuEnvelope& gpu, const std::vector<std::vector<StreamActivity>>& streams,
                                const std::vector<std::pair<int, int>>& order) {
  OverlapResult r;
  r.end_s.resize(streams.size());
  for (std::size_t s = 0; s < streams.size(); ++s) r.end_s[s].assign(streams[s].size(), 0);
  double now = 0;
  for (const auto& [s, i] : order) {
    const StreamActivity& a = streams.at(static_cast<std::size_t>(s)).at(static_cast<std::size_t>(i));
    if (a.alone_s > 0) r.segments.push_back(segment_of({&a}, {1.0}, a.alone_s, gpu.static_w));
    now += a.alone_s;
    r.end_s[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)] = now;
  }
  settle(m, gpu, r);
  return r;
}

}  // namespace dvfs
