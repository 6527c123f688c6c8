#include "sim/results/simulated_workload.hpp"

#include <map>

namespace dvfs {

namespace {

// The kernel as it ran: record `r` of program kernel `k`.
Kernel as_ran(const Kernel& k, const ActivityRecord& r, double previous_end_s) {
  Kernel out = k;
  const double dur = r.end_s - r.start_s;
  out.duration_s = dur;
  out.gap_before_s = r.start_s - previous_end_s;
  out.collective = 0;
  out.annotation_set = k.annotation_set;
  if (dur > 0) {
    out.recorded_sm_mhz = static_cast<float>(r.sm_mhz_time / dur);
    out.recorded_mem_mhz = static_cast<float>(r.mem_mhz_time / dur);
    if (k.duration_s > 0) scale_work_rates(out, k.duration_s / dur);
  }
  return out;
}

void add_steps(const RankOutcome& o, const Rank& program, int repeat, Rank& r) {
  const auto& steps = o.meter.steps();
  const std::size_t n = program.steps.size();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step s;
    s.label = repeat > 1 || n == 0 ? "step#" + std::to_string(i) : program.steps[i % n].label;
    r.steps.push_back(s);
  }
  const auto& recs = o.meter.activities();
  for (std::size_t i = 0; i < r.kernels.size(); ++i) {
    const std::int32_t st = r.kernels[i].step;
    if (st < 0 || static_cast<std::size_t>(st) >= r.steps.size()) {
      r.kernels[i].step = -1;
      continue;
    }
    Step& s = r.steps[static_cast<std::size_t>(st)];
    if (s.first_kernel < 0) {
      s.first_kernel = static_cast<std::int32_t>(i);
      s.lead_s = std::max(0.0, recs[i].start_s - steps[static_cast<std::size_t>(st)].start_s);
    }
    s.last_kernel = static_cast<std::int32_t>(i);
    s.tail_s = std::max(0.0, steps[static_cast<std::size_t>(st)].end_s - recs[i].end_s);
  }
}

}  // namespace

Workload simulated_workload(const TraceExport& t, const std::vector<std::vector<int>>& own_groups) {
  const Workload& src = *t.workload;
  const std::vector<CollectiveCall>& calls = t.collectives ? *t.collectives : src.collectives;
  Workload wl;
  wl.source = src.source;
  wl.names = src.names;
  wl.annotation_names = src.annotation_names;
  wl.annotation_sets = src.annotation_sets;
  wl.groups = src.groups;
  wl.group_names = src.group_names;
  wl.group_sizes = src.group_sizes;
  std::map<std::vector<int>, int> own;  // TP groups added for group -1 collectives
  for (std::size_t g = 0; g < t.gpus.size(); ++g) {
    const ExportedGpu& e = t.gpus[g];
    Rank r;
    r.id = e.pid;
    r.device_name = t.device_name;
    double end = 0;
    for (const ActivityRecord& rec : e.outcome->meter.activities()) {
      const Kernel& k = e.program->kernels[rec.kernel];
      Kernel out = as_ran(k, rec, end);
      out.step = rec.step;
      end = rec.end_s;
      if (k.collective) {
        CollectiveCall c = calls[k.collective - 1];
        const bool has_own = g < own_groups.size() && !own_groups[g].empty();
        if (c.group < 0 && has_own) {
          auto [it, inserted] = own.emplace(own_groups[g], static_cast<int>(wl.groups.size()));
          if (inserted) {
            wl.groups.push_back(own_groups[g]);
            wl.group_names.push_back("tp" + std::to_string(wl.groups.size() - 1));
            wl.group_sizes.push_back(static_cast<int>(own_groups[g].size()));
          }
          c.group = it->second;
        }
        if (c.group >= 0 || is_transfer(c.kind)) {
          wl.collectives.push_back(c);
          out.collective = static_cast<std::uint32_t>(wl.collectives.size());
          // a batch's further calls follow its first (CollectiveCall::batched)
          for (std::uint32_t b = 1; b <= c.batched; ++b) wl.collectives.push_back(calls[k.collective - 1 + b]);
        }
      }
      r.kernels.push_back(out);
      r.recorded_start_s.push_back(rec.start_s);
      if (rec.kernel < e.program->shapes.size()) r.shapes.push_back(e.program->shapes[rec.kernel]);
    }
    if (r.shapes.size() != r.kernels.size()) r.shapes.clear();
    add_steps(*e.outcome, *e.program, t.repeat, r);
    wl.ranks.push_back(std::move(r));
  }
  return wl;
}

}  // namespace dvfs
