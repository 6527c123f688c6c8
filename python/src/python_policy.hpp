#pragma once
// A DVFS policy written in Python, for prototyping without recompiling. The engine calls it like any
// C++ policy (sim/policies/policy.hpp): `before_kernel(kernel, telemetry)` before each device activity
// and/or `on_tick(telemetry)` every `tick_period_s`. Whatever it returns (None, (sm_mhz, mem_mhz), or
// {"sm_mhz": .., "mem_mhz": ..}) becomes a clock request, checked against the GPU model. The GIL is
// held for the whole run (SimGrid's contexts run on the calling thread), so each callback is a plain
// Python call.
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"
#include "sim/policies/policy.hpp"

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

namespace dvfs_py {

// What a kernel view needs from its run: names to resolve ids and the model (bound to the trace) for
// time and power at other clocks. Shared so that a view kept after the run stays valid.
struct RunContext {
  std::vector<std::string> names, annotation_names;
  std::vector<dvfs::AnnotationSet> annotation_sets;
  std::shared_ptr<const dvfs::GpuModel> model;
};

// The kernel a Python policy sees: a copy of the replayed kernel plus its index in its GPU's stream.
struct KernelView {
  dvfs::Kernel kernel;
  long index = -1;
  int gpu = 0;
  std::shared_ptr<const RunContext> ctx;
};

class PythonPolicy : public dvfs::Policy {
 public:
  // `obj` is the user's policy; `rank` the GPU it drives.
  PythonPolicy(pybind11::object obj, std::shared_ptr<const RunContext> ctx, const std::vector<dvfs::Kernel>& stream, int rank);

  std::string name() const override { return name_; }
  dvfs::Actuator actuator() const override { return actuator_; }
  dvfs::ClockPair initial_clocks() const override { return initial_; }
  bool wants_kernel_events() const override { return !before_kernel_.is_none(); }
  std::optional<dvfs::ClockPair> before_kernel(const dvfs::Kernel& k, const dvfs::GpuTelemetry& t) override;
  double tick_period_s() const override { return tick_period_s_; }
  double telemetry_window_s() const override { return window_s_; }
  std::optional<dvfs::ClockPair> on_tick(const dvfs::GpuTelemetry& t) override;

  std::uint64_t calls() const { return calls_; }

 private:
  // None -> no request; (sm, mem) / {"sm_mhz", "mem_mhz"} -> a checked pair (a missing one keeps the
  // last request). `hook` names the callback in errors.
  std::optional<dvfs::ClockPair> to_request(const pybind11::handle& ret, const dvfs::GpuTelemetry& t, const char* hook) const;
  dvfs::ClockPair checked(double sm, double mem, const std::string& field) const;

  pybind11::object obj_, before_kernel_, on_tick_;
  std::shared_ptr<const RunContext> ctx_;
  const dvfs::Kernel* stream_begin_;
  std::size_t stream_size_;
  int rank_;
  std::string name_, who_;
  dvfs::Actuator actuator_ = dvfs::Actuator::nvml;
  dvfs::ClockPair initial_;
  double tick_period_s_ = 0, window_s_ = 0;
  std::uint64_t calls_ = 0;
};

void bind_policy_views(pybind11::module_& m);

}  // namespace dvfs_py
