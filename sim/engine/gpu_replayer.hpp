#pragma once
// Replays one rank's device activities on one modelled GPU. The loop advances in local time through
// kernels and host gaps; it splits a kernel only where something changes its rate: a policy tick or
// a clock switch taking effect (work continues at the old clock until then). The time keeper decides
// whether each segment is also a SimGrid event (event-by-event mode) or not (local-loop mode).
// The replayer orchestrates; the parts are apart: the clock actuator (switch latency, superseding
// requests: sim/engine/clock_actuator.hpp), the firmware power-limit loop (the native governor's
// power_limit_step: sim/engine/firmware_power_limit.hpp), the policy's telemetry window
// (sim/telemetry/ticked_window.hpp) and the energy meter, which only observes: the replayer reports
// each constant-power segment, transition energies and step bounds to it, and reads nothing back
// (sim/energy/energy_meter.hpp).
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"
#include "sim/engine/clock_actuator.hpp"
#include "sim/engine/firmware_power_limit.hpp"
#include "sim/engine/stream_overlap.hpp"
#include "sim/energy/energy_meter.hpp"
#include "sim/policies/policy.hpp"
#include "sim/telemetry/ticked_window.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace dvfs {

struct ReplayOptions {
  int repeat = 1;                    // replay the rank's activities this many times back to back
  double timeline_interval_s = 0.01; // 0 disables the timeline
  // Overrides of the model's switch latency, key by key (see models/README.md, "Switch latency").
  DomainLatencyOverride sm_latency, mem_latency;
  std::optional<double> firmware_latency_s;
  // Seeds the latency draws: each GPU draws from its own mt19937_64 seeded with
  // latency_seed(seed, rank id), so a replay is deterministic for a given seed.
  std::uint64_t seed = 0;
  // The GPU's own power-limit loop under the policy's clocks: the SM clock that runs is the lower of
  // the policy's and a firmware ceiling that follows the model's native-governor parameters (the
  // windowed power is held at cap * target_fraction). Real GPUs do this to driver-locked clocks too;
  // planned policies turn it on. Off for `native` (it is that loop) and, by default, for the others.
  bool firmware_power_cap = false;
  double firmware_cap_w = 0;  // the power limit that loop holds (0 = the model's cap); see set_firmware_cap_w
  // Keep one record per device activity in the meter (start, end, energy, clocks): what a trace export
  // needs (sim/results/trace_export.hpp). Off by default.
  bool record_activities = false;
  // How a multi-rank replay runs NCCL kernels that overlapped other streams in the trace: beside them, at the
  // rates of the contention model (sim/engine/stream_overlap.hpp), or as the importer's busy union. Only ranks
  // whose trace had overlapping activities differ.
  StreamOverlap stream_overlap = StreamOverlap::contention;
};

struct ReplayStats {
  double end_s = 0;
  // Idle after end_s until the job's last rank ended (multi-rank replays): the meter's span is end_s + waiting_s.
  double waiting_s = 0;
  double metered_end_s() const { return end_s + waiting_s; }
  std::uint64_t kernel_events = 0;
  std::uint64_t segments = 0;
  std::uint64_t clock_switches = 0;
  double switch_latency_s = 0;  // summed latency of the switches requested (superseded ones included)
  std::uint64_t switches_applied = 0;  // switches that took effect and changed the clocks in effect
  double switch_energy_j = 0;   // summed transition energy charged by the switches that took effect
  std::uint64_t ticks = 0;
  std::uint64_t firmware_throttle_changes = 0;  // times the firmware power limit moved the running clock
};

class GpuReplayer {
 public:
  GpuReplayer(const Rank& rank, const GpuModel& model, Policy& policy, const ReplayOptions& opts, EnergyMeter& meter);

  // TimeKeeper: double now() const; void advance(double dt).
  template <class TimeKeeper>
  ReplayStats run(TimeKeeper& tk);
  // The same, where a kernel that stands for a collective call lasts what `collective_s(kernel, local
  // time)` says (see run_kernels below); without it a collective keeps its recorded duration.
  template <class TimeKeeper, class CollectiveTime>
  ReplayStats run(TimeKeeper& tk, CollectiveTime&& collective_s);

