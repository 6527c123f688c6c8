#include "sim/engine/stream_overlap.hpp"

#include "models/src/model_registry.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace dvfs {

const char* to_string(StreamOverlap s) { return s == StreamOverlap::contention ? "contention" : "busy-union"; }

bool stream_overlap_from_string(const std::string& s, StreamOverlap& out) {
  if (s == "contention") out = StreamOverlap::contention;
  else if (s == "busy-union") out = StreamOverlap::busy_union;
  else return false;
  return true;
}

std::string contention_model_path(const std::string& gpu_name) {
  const std::string own = data_dir() + "/models/contention/" + gpu_name + "-streams.json";
  return std::filesystem::exists(own) ? own : data_dir() + "/models/contention/h200-streams.json";
}

BesideCollective kernel_beside_collective(double start_s, double alone_s, double from_s, double to_s, double rate) {
  if (!(alone_s > 0) || !(rate > 0)) return {std::max(0.0, alone_s), 0.0};
  const double before = std::clamp(from_s - start_s, 0.0, alone_s);  // alone until the collective starts
  const double left = alone_s - before;
  const double beside = std::max(0.0, to_s - std::max(start_s, from_s));
  if (left <= 0 || beside <= 0) return {alone_s, 0.0};
  if (left <= rate * beside) return {before + left / rate, left / rate};
  return {before + beside + (left - rate * beside), beside};
}

CapThrottle throttle_to_cap(double power_w, double idle_w, double cap_w, const OverlapWindow& w) {
  const double cap = cap_w * w.cap_factor;
  if (!(power_w > cap) || !(cap > idle_w) || !(w.power_clock_exponent > 0)) return {};
  const double p = (cap - idle_w) / (power_w - idle_w);  // dynamic power left, = f^exponent
  const double f = std::pow(p, 1.0 / w.power_clock_exponent);
  return {1 - w.clock_time_share + w.clock_time_share / f, p};
}

namespace {

// One window's rates: the other activities' duration-weighted SM and DRAM asks beside the collective's.
std::vector<double> window_rates(const std::vector<Kernel>& ks, const std::vector<double>& dur, const OverlapWindow& w,
                                 const ContentionModel& m, const GpuModel& model) {
  const double peak_tbps = model.specs().mem_bandwidth_gbs / 1000.0;
  auto share = [&](double tbps) { return peak_tbps > 0 ? std::clamp(tbps / peak_tbps, 0.0, 1.0) : 0.0; };
  double D = 0, sm = 0, mem = 0;
  for (std::size_t i = w.first; i <= w.last; ++i) {
    if (i == w.collective) continue;
    D += dur[i];
    sm += ks[i].sm_fill * dur[i];
    mem += counted_memory_tbps(ks[i]) * dur[i];
  }
  if (!(D > 0)) return {1.0, 1.0};
  const Kernel& c = ks[w.collective];
  const StreamDemand compute{std::clamp(sm / D, 1e-3, 1.0), share(mem / D)};
  // counted_memory_tbps: an NCCL transfer's bytes price its power only (the contention model was fit without them)
  const StreamDemand collective{std::clamp(static_cast<double>(c.sm_fill), 1e-3, 1.0), share(counted_memory_tbps(c))};
  return concurrent_rates(m, {compute, collective});
}

}  // namespace

std::vector<OverlapWindow> plan_stream_overlap(Rank& rank, const ContentionModel& m, const GpuModel& model) {
  std::vector<OverlapWindow> out;
  std::vector<Kernel>& ks = rank.kernels;
  const std::size_t n = ks.size();
  if (rank.clipped.empty() || rank.recorded_start_s.size() != n) return out;
  // The recorded spans before the busy union clipped them.
  std::vector<double> start(rank.recorded_start_s), dur(n);
  for (std::size_t i = 0; i < n; ++i) dur[i] = ks[i].duration_s;
  for (const ClippedSpan& c : rank.clipped)
    if (c.kernel < n) start[c.kernel] = c.start_s, dur[c.kernel] = c.duration_s;
  auto beside = [&](std::size_t i, std::size_t c) { return ks[i].stream != ks[c].stream && ks[i].collective == 0 && ks[i].step == ks[c].step; };
  std::size_t free = 0;  // windows are disjoint
  for (std::size_t c = 0; c < n; ++c) {
    if (ks[c].collective == 0) continue;
    const double end_c = start[c] + dur[c];
    OverlapWindow w;
    w.collective = c;
    w.first = w.last = c;
    while (w.first > free && beside(w.first - 1, c) && start[w.first - 1] + dur[w.first - 1] > start[c]) --w.first;
    while (w.last + 1 < n && beside(w.last + 1, c) && start[w.last + 1] < end_c) ++w.last;
    if (w.first == w.last) continue;
    // A step that ends inside the window ends with it (steps are contiguous; this only guards odd traces).
    const int s = ks[c].step;
    if (s >= 0 && static_cast<std::size_t>(s) < rank.steps.size()) {
      const Step& st = rank.steps[static_cast<std::size_t>(s)];
      if (st.first_kernel > static_cast<int>(w.first) || (st.last_kernel >= 0 && static_cast<std::size_t>(st.last_kernel) < w.last)) continue;
    }
    w.offset_s = std::max(0.0, start[c] - start[w.first]);
    const std::vector<double> r = window_rates(ks, dur, w, m, model);
    w.compute_rate = r[0];
    w.collective_rate = r[1];
    w.cap_factor = m.cap_factor;
    w.power_clock_exponent = m.power_clock_exponent;
    w.clock_time_share = m.clock_time_share;
    for (std::size_t i = w.first; i <= w.last; ++i) {
      if (i == c) continue;
      // The part that ran beside the recorded collective did r[0] of its time's work.
      const double o = std::max(0.0, std::min(start[i] + dur[i], end_c) - std::max(start[i], start[c]));
      const double alone = dur[i] - o * (1 - r[0]);
      if (alone > 0 && dur[i] > 0) scale_work_rates(ks[i], dur[i] / alone);
      ks[i].duration_s = alone;
    }
    ks[c].duration_s = dur[c];
    out.push_back(w);
    free = w.last + 1;
  }
  return out;
}

}  // namespace dvfs
