#include "sim/validate/stream_pairs.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/kernel_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace dvfs {

namespace {

std::vector<std::string> name_list(const JsonReader& r, const char* key) {
  const Json& list = r.raw(key);
  if (!list.is_array()) r.fail(key, "expected a list of pair names");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) r.fail(key, "expected pair names (element " + std::to_string(i) + " is not a string)");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

// A kernel name's mean alone figures in one alone loop, at the steady window's conditions.
struct AloneKernel {
  double seconds = 0, memory_tbps = 0, sm_fill = 0;
  int count = 0;
  bool copy_engine = false;
};

struct AloneLoop {
  std::map<std::string, AloneKernel> kernels;
  double power_w = 0, clock_mhz = 0;
};

AloneLoop alone_loop(const std::string& dir) {
  const KernelLoop loop = load_kernel_loop(dir);
  const Workload& wl = loop.recording.workload;
  const Rank& rank = wl.ranks.front();
  AloneLoop out;
  double busy = 0;
  int steps = 0;
  for (const Step& st : rank.steps) {
    if (st.first_kernel < 0) continue;
    ++steps;
    for (auto i = static_cast<std::size_t>(st.first_kernel); i <= static_cast<std::size_t>(st.last_kernel); ++i) {
      const Kernel& k = rank.kernels[i];
      AloneKernel& a = out.kernels[wl.names[k.name_id]];
      a.seconds += k.duration_s;
      a.memory_tbps += counted_memory_tbps(k) * k.duration_s;
      a.sm_fill += k.sm_fill * k.duration_s;
      a.copy_engine = k.kind == ActivityKind::memcpy;
      ++a.count;
      busy += k.duration_s;
    }
  }
  if (steps == 0 || !(busy > 0)) throw InputError(dir, "trace", "no kernel inside a profiled step");
  // The unprofiled loop's step, shared out in proportion to the profiled kernels' time: the steady window ran at
  // its own (power-capped) clocks, which the profiled steps need not have.
  const double scale = loop.steady_step_s / (busy / steps);
  for (auto& [name, a] : out.kernels) {
    a.memory_tbps /= a.seconds * scale;
    a.sm_fill /= a.seconds;
    a.seconds = a.seconds / a.count * scale;
  }
  const SteadyWindow w = read_steady_window(loop.recording.run, dir + "/run.json");
  const JsonReader steady(loop.recording.run["micro"]["steady"], dir + "/run.json", "micro.steady");
  out.power_w = w.mean_power_w;
  out.clock_mhz = loop.recording.telemetry.mean_sm_mhz(steady.number("t0_ns"), steady.number("t1_ns"));
  return out;
}

PairKernel pair_kernel(const AloneKernel& k, const AloneLoop& loop, const GpuModel& gpu) {
  PairKernel p;
  p.alone_s = k.seconds;
  p.alone_power_w = loop.power_w;
  p.sm_fill = std::clamp(k.sm_fill, 1e-3, 1.0);
  p.memory_share = std::clamp(k.memory_tbps * 1e3 / gpu.specs().mem_bandwidth_gbs, 0.0, 1.0);
  p.copy_engine = k.copy_engine;
  const double top = gpu.max_sm_mhz();
  p.elastic = loop.clock_mhz > 0 && loop.clock_mhz < 0.99 * top;  // held below the top clock by the cap
  p.max_clock_ratio = p.elastic ? top / loop.clock_mhz : 1.0;
  return p;
}

StreamPair load_pair(const std::string& dir, const std::string& name, bool held_out, const GpuModel& gpu) {
  const std::string base = join_path(dir, name);
  const AloneLoop a = alone_loop(base + "-a"), b = alone_loop(base + "-b");
  const KernelLoop ab = load_kernel_loop(base + "-ab");
  StreamPair p;
  p.name = name;
  p.held_out = held_out;
  p.measured_step_s = ab.steady_step_s;
  p.measured_step_j = ab.measured_power_w * ab.steady_step_s;
  const Json& device = ab.recording.run.contains("device") ? ab.recording.run["device"] : Json::object();
  p.gpu.cap_w = device.contains("power_limit_mw") ? JsonReader(device, base + "-ab/run.json", "device").positive("power_limit_mw") / 1000
                                                  : gpu.power_cap_w();
  p.gpu.static_w = gpu.idle_w();
  const Workload& wl = ab.recording.workload;
  const Rank& rank = wl.ranks.front();
  for (const Step& st : rank.steps) {
    if (st.first_kernel < 0) continue;
    std::map<int, int> stream_index;
    std::vector<std::vector<PairKernel>> streams;
    std::vector<std::pair<int, int>> order;
    for (auto i = static_cast<std::size_t>(st.first_kernel); i <= static_cast<std::size_t>(st.last_kernel); ++i) {
      const Kernel& k = rank.kernels[i];
      const std::string& kname = wl.names[k.name_id];
      const auto in_a = a.kernels.find(kname), in_b = b.kernels.find(kname);
      if (in_a == a.kernels.end() && in_b == b.kernels.end())
        throw InputError(base + "-ab", "trace", "kernel \"" + kname + "\" ran in neither alone recording");
      const auto [it, added] = stream_index.emplace(k.stream, static_cast<int>(streams.size()));
      if (added) streams.emplace_back();
      const int s = it->second;
      order.emplace_back(s, static_cast<int>(streams[static_cast<std::size_t>(s)].size()));
      streams[static_cast<std::size_t>(s)].push_back(in_a != a.kernels.end() ? pair_kernel(in_a->second, a, gpu) : pair_kernel(in_b->second, b, gpu));
    }
    p.steps.push_back(std::move(streams));
    p.start_order.push_back(std::move(order));
  }
  if (p.steps.empty()) throw InputError(base + "-ab", "trace", "no kernel inside a profiled step");
  return p;
}

std::vector<std::vector<StreamActivity>> activities(const std::vector<std::vector<PairKernel>>& streams, const ContentionModel& m) {
  std::vector<std::vector<StreamActivity>> out(streams.size());
  for (std::size_t s = 0; s < streams.size(); ++s)
    for (const PairKernel& k : streams[s]) {
      StreamActivity a;
      a.alone_s = k.alone_s;
      a.alone_power_w = k.alone_power_w;
      a.demand = {k.copy_engine ? m.copy_sm_share : k.sm_fill, k.memory_share};
      a.elastic = k.elastic;
      a.max_clock_ratio = k.max_clock_ratio;
      out[s].push_back(a);
    }
  return out;
}

double pct(double predicted, double measured) { return 100.0 * (predicted / measured - 1.0); }

}  // namespace