  // Piecewise replay, for engines that interleave a GPU's kernels with communication: the GPU idles
  // (idle power at the clocks in effect, policy ticks and pending switches carry on) until local time
  // `until`, or replays kernels [first, last) of its rank with their recorded host gaps. Both count
  // outside any step. stats() reads the totals so far.
  template <class TimeKeeper>
  void idle_until(TimeKeeper& tk, double until);
  // After run(): the GPU idles (idle power at the clocks in effect, policy ticks carry on) from its rank's end
  // until `job_end_s`, when the job's last rank ended; metered as waiting, not as a host gap. end_s stays the
  // rank's own end.
  template <class TimeKeeper>
  void wait_for_job_end(TimeKeeper& tk, double job_end_s);
  template <class TimeKeeper>
  void run_kernels(TimeKeeper& tk, std::size_t first, std::size_t last);
  // The same, where a kernel that stands for a collective call (Kernel::collective) lasts what
  // `collective_s(kernel, local time)` says (the other ranks and the network decide, not the clocks);
  // it runs at the kernel's power meanwhile.
  template <class TimeKeeper, class CollectiveTime>
  void run_kernels(TimeKeeper& tk, std::size_t first, std::size_t last, CollectiveTime&& collective_s);
  // A pipeline engine announces the computation the GPU starts now (local time tk.now()); the
  // policy may answer with a clock request.
  template <class TimeKeeper>
  void begin_computation(TimeKeeper& tk, const ComputationInfo& c) {
    if (auto r = policy_.before_computation(c, telemetry(tk.now()))) request(*r, tk.now());
  }
  const ReplayStats& stats() const { return stats_; }
  // The power limit the firmware loop holds from now on (firmware_power_cap on): a controller's
  // nvmlDeviceSetPowerManagementLimit. The SM clock index that runs, and whether the loop holds it below
  // the policy's clock.
  void set_firmware_cap_w(double cap_w) { firmware_.set_cap_w(cap_w); }
  int sm_index() const { return sm_idx_; }
  bool firmware_throttling() const { return sm_idx_ < policy_sm_idx_; }

  // Variation: every kernel (not collectives) takes `factor` times the model's time (a slow GPU), and,
  // with cv > 0, a further mean-one lognormal factor drawn per kernel from its own seeded stream.
  void set_variation(double factor, double jitter_cv, std::uint64_t seed);

  // The overlap windows run() replays a collective beside other streams in (plan_stream_overlap on this rank; the
  // vector must outlive the replayer). None: every activity in queue order.
  void set_overlap_windows(const std::vector<OverlapWindow>* windows) { windows_ = windows; }

 private:
  // run()'s parts for kernel i: the gap before it, its step's start and the policy's kernel hook (returns the
  // step it counts in); after it, its counters and its step's end.
  template <class TimeKeeper>
  int enter_kernel(TimeKeeper& tk, std::size_t i, int rep, double& tail_spent);
  template <class TimeKeeper>
  void leave_kernel(TimeKeeper& tk, std::size_t i, int step, double k0, double& tail_spent);
  // The window's activities with its collective beside them; returns the window's last index.
  template <class TimeKeeper, class CollectiveTime>
  std::size_t replay_window(TimeKeeper& tk, const OverlapWindow& w, int rep, double& tail_spent, CollectiveTime& collective_s);
  // `fixed_s` >= 0: the kernel's segment lasts that long whatever the clocks (a collective).
  template <class TimeKeeper>
  // fixed_s >= 0: the kernel (a collective) runs that long whatever the clocks; span_s: the collective's whole duration
  // when fixed_s is only its rest (its power spreads its bytes over the whole; GpuModel::collective_power_w).
  void advance(TimeKeeper& tk, const Kernel* k, double idle_s, const SegmentContext& ctx, double fixed_s = -1, double span_s = -1);
  template <class TimeKeeper>
  void on_boundary(TimeKeeper& tk, int which);  // 0: switch takes effect, 1: policy tick, 2: firmware tick
  void firmware_tick();
  void policy_tick(double now);
  void set_effective();
  void request(const ClockPair& c, double now);
  void apply(const ClockPair& c);
  void take_effect(const ClockTransition& t, double now);
  void read_actuator_counters();  // the switch counts of stats_ from the actuator
  GpuTelemetry telemetry(double now) const;

  const Rank& rank_;
  const GpuModel& model_;
  Policy& policy_;
  const ReplayOptions& opts_;
  EnergyMeter& meter_;

