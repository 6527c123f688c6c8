#pragma once
// Small hand-built workloads whose replay results can be computed by hand.
#include "models/src/model_registry.hpp"
#include "sim/engine/engine.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/simulation/simulation.hpp"

namespace dvfs::testing {

inline Kernel make_kernel(KernelClass c, double dur_s, double gap_s, float rec_sm = 1980, float rec_mem = 3201) {
  Kernel k;
  k.cls = c;
  k.duration_s = dur_s;
  k.gap_before_s = gap_s;
  k.recorded_sm_mhz = rec_sm;
  k.recorded_mem_mhz = rec_mem;
  return k;
}

// One rank, one step spanning all kernels.
inline Workload one_step_workload(std::vector<Kernel> ks) {
  Workload wl;
  wl.source = "hand-built";
  Rank r;
  for (auto& k : ks) k.step = 0;
  r.kernels = std::move(ks);
  Step s;
  s.label = "step0";
  s.first_kernel = 0;
  s.last_kernel = static_cast<int>(r.kernels.size()) - 1;
  r.steps.push_back(s);
  r.recorded_start_s.assign(r.kernels.size(), 0.0);
  wl.ranks.push_back(std::move(r));
  return wl;
}

inline std::vector<RankOutcome> replay(const Workload& wl, const GpuModel& m, const PolicySpec& spec,
                                       ReplayOptions opts = {}, EngineMode mode = EngineMode::local_loop) {
  return run_engine(wl, m, make_policy_factory(spec, m, "test"), opts, mode);
}

}  // namespace dvfs::testing