StreamPairSplit read_stream_pair_split(const std::string& path) {
  const Json doc = read_json_file(path);
  const JsonReader r(doc, path, "");
  r.only_keys({"about", "fit", "held_out"});
  StreamPairSplit s{name_list(r, "fit"), name_list(r, "held_out")};
  for (const std::string& n : s.fit)
    if (std::find(s.held_out.begin(), s.held_out.end(), n) != s.held_out.end())
      r.fail("held_out", "pair \"" + n + "\" is in both lists");
  return s;
}

std::vector<StreamPair> load_stream_pairs(const std::string& dir, const StreamPairSplit& split, const GpuModel& gpu) {
  std::vector<StreamPair> out;
  for (const std::string& n : split.fit) out.push_back(load_pair(dir, n, false, gpu));
  for (const std::string& n : split.held_out) out.push_back(load_pair(dir, n, true, gpu));
  return out;
}

PairPrediction predict_stream_pair(const StreamPair& pair, const ContentionModel& m) {
  std::vector<TimelineSegment> overlap, serial;
  for (std::size_t i = 0; i < pair.steps.size(); ++i) {
    const auto acts = activities(pair.steps[i], m);
    const OverlapResult o = replay_concurrent(m, pair.gpu, acts);
    const OverlapResult u = replay_busy_union(m, pair.gpu, acts, pair.start_order[i]);
    overlap.insert(overlap.end(), o.segments.begin(), o.segments.end());
    serial.insert(serial.end(), u.segments.begin(), u.segments.end());
  }
  // The cap holds the mean power over the firmware's window, which spans steps: settled over all of them.
  const CapSettlement o = settle_under_cap(m, pair.gpu.static_w, pair.gpu.cap_w, overlap);
  const CapSettlement u = settle_under_cap(m, pair.gpu.static_w, pair.gpu.cap_w, serial);
  const double n = static_cast<double>(pair.steps.size());
  double serial_s = 0, serial_j = 0;
  for (const TimelineSegment& g : serial) serial_s += g.seconds, serial_j += g.seconds * g.power_w;
  return {o.seconds / n, o.energy_j / n, u.seconds / n, u.energy_j / n, serial_s / n, serial_j / n};
}

