#pragma once
// The narrow interface every DVFS policy sees. A policy is told about kernels (if it asks) and
// periodic telemetry ticks (if it has a period) and answers with clock requests; the engine applies
// them after the switch latency of the policy's actuator. Policies never touch engine internals.
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"

#include <memory>
#include <optional>
#include <string>

namespace dvfs {

// What a policy can observe, like a driver-level controller on a real GPU.
struct GpuTelemetry {
  double now_s = 0;
  ClockPair clocks;             // in effect now
  ClockPair requested;          // last requested (may still be in transition)
  double window_power_w = 0;    // mean power over the policy's telemetry window
  double last_tick_power_w = 0; // mean power since the previous tick
};

// A computation of a pipeline-parallel iteration: the forward or backward pass of one micro-batch
// on one model chunk of one stage; `index` is its position in the GPU's schedule.
struct ComputationInfo {
  int stage = 0, chunk = 0, microbatch = 0, index = 0;
  bool backward = false;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual Actuator actuator() const { return Actuator::nvml; }
  virtual ClockPair initial_clocks() const = 0;

  // Kernel-granularity hook, called before each device activity starts.
  virtual bool wants_kernel_events() const { return false; }
  virtual std::optional<ClockPair> before_kernel(const Kernel&, const GpuTelemetry&) { return std::nullopt; }

  // Computation-granularity hook: pipeline engines call it before each computation starts (plans per
  // pipeline instruction, as Perseus sets clocks).
  virtual std::optional<ClockPair> before_computation(const ComputationInfo&, const GpuTelemetry&) { return std::nullopt; }

  // Tick-granularity hook: period 0 means no ticks.
  virtual double tick_period_s() const { return 0; }
  virtual double telemetry_window_s() const { return tick_period_s(); }
  virtual std::optional<ClockPair> on_tick(const GpuTelemetry&) { return std::nullopt; }
};

// Highest supported clocks, never changed (no power cap: a clock-locked idealisation).
class MaxPolicy : public Policy {
 public:
  explicit MaxPolicy(const GpuModel& m) : clocks_(m.max_clocks()) {}
  std::string name() const override { return "max"; }
  ClockPair initial_clocks() const override { return clocks_; }

 private:
  ClockPair clocks_;
};

// Fixed clocks from the scenario (checked against the model's tables when the scenario is read).
class StaticPolicy : public Policy {
 public:
  explicit StaticPolicy(ClockPair c) : clocks_(c) {}
  std::string name() const override { return "static"; }
  ClockPair initial_clocks() const override { return clocks_; }

 private:
  ClockPair clocks_;
};

// Replays the SM/memory clocks a recording's telemetry reported for each kernel, so that a replay
// isolates the power model from the governor model. Switches are firmware changes already made.
class RecordedClockPolicy : public Policy {
 public:
  explicit RecordedClockPolicy(const GpuModel& m);
  std::string name() const override { return "recorded"; }
  Actuator actuator() const override { return Actuator::firmware; }
  ClockPair initial_clocks() const override { return model_.max_clocks(); }
  bool wants_kernel_events() const override { return true; }
  std::optional<ClockPair> before_kernel(const Kernel& k, const GpuTelemetry&) override;

 private:
  const GpuModel& model_;
};

}  // namespace dvfs
