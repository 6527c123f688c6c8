#pragma once
// Energy accounting beside the engine (in the spirit of SimGrid's energy plugin): the GPU replayer
// reports constant-power segments; the meter integrates them per step, annotation set, kernel class,
// SM clock, and into an NVML-like timeline of fixed intervals.
#include "sim/core/workload.hpp"

#include <cstdint>
#include <vector>

namespace dvfs {

struct StepTotals {
  double start_s = -1, end_s = -1;
  double energy_j = 0;
  double busy_s = 0;          // device activity time inside the step
  double sm_mhz_time = 0;     // integral of the SM clock over the step (MHz*s)
  std::uint64_t kernels = 0;
};

struct TimelinePoint {
  double energy_j = 0;
  double sm_mhz_time = 0;
  double mem_mhz_time = 0;
};

// One device activity as it ran in the replay (recorded only when the meter is asked to: the trace
// export, sim/results/trace_export.hpp): its kernel (index in the rank's program), step, simulated start
// and end, the energy of its busy segments, and the integrals of the SM and memory clocks over them.
struct ActivityRecord {
  std::uint32_t kernel = 0;
  std::int32_t step = -1;
  double start_s = 0, end_s = 0;
  double energy_j = 0;
  double sm_mhz_time = 0, mem_mhz_time = 0;
};

// Attribution of a segment: an activity (class + annotation set), a host-bound gap, or (waiting) the idle time of a
// GPU whose rank ended before the job's last one did.
struct SegmentContext {
  int step = -1;
  std::uint32_t annotation_set = 0;
  KernelClass cls = KernelClass::other;
  bool busy = false;
  bool waiting = false;
};

class EnergyMeter {
 public:
  EnergyMeter(std::size_t steps, std::size_t annotation_sets, std::size_t sm_clocks, double timeline_interval_s);

  void add(double t0_s, double dt_s, double power_w, double sm_mhz, double mem_mhz, int sm_idx,
           const SegmentContext& ctx) {
    const double e = power_w * dt_s;
    total_j_ += e;
    if (ctx.busy) {
      busy_s_ += dt_s;
      set_j_[ctx.annotation_set] += e;
      class_j_[static_cast<int>(ctx.cls)] += e;
      class_s_[static_cast<int>(ctx.cls)] += dt_s;
      if (record_) {
        cur_.energy_j += e;
        cur_.sm_mhz_time += sm_mhz * dt_s;
        cur_.mem_mhz_time += mem_mhz * dt_s;
      }
    } else if (ctx.waiting) {
      waiting_j_ += e;
      waiting_s_ += dt_s;
    } else {
      gap_j_ += e;
      gap_s_ += dt_s;
    }
    if (ctx.step >= 0) {
      StepTotals& st = steps_[ctx.step];
      st.energy_j += e;
      st.sm_mhz_time += sm_mhz * dt_s;
      if (ctx.busy) st.busy_s += dt_s;
    }
    residency_s_[sm_idx] += dt_s;
    if (interval_s_ > 0) add_to_timeline(t0_s, dt_s, power_w, sm_mhz, mem_mhz);
  }
  // Energy spent at one instant `t` (a clock transition): counted in the total, the step (when
  // `step` >= 0) and the timeline interval holding `t`, but in no class, annotation set or host gap
  // and with no duration; switch_j() sums it.
  void add_energy(double t_s, double joules, int step);
  void step_begin(int step, double t) { steps_[step].start_s = t; }
  void step_end(int step, double t) { steps_[step].end_s = t; }
  void count_kernel(int step) {
    if (step >= 0) ++steps_[step].kernels;
  }

  // Per-activity records (off by default: they cost memory at scale). When on, the replayer reports each
  // activity's end; the busy segments since the previous one are its energy and clocks.
  void record_activities(bool on) { record_ = on; }
  bool recording_activities() const { return record_; }
  void activity_done(std::uint32_t kernel, int step, double start_s, double end_s) {
    cur_.kernel = kernel;
    cur_.step = step;
    cur_.start_s = start_s;
    cur_.end_s = end_s;
    activities_.push_back(cur_);
    cur_ = ActivityRecord{};
  }
  const std::vector<ActivityRecord>& activities() const { return activities_; }

  double total_j() const { return total_j_; }
  double busy_s() const { return busy_s_; }
  double gap_j() const { return gap_j_; }
  double gap_s() const { return gap_s_; }
  // Idle after the rank's last activity until the job's last rank ended (multi-rank replays).
  double waiting_j() const { return waiting_j_; }
  double waiting_s() const { return waiting_s_; }
  double switch_j() const { return switch_j_; }
  const std::vector<StepTotals>& steps() const { return steps_; }
  const std::vector<double>& annotation_set_j() const { return set_j_; }
  const std::vector<double>& class_j() const { return class_j_; }
  const std::vector<double>& class_s() const { return class_s_; }
  const std::vector<double>& sm_residency_s() const { return residency_s_; }
  const std::vector<TimelinePoint>& timeline() const { return timeline_; }
  double timeline_interval_s() const { return interval_s_; }
  // Whether the timeline reached kMaxTimelineRows (sim/core/limits.hpp) and stopped growing: the caller
  // refuses such a run (the interval is too fine for the simulated span).
  bool timeline_overflowed() const { return timeline_overflowed_; }

 private:
  void add_to_timeline(double t0, double dt, double p, double f, double m);
  std::size_t timeline_bin(double t) const;
  bool room_for(std::size_t bin);  // grows the timeline to hold `bin`; false past the row limit

  double total_j_ = 0, busy_s_ = 0, gap_j_ = 0, gap_s_ = 0, waiting_j_ = 0, waiting_s_ = 0, switch_j_ = 0;
  std::vector<StepTotals> steps_;
  std::vector<double> set_j_;
  std::vector<double> class_j_, class_s_;
  std::vector<double> residency_s_;
  double interval_s_;
  std::vector<TimelinePoint> timeline_;
  bool record_ = false;
  ActivityRecord cur_;
  std::vector<ActivityRecord> activities_;
  bool timeline_overflowed_ = false;
};

}  // namespace dvfs
