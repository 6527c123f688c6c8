#include "models/src/retarget.hpp"

#include "sim/core/errors.hpp"

namespace dvfs {

RetargetReport retarget_workload(Workload& wl, const GpuModel& from, const GpuModel& to) {
  const GpuSpecs &fs = from.specs(), &ts = to.specs();
  for (const GpuModel* m : {&from, &to})
    if (m->specs().bf16_dense_tflops <= 0 || m->specs().mem_bandwidth_gbs <= 0)
      throw InputError(m->source_file(), "specs", "retargeting a trace needs bf16_dense_tflops and mem_bandwidth_gbs");
  RetargetReport rep;
  rep.from = from.name();
  rep.to = to.name();
  rep.compute_ratio = fs.bf16_dense_tflops / ts.bf16_dense_tflops;
  rep.memory_ratio = fs.mem_bandwidth_gbs / ts.mem_bandwidth_gbs;
  for (Rank& r : wl.ranks) {
    for (Kernel& k : r.kernels) {
      const double f = k.recorded_sm_mhz > 0 ? k.recorded_sm_mhz : from.default_clocks().sm_mhz;
      const double m = k.recorded_mem_mhz > 0 ? k.recorded_mem_mhz : from.default_clocks().mem_mhz;
      // Coefficients the source model replays this kernel with (per-kernel shares included).
      const ClassCoefficients* cc = &from.coefficients(k.cls);
      for (const auto& kv : from.kernel_overrides())
        if (k.name_id < wl.names.size() && wl.names[k.name_id] == kv.first) cc = &kv.second;
      const double shape_rec = from.time_shape(*cc, f, m);
      const double sm_part = cc->time_sm * from.max_sm_mhz() / f / shape_rec;
      const double mem_part = cc->time_mem * from.max_mem_mhz() / m / shape_rec;
      const double rest = 1.0 - sm_part - mem_part;
      rep.recorded_busy_s += k.duration_s;
      // SM part: throughput at the recorded clock on the source vs the target's top clock.
      // Each part first moved to the source's top clocks (where the datasheet figures hold), then scaled.
      const double recorded_s = k.duration_s;
      k.duration_s *= sm_part * rep.compute_ratio * f / from.max_sm_mhz() +
                      mem_part * rep.memory_ratio * m / from.max_mem_mhz() + rest;
      // the same work done in the new time: its rates move inversely
      if (k.duration_s > 0) scale_work_rates(k, recorded_s / k.duration_s);
      k.recorded_sm_mhz = static_cast<float>(to.max_sm_mhz());
      k.recorded_mem_mhz = static_cast<float>(to.max_mem_mhz());
      rep.retargeted_busy_s += k.duration_s;
    }
  }
  return rep;
}

}  // namespace dvfs
