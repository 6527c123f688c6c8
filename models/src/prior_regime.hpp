#pragma once
// Which regime a workload's class priors are in (split rule shapeless_regime_prepass, models/README.md "Class priors
// below the cap"). The priors were set on kernels the GPU ran throttled at its power cap; kernels without counted work
// in a job that runs below the cap draw less. The regime comes from the trace alone (no telemetry, no recorded
// clock), by a native pre-pass at the top clocks, so a policy that slows a kernel, a replay exported and re-imported, or
// kernels coalesced by class keep the regime of the workload they came from.
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"

#include <string>

namespace dvfs {

// The share of the workload's kernel time (all ranks) in windows at the cap: each rank's activities laid end to end
// (recorded gaps, kernel durations at the model's top clocks), priced at the top clocks by `model` as it stands (for a
// bound model not placed in a regime: the at-cap priors for kernels without counted work; gaps at idle power), cut
// into consecutive windows of the native governor's window_s (a rank shorter than one window is one window, its tail
// window as long as it lasts). A window is at the cap when its mean power is at least class_prior_regime.cap_fraction
// (0.9 for a model without the key) x power.cap_w. 1 for a workload without kernel time (nothing to place).
// Read on its own it says which side of the cap a trace priced by class priors sits on (validate's class-prior note).
double at_cap_kernel_time_share(const Workload& wl, const GpuModel& model);

// The at-cap share of a model bound_to_workload placed: the share it was placed by, or (a model without
// class_prior_regime) the pre-pass's on `wl`. What run's summary and validate's note print.
double placed_at_cap_share(const GpuModel& placed, const Workload& wl);

// One sentence for reports on a trace priced mostly by class priors: which side of the cap the pre-pass puts it, and what
// the priors' measured error is on that side (validate --models, shapes withheld; docs/validation.md).
// `below_cap_scales_applied`: the model has class_prior_regime and the replay priced the trace with its below-cap scales.
std::string class_prior_regime_line(double at_cap_share, bool below_cap_scales_applied);

// The model a replay of `wl` prices with: bound to the workload's kernel names, and, for a model with
// class_prior_regime (no shipped model has it: split shapeless_regime_binary's outcome), its class priors in the
// workload's regime. Used by simulate() (every scenario replay, compare, validate, bench, the Python module) and
// synthetic runs; the control, GRPO and lifecycle models and the Python per-kernel query bind by name only (at-cap priors).
GpuModel bound_to_workload(const GpuModel& unbound, const Workload& wl);

}  // namespace dvfs
