#include "traces/src/kernel_loop.hpp"

#include "sim/core/errors.hpp"
#include "traces/src/kernel_activity.hpp"
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

namespace {

// Window form: the counter over the profiled steps, first step's start to last step's end.
void measure_profiled_window(KernelLoop& loop, const std::string& run_path) {
  const Recording& rec = loop.recording;
  if (rec.steps.empty())
    throw InputError(run_path, "run.profiled_steps", "missing: a loop measured over its profiled window needs the step bounds");
  const double t0 = rec.steps.front().t0_ns, t1 = rec.steps.back().t1_ns;
  if (!(t1 > t0)) throw InputError(run_path, "run.profiled_steps", "expected the last step to end after the first begins");
  const double energy_j = rec.telemetry.energy_j_between(t0, t1);
  if (!(energy_j > 0))
    throw InputError(rec.telemetry.file(), "energy_mj", "expected the energy counter to advance over the profiled window");
  loop.profiled_window = true;
  loop.steady_s = (t1 - t0) * 1e-9;
  loop.steady_step_s = loop.steady_s / static_cast<double>(rec.steps.size());
  loop.measured_power_w = energy_j / loop.steady_s;
}

// The recorder's own Triton kernel of fixed fp32 FMA chains (micro.kind = small_grid, split busy_sm_fma): no
// operator launches it, so the trace has no shapes; its FLOPs per launch are the recorder's count of the kernel it
// wrote (micro.flops), done on CUDA cores as an fp32 GEMM's are.
void count_small_grid_work(KernelLoop& loop, JsonReader& micro) {
  if (micro.string_or("kind", "") != "small_grid") return;
  const double flops = micro.positive("flops");
  for (Rank& rank : loop.recording.workload.ranks)
    for (Kernel& k : rank.kernels)
      if (!counted_work(k) && k.duration_s > 0) {
        apply_rates(KernelRates{}, k);  // a launch-sized estimate gives way to the recorder's own count
        k.fma_tflops = static_cast<float>(flops / (k.duration_s * 1e12));
        k.work = WorkSource::launch_shape;
      }
}

}  // namespace

KernelLoop load_kernel_loop(const std::string& dir) {
  KernelLoop loop;
  loop.recording = load_recording(dir, Classifier::load_default());
  const std::string run_path = dir + "/run.json";
  if (!loop.recording.run.is_object() || !loop.recording.run.contains("micro"))
    throw InputError(run_path, "micro", "missing: expected a kernel-loop recording of the power suite (micro.steady or micro.window)");
  loop.micro = loop.recording.run["micro"];
  JsonReader micro(loop.micro, run_path, "micro");
  loop.name = micro.string_or("name", dir.substr(dir.find_last_of('/') + 1));
  if (loop.recording.workload.ranks.empty() || loop.recording.workload.ranks.front().steps.empty())
    throw InputError(dir, "trace", "no profiled step in the trace (expected step<i> ranges)");
  count_small_grid_work(loop, micro);
  if (micro.has("window")) {
    if (micro.string("window") != "profiled") micro.fail("window", "expected \"profiled\" (the counter over the profiled steps)");
    measure_profiled_window(loop, run_path);
    return loop;
  }
  const SteadyWindow w = read_steady_window(loop.recording.run, run_path);
  loop.steady_s = w.seconds;
  loop.steady_step_s = w.step_s;
  loop.measured_power_w = w.mean_power_w;
  return loop;
}

Workload steady_workload(const KernelLoop& loop) {
  Workload wl = loop.recording.workload;
  if (loop.profiled_window) return wl;
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