Json validate_stream_pairs(const std::string& dir, const std::string& split_file, const std::string& contention_file) {
  const ContentionModel m = load_contention_model(contention_file);
  const GpuModel gpu = load_gpu_model(m.gpu, contention_file);
  const std::vector<StreamPair> pairs = load_stream_pairs(dir, read_stream_pair_split(split_file), gpu);
  Json rows = Json::array();
  Json worst = {{"fit", Json::object()}, {"held_out", Json::object()}};
  for (const char* side : {"fit", "held_out"})
    for (const char* k : {"overlap_time", "overlap_energy", "busy_union_time", "busy_union_energy"}) worst[side][k] = 0.0;
  for (const StreamPair& p : pairs) {
    const PairPrediction q = predict_stream_pair(p, m);
    Json row = {{"pair", p.name},
                {"split", p.held_out ? "held_out" : "fit"},
                {"measured_step_s", p.measured_step_s},
                {"measured_step_j", p.measured_step_j},
                {"overlap_step_s", q.overlap_s},
                {"overlap_step_j", q.overlap_j},
                {"busy_union_step_s", q.busy_union_s},
                {"busy_union_step_j", q.busy_union_j},
                {"overlap_time_error_pct", pct(q.overlap_s, p.measured_step_s)},
                {"overlap_energy_error_pct", pct(q.overlap_j, p.measured_step_j)},
                {"busy_union_time_error_pct", pct(q.busy_union_s, p.measured_step_s)},
                {"busy_union_energy_error_pct", pct(q.busy_union_j, p.measured_step_j)},
                {"serial_no_cap_time_error_pct", pct(q.serial_s, p.measured_step_s)},
                {"serial_no_cap_energy_error_pct", pct(q.serial_j, p.measured_step_j)}};
    Json& w = worst[p.held_out ? "held_out" : "fit"];
    for (const char* k : {"overlap_time", "overlap_energy", "busy_union_time", "busy_union_energy"})
      w[k] = std::max(w[k].get<double>(), std::fabs(row[std::string(k) + "_error_pct"].get<double>()));
    rows.push_back(row);
  }
  return {{"pairs_dir", dir},
          {"split", split_file},
          {"contention_model", contention_file},
          {"gpu", m.gpu},
          {"measured", "each together run's unprofiled steady window: step time and energy-counter energy per step"},
          {"predicted_from", "the two alone runs only (each kernel's steady-window time, power and clock alone)"},
          {"pairs", rows},
          {"max_abs_error_pct", worst}};
}

std::string format_stream_pairs(const Json& report) {
  std::string s = "Two-stream pairs: the together run predicted from the alone runs (" + report["contention_model"].get<std::string>() +
                  ")\n  errors in % of the measured steady step (time) and its counter energy; busy union = the same kernels\n"
                  "  one after another, under the same power cap\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-20s %-8s %9s %9s | %8s %8s | %8s %8s\n", "pair", "split", "meas ms", "meas J", "ovl t%", "ovl E%",
                "union t%", "union E%");
  s += buf;
  for (const char* side : {"fit", "held_out"})
    for (const Json& r : report["pairs"]) {
      if (r["split"] != side) continue;
      s += printf_text("  %-20s %-8s %9.2f %9.2f | %+8.1f %+8.1f | %+8.1f %+8.1f\n", r["pair"].get<std::string>().c_str(), side,
                       1e3 * r["measured_step_s"].get<double>(), r["measured_step_j"].get<double>(),
                       r["overlap_time_error_pct"].get<double>(), r["overlap_energy_error_pct"].get<double>(),
                       r["busy_union_time_error_pct"].get<double>(), r["busy_union_energy_error_pct"].get<double>());
    }
  for (const char* side : {"fit", "held_out"}) {
    const Json& w = report["max_abs_error_pct"][side];
    std::snprintf(buf, sizeof buf, "  max |error| %-8s overlap: time %.1f %%, energy %.1f %%   busy union: time %.1f %%, energy %.1f %%\n", side,
                  w["overlap_time"].get<double>(), w["overlap_energy"].get<double>(), w["busy_union_time"].get<double>(),
                  w["busy_union_energy"].get<double>());
    s += buf;
  }
  return s;
}

}  // namespace dvfs
