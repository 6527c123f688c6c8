#pragma once
// A computation's time/energy curve: every way to run it (one SM clock of the GPU's table, or a
// per-kernel clock plan) with the model's time and energy. The frontier solver only needs the options
// no other beats on both time and *effective* energy E - P_blocking x t (Perseus: the energy above
// what the GPU would draw anyway while blocked; the total is sum(effective) + GPUs x T x P_blocking).
// Replaying a given plan needs every option, dominated or not, so the curve keeps all of them.
#include "models/src/gpu_model.hpp"
#include "models/src/stage_model.hpp"

#include <vector>

namespace dvfs {

struct CurveOption {
  ClockPair clocks;     // the clocks requested (the model may run lower under the power cap)
  double time_s = 0;
  double energy_j = 0;
  int variant = -1;     // >= 0: index of a per-kernel plan inside the computation; -1: one static clock
};

struct ComputationCurve {
  std::vector<CurveOption> options;
  std::vector<int> pareto;  // indices into options, fastest first: time ascending, effective energy descending
  double effective_j(int i, double p_blocking_w) const {
    const CurveOption& o = options[static_cast<std::size_t>(i)];
    return o.energy_j - p_blocking_w * o.time_s;
  }
  int fastest() const { return pareto.front(); }
  int cheapest() const { return pareto.back(); }
  // The option of a static SM clock (variant -1), or -1 when the curve has none at that clock.
  int option_at_sm_mhz(double sm_mhz) const;
};

// Sorts nothing away: keeps `options` as given and computes `pareto` (ties in time keep the cheaper,
// ties in both keep the first). Static-clock options below `min_sm_mhz` stay replayable but are not
// offered to the solver (e.g. clocks below a model's calibration range). Throws InputError on an
// empty list, non-positive times, or no option at or above the floor.
ComputationCurve make_curve(std::vector<CurveOption> options, double p_blocking_w, double min_sm_mhz = 0);

// The lower convex hull of the Pareto options in (time, effective energy), fastest first: the options
// a convex (Phillips-Dessouky) solver can land on.
std::vector<int> lower_hull(const ComputationCurve& c, double p_blocking_w);

// A whole computation measured once (anchor) and predicted at every SM clock of the model's table by
// the stage model (models/src/stage_model.hpp: time from the time share, power anchored at the
// measured power and scaled by the V-f curve). `cap_clock_mhz` > 0 replaces the model's cap with an
// SM clock that the board's power limit holds it to (f_e = min(f, cap_clock)), for a board whose
// limit differs from the model's; 0 = the model's own cap. Every clock of the table is an option;
// those below `min_sm_mhz` are not offered to the solver.
ComputationCurve stage_model_curve(const GpuModel& m, const ClassCoefficients& cc, const StageMeasurement& anchor,
                                   double p_blocking_w, double cap_clock_mhz = 0, double min_sm_mhz = 0);
StagePrediction anchored_prediction(const GpuModel& m, const ClassCoefficients& cc, const StageMeasurement& anchor,
                                    double sm_mhz, double cap_clock_mhz);

}  // namespace dvfs
