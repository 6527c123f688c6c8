#include "traces/src/kernel_loop.hpp"

#include "sim/core/errors.hpp"
#include "traces/src/kernel_classifier.hpp"

#include <algorithm>

namespace dvfs {

SteadyWindow read_steady_window(const Json& run, const std::string& run_path) {
  if (!run.is_object() || !run.contains("micro"))
    throw InputError(run_path, "micro", "missing: expected a kernel-loop recording of the power suite (micro.steady)");
  JsonReader micro(run["micro"], run_path, "micro");
  JsonReader steady = micro.child("steady");
  const double t0 = steady.number("t0_ns"), t1 = steady.number("t1_ns");
  if (!(t1 > t0)) steady.fail("t1_ns", "expected t1_ns > t0_ns");
  SteadyWindow w;
  w.seconds = (t1 - t0) * 1e-9;
  w.step_s = w.seconds / steady.positive("steps");
  const double energy_j = steady.non_negative("energy_mj") / 1000.0;
  if (energy_j <= 0) steady.fail("energy_mj", "expected the counter to advance over the steady window");
  w.mean_power_w = energy_j / w.seconds;
  return w;
}

KernelLoop load_kernel_loop(const std::string& dir) {
  KernelLoop loop;
  loop.recording = load_recording(dir, Classifier::load_default());
  const std::string run_path = dir + "/run.json";
  const SteadyWindow w = read_steady_window(loop.recording.run, run_path);
  loop.micro = loop.recording.run["micro"];
  loop.name = JsonReader(loop.micro, run_path, "micro").string_or("name", dir.substr(dir.find_last_of('/') + 1));
  loop.steady_s = w.seconds;
  loop.steady_step_s = w.step_s;
  loop.measured_power_w = w.mean_power_w;
  if (loop.recording.workload.ranks.empty() || loop.recording.workload.ranks.front().steps.empty())
    throw InputError(dir, "trace", "no profiled step in the trace (expected step<i> ranges)");
  return loop;
}

Workload steady_workload(const KernelLoop& loop) {
  Workload wl = loop.recording.workload;
  Rank& rank = wl.ranks.front();
  // The replay takes a step's tail out of the next kernel's gap: that gap moves with the tail.
  double tail_change = 0;
  for (Step& st : rank.steps) {
    if (st.first_kernel < 0) continue;
    const auto first = static_cast<std::size_t>(st.first_kernel), last = static_cast<std::size_t>(st.last_kernel);
    double busy = 0, idle = st.lead_s + st.tail_s;
    for (std::size_t i = first; i <= last; ++i) {
      busy += rank.kernels[i].duration_s;
      if (i > first) idle += rank.kernels[i].gap_before_s;
    }
    const double target_idle = std::max(0.0, loop.steady_step_s - busy);
    const double scale = idle > 0 ? target_idle / idle : 0.0;
    for (std::size_t i = first + 1; i <= last; ++i) rank.kernels[i].gap_before_s *= scale;
    const double lead = st.lead_s * scale;
    // the first kernel's gap holds the step's lead and the previous step's tail
    double& gap = rank.kernels[first].gap_before_s;
    gap = std::max(0.0, gap + lead - st.lead_s + tail_change);  // the rank's first kernel has no recorded gap
    st.lead_s = lead;
    const double tail = idle > 0 ? st.tail_s * scale : target_idle;
    tail_change = tail - st.tail_s;
    st.tail_s = tail;
  }
  return wl;
}

}  // namespace dvfs
