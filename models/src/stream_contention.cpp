#include "models/src/stream_contention.hpp"

#include "sim/core/errors.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

ContentionModel contention_model_from_json(const Json& doc, const std::string& path) {
  const JsonReader r(doc, path, "");
  r.only_keys({"name", "gpu", "about", "overlap_gain", "copy_sm_share", "clock_time_share", "power_clock_exponent",
               "cap_factor", "provenance", "fit"});
  ContentionModel m;
  m.name = r.string("name");
  m.gpu = r.string("gpu");
  m.overlap_gain = r.non_negative("overlap_gain");
  m.copy_sm_share = r.positive("copy_sm_share");
  m.clock_time_share = r.non_negative("clock_time_share");
  m.power_clock_exponent = r.non_negative("power_clock_exponent");
  m.cap_factor = r.positive("cap_factor");
  if (m.overlap_gain > 1) r.fail("overlap_gain", "expected a gain in [0, 1]");
  if (m.copy_sm_share > 1) r.fail("copy_sm_share", "expected a share in (0, 1]");
  if (m.clock_time_share > 1) r.fail("clock_time_share", "expected a share in [0, 1]");
  if (m.power_clock_exponent > 6) r.fail("power_clock_exponent", "expected an exponent in [0, 6]");
  if (m.cap_factor < 0.5 || m.cap_factor > 1.5) r.fail("cap_factor", "expected a factor in [0.5, 1.5]");
  if (!r.has("provenance")) r.fail("provenance", "expected the provenance of the fit (an object)");
  return m;
}

ContentionModel load_contention_model(const std::string& path) { return contention_model_from_json(read_json_file(path), path); }

std::vector<double> concurrent_rates(const ContentionModel& m, const std::vector<StreamDemand>& running) {
  std::vector<double> r(running.size(), 1.0);
  if (running.size() < 2) return r;
  double sm = 0, lo = 1, hi = 0;
  for (const StreamDemand& d : running) {
    sm += d.sm_share;
    lo = std::min(lo, d.memory_share);
    hi = std::max(hi, d.memory_share);
  }
  // Time-sliced SMs, with the gain of kernels that lean on different units (only while they compete for SMs).
  const double sliced = sm > 1 ? (1 + m.overlap_gain * std::max(0.0, hi - lo) * std::min(1.0, sm - 1)) / sm : 1.0;
  double dram = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    r[i] = std::min(1.0, sliced);
    dram += r[i] * running[i].memory_share;
  }
  if (dram > 1)
    for (double& x : r) x /= dram;
  return r;
}

double concurrent_power_w(double static_w, const std::vector<double>& alone_power_w, const std::vector<double>& rates) {
  double p = static_w;
  for (std::size_t i = 0; i < alone_power_w.size(); ++i) p += rates[i] * std::max(0.0, alone_power_w[i] - static_w);
  return p;
}

namespace {

struct Settled {
  double seconds = 0, energy_j = 0;
};

Settled at_ratio(const ContentionModel& m, double static_w, const std::vector<TimelineSegment>& segs, double q) {
  Settled s;
  for (const TimelineSegment& g : segs) {
    const double qj = g.elastic ? std::min(q, g.max_clock_ratio) : std::min(q, 1.0);
    const double t = g.seconds * (1 - m.clock_time_share + m.clock_time_share / qj);
    const double p = static_w + std::max(0.0, g.power_w - static_w) * std::pow(qj, m.power_clock_exponent);
    s.seconds += t;
    s.energy_j += t * p;
  }
  return s;
}

}  // namespace

CapSettlement settle_under_cap(const ContentionModel& m, double static_w, double cap_w, const std::vector<TimelineSegment>& segments) {
  // The settled time and energy are linear in each segment's seconds and energy: segments that move alike
  // (same elasticity and clock head-room) are summed first, so the search below is cheap.
  std::vector<TimelineSegment> groups;
  for (const TimelineSegment& g : segments) {
    auto same = [&](const TimelineSegment& x) { return x.elastic == g.elastic && x.max_clock_ratio == g.max_clock_ratio; };
    auto it = std::find_if(groups.begin(), groups.end(), same);
    if (it == groups.end()) {
      groups.push_back(g);
      groups.back().power_w = g.seconds * std::max(0.0, g.power_w - static_w);  // dynamic energy, until divided below
    } else {
      it->seconds += g.seconds;
      it->power_w += g.seconds * std::max(0.0, g.power_w - static_w);
    }
  }
  for (TimelineSegment& g : groups) g.power_w = g.seconds > 0 ? static_w + g.power_w / g.seconds : static_w;
  CapSettlement out;
  double top = 1;
  bool elastic = false;
  for (const TimelineSegment& g : groups)
    if (g.elastic && g.seconds > 0) {
      elastic = true;
      top = std::max(top, g.max_clock_ratio);
    }
  const double target = m.cap_factor * cap_w;
  auto mean = [&](double q) {
    const Settled s = at_ratio(m, static_w, groups, q);
    return s.seconds > 0 ? s.energy_j / s.seconds : 0.0;
  };
  double q = 1;
  if (mean(1) > target) {  // over the cap: every clock comes down
    double a = 0.2, b = 1;
    for (int i = 0; i < 60; ++i) (mean(0.5 * (a + b)) > target ? b : a) = 0.5 * (a + b);
    q = a;
    out.capped = true;
  } else if (elastic) {  // headroom: the capped kernels' clocks rise, up to the top clock
    if (mean(top) <= target) {
      q = top;
    } else {
      double a = 1, b = top;
      for (int i = 0; i < 60; ++i) (mean(0.5 * (a + b)) > target ? b : a) = 0.5 * (a + b);
      q = a;
      out.capped = true;
    }
  }
  const Settled s = at_ratio(m, static_w, groups, q);
  out.seconds = s.seconds;
  out.energy_j = s.energy_j;
  out.clock_ratio = q;
  return out;
}

}  // namespace dvfs