  int sm_idx_ = 0, mem_idx_ = 0;       // the clocks that run (policy's, capped by the firmware ceiling)
  int policy_sm_idx_ = 0;              // the SM clock the policy's last switch put in effect
  ClockPair clocks_, policy_clocks_;   // the clocks that run; the clocks the actuator put in effect
  ClockActuator actuator_;             // switch latency and pending requests
  FirmwarePowerLimit firmware_;        // ticks only with opts.firmware_power_cap
  int step_ = -1;                // step of the segment being replayed (attributes transition energy)
  TickedWindow policy_window_;   // the policy's telemetry (ticks only with a tick period)
  double last_tick_power_w_ = 0;
  ReplayStats stats_;
  double time_scale_ = 1;
  LognormalLatency jitter_;
  std::mt19937_64 jitter_rng_;
  const std::vector<OverlapWindow>* windows_ = nullptr;
  bool kernel_hook_ = false;  // run(): the policy wants before_kernel (read once per run)
  struct Beside {  // a collective running beside the kernels being replayed: over [from_s, to_s]
    double from_s = 0, to_s = -1, rate = 1, extra_w = 0, cap_w = 0;
    const OverlapWindow* window = nullptr;
  } beside_;
};

struct LocalTime {
  double t = 0;
  double now() const { return t; }
  void advance(double dt) { t += dt; }
};

// ---- implementation of the hot loop (templates) ----

template <class TimeKeeper>
ReplayStats GpuReplayer::run(TimeKeeper& tk) {
  return run(tk, [](const Kernel& k, double) { return k.duration_s; });
}

template <class TimeKeeper, class CollectiveTime>
ReplayStats GpuReplayer::run(TimeKeeper& tk, CollectiveTime&& collective_s) {
  const std::vector<Kernel>& ks = rank_.kernels;
  kernel_hook_ = policy_.wants_kernel_events();
  for (int rep = 0; rep < opts_.repeat; ++rep) {
    double tail_spent = 0;
    std::size_t next_window = 0;
    for (std::size_t i = 0; i < ks.size(); ++i) {
      if (windows_ && next_window < windows_->size() && (*windows_)[next_window].first == i) {
        i = replay_window(tk, (*windows_)[next_window++], rep, tail_spent, collective_s);
        continue;
      }
      const Kernel& k = ks[i];
      const int step = enter_kernel(tk, i, rep, tail_spent);
      // A collective's duration is the network's and its peers', not the clocks'.
      const double k0 = tk.now();
      advance(tk, &k, 0.0, SegmentContext{step, k.annotation_set, k.cls, true}, k.collective ? collective_s(k, tk.now()) : -1.0);
      leave_kernel(tk, i, step, k0, tail_spent);
    }
  }
  stats_.end_s = tk.now();
  return stats_;
}

template <class TimeKeeper>
int GpuReplayer::enter_kernel(TimeKeeper& tk, std::size_t i, int rep, double& tail_spent) {
  const Kernel& k = rank_.kernels[i];
  const std::vector<Step>& steps = rank_.steps;
  const int step = k.step >= 0 ? rep * static_cast<int>(steps.size()) + k.step : -1;
  double gap = (rep > 0 && i == 0) ? 0.0 : k.gap_before_s;
  gap = gap > tail_spent ? gap - tail_spent : 0.0;
  tail_spent = 0;
  if (k.step >= 0 && steps[k.step].first_kernel == static_cast<int>(i)) {
    const double lead = steps[k.step].lead_s;
    advance(tk, nullptr, gap > lead ? gap - lead : 0.0, SegmentContext{-1, 0, k.cls, false});
    meter_.step_begin(step, tk.now());
    advance(tk, nullptr, lead, SegmentContext{step, 0, k.cls, false});
  } else {
    advance(tk, nullptr, gap, SegmentContext{step, 0, k.cls, false});
  }
  if (kernel_hook_) {
    if (auto c = policy_.before_kernel(k, telemetry(tk.now()))) request(*c, tk.now());
  }
  return step;
}

template <class TimeKeeper>
void GpuReplayer::leave_kernel(TimeKeeper& tk, std::size_t i, int step, double k0, double& tail_spent) {
  const Kernel& k = rank_.kernels[i];
  meter_.count_kernel(step);
  if (meter_.recording_activities()) meter_.activity_done(static_cast<std::uint32_t>(i), step, k0, tk.now());
  ++stats_.kernel_events;
  if (k.step >= 0 && rank_.steps[k.step].last_kernel == static_cast<int>(i)) {
    const double tail = rank_.steps[k.step].tail_s;
    advance(tk, nullptr, tail, SegmentContext{step, 0, k.cls, false});
    tail_spent = tail;
    meter_.step_end(step, tk.now());
  }
}

