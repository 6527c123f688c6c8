#pragma once
// A recording directory (layout of docs/recording-format.md): trace.json[.gz] (Kineto),
// telemetry.csv (NVML samples) and run.json (device read-outs, phases, steps with counter energy).
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"
#include "traces/src/kineto_importer.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct TelemetrySample {
  double t_ns = 0;
  double energy_mj = -1;        // cumulative counter, -1 if absent
  double power_w = -1;          // NVML power usage (1 s average on recent GPUs)
  double power_instant_w = -1;
  double sm_mhz = 0;
  double mem_mhz = 0;
};

class Telemetry {
 public:
  static Telemetry load_csv(const std::string& path);
  const std::vector<TelemetrySample>& samples() const { return samples_; }
  // Whether step energy can be measured: from the energy counter, or (when the counter never advances or
  // decreases) from power samples integrated over time; energy_note() says which and why.
  bool has_energy() const { return has_energy_ || use_power_; }
  const std::string& energy_note() const { return energy_note_; }
  double begin_ns() const { return samples_.front().t_ns; }
  double end_ns() const { return samples_.back().t_ns; }
  // Latest sample at or before t (the first sample before the recording starts).
  const TelemetrySample& at(double t_ns) const;
  // Energy counter interpolated between the instants it advanced (it ticks only every ~100 ms), or the
  // integral of the power samples when the counter is unusable; -1 when neither is there.
  double energy_j_between(double t0_ns, double t1_ns) const;
  // Median time between the counter's advances (~0.1 s on an H200); -1 with fewer than three advances.
  double counter_update_interval_s() const { return update_interval_s_; }
  // The longest stretch of [t0, t1]'s energy that is interpolation across missing readings: with the counter, the
  // longest span between the counter advances, or between the samples, bracketing t0 or t1, or from the last advance
  // to a bound after it (inside them the counter is exact); with power samples, the longest gap between samples that
  // overlaps [t0, t1]. ~0.1 s normally; a stalled poller more.
  double interpolated_span_s(double t0_ns, double t1_ns) const;
  // Time-weighted mean SM clock reported over [t0, t1].
  double mean_sm_mhz(double t0_ns, double t1_ns) const;
  const std::string& file() const { return file_; }

 private:
  double counter_j_at(double t_ns) const;
  double power_j_between(double t0_ns, double t1_ns) const;
  void check_counter();
  std::string file_;
  std::vector<TelemetrySample> samples_;
  std::vector<std::pair<double, double>> counter_points_;  // (t_ns, J) where the counter advanced
  bool has_energy_ = false;
  double update_interval_s_ = -1;
  bool use_power_ = false;   // the counter is unusable and power samples stand in
  std::string energy_note_;  // why the counter is not used (empty when it is)
};

// The counter's resolution rule: an interval's energy is a measurement only when the interval spans at least
// kCounterResolveUpdates of the counter's updates; shorter steps are compared over the profiled window.
inline constexpr int kCounterResolveUpdates = 2;
inline bool counter_resolves(double duration_s, double update_interval_s) {
  return update_interval_s > 0 && duration_s >= kCounterResolveUpdates * update_interval_s;
}

struct MeasuredStep {
  double t0_ns = 0, t1_ns = 0;
  double counter_energy_j = -1;  // run.json's counter difference over the step (coarse)
  double energy_j = -1;          // interpolated counter over [t0, t1]
  bool energy_resolved = false;  // the step spans >= kCounterResolveUpdates counter updates (counter_resolves)
  double interpolated_span_s = 0;  // Telemetry::interpolated_span_s over the step
  double mean_sm_mhz = 0;
};

struct Recording {
  std::string dir;
  Workload workload;
  ImportReport import_report;
  Telemetry telemetry;
  std::vector<MeasuredStep> steps;  // aligned with workload.ranks[0].steps
  Json run;
};

// Sets each kernel's recorded SM/memory clock to what the telemetry reported at its start.
void attach_recorded_clocks(Workload& wl, const Telemetry& tel, const std::string& trace_file);

Recording load_recording(const std::string& dir, const Classifier& classifier);
std::string find_trace_file(const std::string& dir);  // trace.json.gz or trace.json inside dir

}  // namespace dvfs