template <class TimeKeeper, class CollectiveTime>
std::size_t GpuReplayer::replay_window(TimeKeeper& tk, const OverlapWindow& w, int rep, double& tail_spent, CollectiveTime& collective_s) {
  const std::vector<Kernel>& ks = rank_.kernels;
  const Kernel& c = ks[w.collective];
  int step = enter_kernel(tk, w.first, rep, tail_spent);
  const double from = tk.now() + w.offset_s;
  const double to = from + collective_s(c, from);
  beside_ = {from, to, w.compute_rate,
             // an NCCL transfer moves its bytes whatever its rate beside the compute: their energy whole over its span
             (c.work == WorkSource::transfer_bytes ? 1.0 : w.collective_rate) *
                 std::max(0.0, model_.collective_power_w(c, sm_idx_, mem_idx_, to - from) - model_.idle_power_w(sm_idx_)),
             opts_.firmware_cap_w > 0 ? opts_.firmware_cap_w : model_.power_cap_w(), &w};
  double last_k0 = from;
  for (std::size_t i = w.first; i <= w.last; ++i) {
    if (i > w.first) step = enter_kernel(tk, i, rep, tail_spent);
    if (i == w.collective) continue;
    const double k0 = last_k0 = tk.now();
    advance(tk, &ks[i], 0.0, SegmentContext{step, ks[i].annotation_set, ks[i].cls, true});
    double no_tail = 0;
    if (i < w.last) leave_kernel(tk, i, step, k0, no_tail);  // a step does not end inside a window
  }
  beside_ = Beside{};
  // The collective outlasts the compute beside it: it runs on alone.
  if (tk.now() < from) advance(tk, nullptr, from - tk.now(), SegmentContext{step, 0, c.cls, false});
  if (tk.now() < to) advance(tk, &c, 0.0, SegmentContext{step, c.annotation_set, c.cls, true}, to - tk.now(), to - from);
  if (w.last != w.collective) {
    meter_.count_kernel(step);
    if (meter_.recording_activities()) meter_.activity_done(static_cast<std::uint32_t>(w.collective), step, from, to);
    ++stats_.kernel_events;
  }
  leave_kernel(tk, w.last, step, w.last == w.collective ? from : last_k0, tail_spent);
  return w.last;
}

template <class TimeKeeper>
void GpuReplayer::idle_until(TimeKeeper& tk, double until) {
  if (until > tk.now()) advance(tk, nullptr, until - tk.now(), SegmentContext{-1, 0, KernelClass::other, false});
  stats_.end_s = tk.now();
}

template <class TimeKeeper>
void GpuReplayer::wait_for_job_end(TimeKeeper& tk, double job_end_s) {
  if (job_end_s - tk.now() <= 1e-12 * job_end_s) return;  // the same end up to rounding (local time vs SimGrid's clock)
  const double t0 = tk.now();
  advance(tk, nullptr, job_end_s - t0, SegmentContext{-1, 0, KernelClass::other, false, true});
  stats_.waiting_s += tk.now() - t0;
}

template <class TimeKeeper>
void GpuReplayer::run_kernels(TimeKeeper& tk, std::size_t first, std::size_t last) {
  run_kernels(tk, first, last, [](const Kernel& k, double) { return k.duration_s; });
}

template <class TimeKeeper, class CollectiveTime>
void GpuReplayer::run_kernels(TimeKeeper& tk, std::size_t first, std::size_t last, CollectiveTime&& collective_s) {
  const std::vector<Kernel>& ks = rank_.kernels;
  const bool kernel_hook = policy_.wants_kernel_events();
  const bool record = meter_.recording_activities();
  for (std::size_t i = first; i < last && i < ks.size(); ++i) {
    const Kernel& k = ks[i];
    advance(tk, nullptr, k.gap_before_s, SegmentContext{-1, 0, k.cls, false});
    if (kernel_hook) {
      if (auto c = policy_.before_kernel(k, telemetry(tk.now()))) request(*c, tk.now());
    }
    const SegmentContext ctx{-1, k.annotation_set, k.cls, true};
    const double k0 = tk.now();
    if (k.collective) advance(tk, &k, 0.0, ctx, collective_s(k, tk.now()));
    else advance(tk, &k, 0.0, ctx);
    if (record) meter_.activity_done(static_cast<std::uint32_t>(i), -1, k0, tk.now());
    ++stats_.kernel_events;
  }
  stats_.end_s = tk.now();
}

template <class TimeKeeper>
void GpuReplayer::advance(TimeKeeper& tk, const Kernel* k, double idle_s, const SegmentContext& ctx, double fixed_s, double span_s) {
  // `remaining` is a fraction of the kernel (busy) or seconds (idle).
  step_ = ctx.step;
  double remaining = k ? 1.0 : idle_s;
  if (remaining <= 0 || (k && fixed_s == 0)) return;
  double scale = time_scale_;
  if (k && fixed_s < 0 && jitter_.random()) scale *= jitter_.draw(jitter_rng_);
  // Beside a collective (replay_window), averaged over the kernel: its dynamic power runs at the share `dynamic` (it
  // does the same work in more time) and the collective's dynamic power comes on top (`extra_w`).
  bool beside = false;
  double dynamic = 1, extra_w = 0;
  if (k && fixed_s < 0 && beside_.to_s > tk.now()) {
    const double alone = scale * model_.kernel_time_s(*k, sm_idx_, mem_idx_);
    const BesideCollective b = kernel_beside_collective(tk.now(), alone, beside_.from_s, beside_.to_s, beside_.rate);
    if (alone > 0 && b.seconds > 0 && b.overlapped_s > 0) {
      beside = true;
      // Beside the collective the pair may draw more than the power limit (or than the kernel alone, where the replay
      // let that exceed the limit: no firmware loop): the clocks fall until it does not.
      const double idle = model_.idle_power_w(sm_idx_), alone_w = model_.kernel_power_w(*k, sm_idx_, mem_idx_);
      const double pair_w = idle + std::max(0.0, alone_w - idle) * beside_.rate + beside_.extra_w;
      const CapThrottle cap = throttle_to_cap(pair_w, idle, std::max(beside_.cap_w, alone_w / beside_.window->cap_factor), *beside_.window);
      const double apart = b.seconds - b.overlapped_s, together = b.overlapped_s * cap.time_factor;
      const double total = apart + together;
      scale *= total / alone;
      dynamic = (apart + together * beside_.rate * cap.power_factor) / total;
      extra_w = beside_.extra_w * cap.power_factor * together / total;
    }
  }
  for (;;) {
    const double unit_s = k ? (fixed_s >= 0 ? fixed_s : scale * model_.kernel_time_s(*k, sm_idx_, mem_idx_)) : 1.0;
    double power = !k              ? model_.idle_power_w(sm_idx_)
                   : fixed_s >= 0 ? model_.collective_power_w(*k, sm_idx_, mem_idx_, span_s >= 0 ? span_s : fixed_s)
                                  : model_.kernel_power_w(*k, sm_idx_, mem_idx_);
    if (beside) {
      const double idle = model_.idle_power_w(sm_idx_);
      power = idle + std::max(0.0, power - idle) * dynamic + extra_w;
    }
    const double t = tk.now();
    const double need = remaining * unit_s;
    const double pending_t = actuator_.pending_at_s(), next_tick = policy_window_.next_tick_s();
    int which = next_tick <= pending_t ? 1 : 0;
    double boundary = which ? next_tick : pending_t;
    if (firmware_.next_tick_s() < boundary) boundary = firmware_.next_tick_s(), which = 2;
    const double dt = t + need <= boundary ? need : (boundary > t ? boundary - t : 0.0);
    if (dt > 0) {
      meter_.add(t, dt, power, clocks_.sm_mhz, clocks_.mem_mhz, sm_idx_, ctx);
      policy_window_.add(power * dt);
      firmware_.add(power * dt);
      ++stats_.segments;
      tk.advance(dt);
    }
    if (dt == need) return;
    remaining -= dt / unit_s;
    on_boundary(tk, which);
  }
}

template <class TimeKeeper>
void GpuReplayer::on_boundary(TimeKeeper& tk, int which) {
  if (which == 2) {
    firmware_tick();
    return;
  }
  if (which == 0) {
    if (auto t = actuator_.complete_pending()) take_effect(*t, tk.now());
    read_actuator_counters();
    return;
  }
  policy_tick(tk.now());
}

}  // namespace dvfs
