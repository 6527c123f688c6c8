#include "sim/results/summary.hpp"

#include "models/src/prior_regime.hpp"

#include "sim/core/text_format.hpp"
#include "sim/results/recording_gpu.hpp"
#include "traces/src/multi_rank.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace dvfs {

namespace {

// Rounded to nanojoule/nanosecond-scale precision so that results read cleanly and compare exactly.
double q(double v) { return std::round(v * 1e9) / 1e9; }
double safe_div(double a, double b) { return b > 0 ? a / b : 0.0; }

// How many activities the power model prices from their own work (operator shapes, copy engine) and how many
// from their kernel class's prior (a trace recorded without record_shapes, tensor-list operators).
Json describe_work_sources(const Workload& wl) {
  std::size_t counts[kWorkSourceCount] = {};
  for (const Rank& r : wl.ranks)
    for (const Kernel& k : r.kernels) ++counts[static_cast<int>(k.work)];
  const std::size_t sized_elementwise = counts[static_cast<int>(WorkSource::launch_elementwise)];
  return {{"from_shapes", counts[static_cast<int>(WorkSource::shapes)]},
          {"from_launch_shape", counts[static_cast<int>(WorkSource::launch_shape)]},
          {"copy_engine", counts[static_cast<int>(WorkSource::copy_engine)]},
          // NCCL kernels of sends / receives the trace sizes, priced by their bytes (split nccl_transfers_by_bytes)
          {"transfer_bytes", counts[static_cast<int>(WorkSource::transfer_bytes)]},
          {"class_prior", counts[static_cast<int>(WorkSource::unknown)] + sized_elementwise},
          // of those, ATen elementwise kernels sized from their launch (priced from that size only by a model whose
          // class_prior_regime does so below the cap)
          {"class_prior_elementwise_sized_from_launch", sized_elementwise},
          // of the kernels' recorded time, the share priced by the class priors (no counted work)
          {"class_prior_kernel_time_share", class_prior_kernel_time_share(wl)}};
}

// What the user should know about the trace, one line each: the importer's notes, a trace recorded on an AMD GPU
// (ROCm) replayed on a model of another vendor's GPU, and one recorded on another NVIDIA chip replayed as recorded
// (`retargeted`: the scenario names the recording GPU, whose kernel times are then moved).
Json trace_notes(const ImportReport& rep, const GpuModel& model, bool retargeted) {
  Json notes = Json::array();
  for (const std::string& n : rep.notes) notes.push_back(n);
  std::string gpu = model.display_name();
  for (char& c : gpu) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool amd_model = gpu.find("amd") != std::string::npos || gpu.find("instinct") != std::string::npos;
  if (rep.device_platform == "rocm" && !amd_model)
    notes.push_back("the trace was recorded on " + (rep.device_name.empty() ? std::string("an AMD GPU") : rep.device_name) +
                    " (ROCm) and is replayed on the " + model.name() + " model (" + model.display_name() +
                    "): its kernel times and launch shapes are that GPU's, not this one's");
  if (rep.device_platform != "rocm")
    if (const auto note = other_gpu_note(rep.device_name, model, retargeted)) notes.push_back(*note);
  return notes;
}

// The run's header: scenario, GPU, policy, engine, the trace and its collectives.
Json describe_run(const Scenario& sc, const Workload& wl, const ImportReport& rep, const GpuModel& model,
                  const std::vector<RankOutcome>& outcomes) {
  Json s;
  s["scenario"] = sc.name;
  s["gpu"] = {{"name", model.name()}, {"display_name", model.display_name()}, {"status", model.status()},
              {"power_cap_w", model.power_cap_w()}, {"activity_model", model.activity().present}};
  if (model.prior_regime().present) {  // split shapeless_regime_prepass: what the pre-pass placed this trace's priors at
    Json scales = Json::object();
    for (int c = 0; c < kKernelClassCount; ++c)
      if (model.prior_regime().below_cap_scale[c] != 1.0)
        scales[to_string(static_cast<KernelClass>(c))] = model.regime_scale(static_cast<KernelClass>(c));
    s["gpu"]["class_prior_regime"] = {{"at_cap_kernel_time_share", model.at_cap_share()},
                                      {"regime", model.below_cap_priors() ? "below the cap" : "at the cap"},
                                      {"prior_scales", scales}};
  }
  if (sc.policy.power_cap_w > 0) {  // the scenario's cap replaces the model's
    s["gpu"]["power_cap_w"] = sc.policy.power_cap_w;
    s["gpu"]["model_power_cap_w"] = model.power_cap_w();
  }
  s["policy"] = outcomes.empty() ? sc.policy.name : outcomes.front().policy;
  s["engine"] = to_string(sc.mode);
  s["seed"] = sc.replay.seed;
  std::size_t steps_in_trace = 0;
  for (const Rank& r : wl.ranks) steps_in_trace += r.steps.size();
  s["trace"] = {{"source", wl.source}, {"schema", rep.schema}, {"activities", wl.kernel_count()},
                {"overlapped_activities", rep.overlapped_activities}, {"steps", steps_in_trace},
                {"step_source", rep.step_source}, {"annotation_source", rep.annotation_source},
                {"repeat", sc.replay.repeat}};
  s["trace"]["work"] = describe_work_sources(wl);
  // Which side of the cap the kernels priced by class priors sit on (prior_regime.hpp): the priors' error differs there.
  if (model.activity().present && s["trace"]["work"].value("class_prior_kernel_time_share", 0.0) > 0)
    s["trace"]["work"]["class_prior_at_cap_kernel_time_share"] = placed_at_cap_share(model, wl);
  if (const Json notes = trace_notes(rep, model, !sc.trace_gpu.empty()); !notes.empty()) s["notes"] = notes;
  if (!wl.collectives.empty()) {
    s["collectives"] = describe_collectives(wl);
    const ClusterSpec cs = cluster_for(sc, model);
    s["collectives"]["network"] = {{"topology", to_string(cs.topology)}, {"gpus_per_node", cs.gpus_per_node},
                                   {"intra_bw_bps", cs.intra_bw_bps}, {"inter_bw_bps", cs.inter_bw_bps}};
  }
  return s;
}

// Sums over every GPU (in rank order), and the per-GPU and per-step rows.
struct RunTotals {
  double end_s = 0, energy = 0, busy = 0, gap_s = 0, gap_j = 0, waiting_s = 0, waiting_j = 0, switch_j = 0;
  std::uint64_t waiting_gpus = 0, events = 0, switches = 0, applied = 0;
  double switch_lat = 0;
  std::vector<double> phase_j, class_j, class_s;
  std::map<std::string, double> annotation_j;
  std::vector<double> residency;
  Json per_gpu = Json::array();
  Json steps = Json::array();

  explicit RunTotals(std::size_t sm_clocks)
      : phase_j(kPhaseCount, 0.0), class_j(kKernelClassCount, 0.0), class_s(kKernelClassCount, 0.0), residency(sm_clocks, 0.0) {}
};

// One GPU's row of per_gpu; `clock_time` is its SM clock integrated over time (MHz*s).
Json per_gpu_row(const RankOutcome& o, double clock_time) {
  const EnergyMeter& m = o.meter;
  const double span = o.stats.metered_end_s();
  return {{"rank", o.rank},
          {"time_s", q(o.stats.end_s)},
          {"waiting_for_job_end_s", q(o.stats.waiting_s)},
          {"energy_j", q(m.total_j())},
          {"mean_power_w", q(safe_div(m.total_j(), span))},
          {"mean_sm_mhz", q(safe_div(clock_time, span))},
          {"busy_s", q(m.busy_s())},
          {"kernel_events", o.stats.kernel_events},
          {"clock_switches", o.stats.clock_switches},
          {"switches_applied", o.stats.switches_applied},
          {"switch_latency_s", q(o.stats.switch_latency_s)},
          {"switch_energy_j", q(m.switch_j())},
          {"policy_ticks", o.stats.ticks},
          {"segments", o.stats.segments},
          {"simgrid_end_s", q(o.simgrid_end_s)}};
}

// One GPU's steps, labelled from its rank's steps (repeats reuse the labels).
void add_step_rows(Json& steps, const RankOutcome& o, const Rank& rank) {
  const EnergyMeter& m = o.meter;
  for (std::size_t i = 0; i < m.steps().size(); ++i) {
    const StepTotals& st = m.steps()[i];
    const double t = st.end_s - st.start_s;
    const Step& src = rank.steps[i % rank.steps.size()];
    steps.push_back({{"rank", o.rank},
                     {"index", i},
                     {"label", src.label},
                     {"start_s", q(st.start_s)},
                     {"time_s", q(t)},
                     {"energy_j", q(st.energy_j)},
                     {"mean_power_w", q(safe_div(st.energy_j, t))},
                     {"mean_sm_mhz", q(safe_div(st.sm_mhz_time, t))},
                     {"busy_s", q(st.busy_s)},
                     {"kernels", st.kernels}});
  }
}

void add_outcome(RunTotals& tot, const RankOutcome& o, const Rank& rank, const Workload& wl, const GpuModel& model) {
  const EnergyMeter& m = o.meter;
  tot.end_s = std::max(tot.end_s, o.stats.end_s);
  tot.energy += m.total_j();
  tot.busy += m.busy_s();
  tot.gap_s += m.gap_s();
  tot.gap_j += m.gap_j();
  tot.waiting_s += m.waiting_s();
  tot.waiting_j += m.waiting_j();
  if (m.waiting_s() > 0) ++tot.waiting_gpus;
  tot.events += o.stats.kernel_events;
  tot.switches += o.stats.clock_switches;
  tot.applied += o.stats.switches_applied;
  tot.switch_lat += o.stats.switch_latency_s;
  tot.switch_j += m.switch_j();
  for (std::size_t set = 0; set < m.annotation_set_j().size(); ++set) {
    const double e = m.annotation_set_j()[set];
    tot.phase_j[static_cast<int>(wl.annotation_sets[set].phase)] += e;
    for (std::uint32_t a : wl.annotation_sets[set].annotations) tot.annotation_j[wl.annotation_names[a]] += e;
  }
  for (int c = 0; c < kKernelClassCount; ++c) {
    tot.class_j[c] += m.class_j()[c];
    tot.class_s[c] += m.class_s()[c];
  }
  double clock_time = 0;
  for (std::size_t i = 0; i < tot.residency.size(); ++i) {
    tot.residency[i] += m.sm_residency_s()[i];
    clock_time += m.sm_residency_s()[i] * model.sm_clocks_mhz()[i];
  }
  tot.per_gpu.push_back(per_gpu_row(o, clock_time));
  add_step_rows(tot.steps, o, rank);
}

// totals, steps, energy by phase / annotation / class, time by class, SM clock residency, per_gpu.
void write_totals(Json& s, const RunTotals& tot, const GpuModel& model, std::size_t gpus) {
  double clock_time = 0, total_res = 0;
  for (std::size_t i = 0; i < tot.residency.size(); ++i) {
    clock_time += tot.residency[i] * model.sm_clocks_mhz()[i];
    total_res += tot.residency[i];
  }
  s["totals"] = {{"time_s", q(tot.end_s)},
                 {"energy_j", q(tot.energy)},
                 {"mean_power_w", q(safe_div(tot.energy, tot.end_s * static_cast<double>(std::max<std::size_t>(1, gpus))))},
                 {"mean_sm_mhz", q(safe_div(clock_time, total_res))},
                 {"busy_s", q(tot.busy)},
                 {"host_gap_s", q(tot.gap_s)},
                 {"waiting_for_job_end_s", q(tot.waiting_s)},
                 {"gpus_waiting_for_job_end", tot.waiting_gpus},
                 {"kernel_events", tot.events},
                 {"clock_switches", tot.switches},
                 {"switches_applied", tot.applied},
                 {"switch_latency_s", q(tot.switch_lat)},
                 {"switch_energy_j", q(tot.switch_j)}};
  s["steps"] = tot.steps;
  Json phases;
  for (int p = 0; p < kPhaseCount; ++p) phases[to_string(static_cast<Phase>(p))] = q(tot.phase_j[p]);
  phases["host_gaps"] = q(tot.gap_j);
  phases["waiting_for_job_end"] = q(tot.waiting_j);  // GPUs whose rank ended before the job's last one
  phases["clock_switches"] = q(tot.switch_j);  // transition energy: in no phase, class or annotation
  s["energy_by_phase_j"] = phases;
  Json ann = Json::object();
  for (const auto& [name, e] : tot.annotation_j) ann[name] = q(e);
  s["energy_by_annotation_j"] = ann;
  Json cls, cls_t;
  for (int c = 0; c < kKernelClassCount; ++c) {
    cls[to_string(static_cast<KernelClass>(c))] = q(tot.class_j[c]);
    cls_t[to_string(static_cast<KernelClass>(c))] = q(tot.class_s[c]);
  }
  s["energy_by_class_j"] = cls;
  s["time_by_class_s"] = cls_t;
  Json res = Json::array();
  for (std::size_t i = tot.residency.size(); i-- > 0;)
    if (tot.residency[i] > 0) res.push_back({{"sm_mhz", model.sm_clocks_mhz()[i]}, {"time_s", q(tot.residency[i])}});
  s["sm_clock_residency"] = res;
  s["per_gpu"] = tot.per_gpu;
}

}  // namespace

Json build_summary(const Scenario& sc, const Workload& wl, const ImportReport& rep, const GpuModel& model,
                   const std::vector<RankOutcome>& outcomes) {
  Json s = describe_run(sc, wl, rep, model, outcomes);
  RunTotals tot(model.sm_clocks_mhz().size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) add_outcome(tot, outcomes[i], wl.ranks[i], wl, model);
  write_totals(s, tot, model, outcomes.size());
  return s;
}

TimelineColumns timeline_columns(const std::vector<RankOutcome>& outcomes) {
  TimelineColumns c;
  for (const RankOutcome& o : outcomes) {
    const auto& tl = o.meter.timeline();
    const double dt = o.meter.timeline_interval_s();
    double cumulative = 0;
    for (std::size_t i = 0; i < tl.size(); ++i) {
      const double t0 = static_cast<double>(i) * dt;
      // The last interval may be partial: average over the part that was simulated.
      const double width = std::min(dt, o.stats.metered_end_s() - t0);
      if (width <= 0) break;
      cumulative += tl[i].energy_j;
      c.gpu.push_back(o.rank);
      c.t_s.push_back(t0 + width);
      c.power_w.push_back(tl[i].energy_j / width);
      c.sm_mhz.push_back(tl[i].sm_mhz_time / width);
      c.mem_mhz.push_back(tl[i].mem_mhz_time / width);
      c.energy_j.push_back(cumulative);
    }
  }
  return c;
}

std::string timeline_csv(const std::vector<RankOutcome>& outcomes) {
  const TimelineColumns c = timeline_columns(outcomes);
  std::ostringstream os;
  os << "gpu,t_s,power_w,sm_mhz,mem_mhz,energy_j\n";
  char line[160];
  for (std::size_t i = 0; i < c.t_s.size(); ++i) {
    std::snprintf(line, sizeof line, "%d,%.6f,%.3f,%.1f,%.1f,%.6f\n", c.gpu[i], c.t_s[i], c.power_w[i], c.sm_mhz[i],
                  c.mem_mhz[i], c.energy_j[i]);
    os << line;
  }
  return os.str();
}

std::string collectives_line(const Json& c) {
  const auto recorded = c["calls_at_recorded_duration"].get<std::size_t>();
  std::string line = printf_text("collectives: %zu simulated on the cluster, %zu at their recorded duration",
                                 c["calls_simulated"].get<std::size_t>(), recorded);
  // older summaries have no count of batched kernels
  std::string batched;
  if (const std::size_t batches = c.value("batched_kernels", std::size_t{0}); batches > 0)
    batched = printf_text("; %zu of the calls made by %zu batched kernel%s (sends and receives of one NCCL group, posted together)",
                          c.value("batched_calls", std::size_t{0}), batches, batches == 1 ? "" : "s");
  if (recorded == 0) return line + batched + "\n";
  std::vector<std::string> partial;
  std::size_t in_partial = 0;
  for (const Json& g : c["groups"])
    if (!g.value("simulated", g["complete"].get<bool>()) && g["calls"].get<std::size_t>() > 0) {  // older summaries: no "simulated"
      in_partial += g["calls"].get<std::size_t>();
      if (partial.size() < 4)
        partial.push_back(printf_text("\"%s\" of %d rank%s, %zu call%s", g["name"].get<std::string>().c_str(), g["size"].get<int>(),
                                      g["size"].get<int>() == 1 ? "" : "s",
                                      g["calls"].get<std::size_t>(), g["calls"].get<std::size_t>() == 1 ? "" : "s"));
      else if (partial.size() == 4)
        partial.push_back("...");
    }
  std::string why;
  for (const std::string& p : partial) why += (why.empty() ? "" : "; ") + p;
  if (!why.empty()) why = "process groups not simulated, their ranks not all in this import, their calls differing or of one rank: " + why;
  // older summaries (a replay's own, read back) have no count of transfers without a peer
  const std::size_t peerless = std::min(recorded - std::min(recorded, in_partial), c.value("point_to_point_without_peer", std::size_t{0}));
  if (peerless > 0)
    why += printf_text("%s%zu send%s or receive%s naming no peer: none recorded, or inferred from \"nccl:send\" / \"nccl:recv\" "
                       "names and left unpaired, their counts or bytes differing across ranks or their order one a replay cannot finish",
                       why.empty() ? "" : "; ", peerless, peerless == 1 ? "" : "s", peerless == 1 ? "" : "s");
  const std::size_t to_self = std::min(recorded - std::min(recorded, in_partial + peerless), c.value("point_to_point_to_self", std::size_t{0}));
  if (to_self > 0)
    why += printf_text("%s%zu send%s or receive%s of a rank to itself (NCCL copies them on the GPU)", why.empty() ? "" : "; ", to_self,
                       to_self == 1 ? "" : "s", to_self == 1 ? "" : "s");
  if (recorded > in_partial + peerless + to_self)
    why += printf_text("%s%zu call%s without a process group or whose peer rank is not in this import", why.empty() ? "" : "; ",
                       recorded - in_partial - peerless - to_self, recorded - in_partial - peerless - to_self == 1 ? "" : "s");
  return line + " (" + why + ")" + batched + "\n";
}

std::string format_report(const Json& s) {
  std::ostringstream os;
  char buf[256];
  os << "dvfs-sim " << s["scenario"].get<std::string>() << ": " << s["gpu"]["display_name"].get<std::string>() << " ["
     << s["gpu"]["status"].get<std::string>() << "], policy " << s["policy"].get<std::string>() << ", engine "
     << s["engine"].get<std::string>() << "\n";
  os << "trace " << s["trace"]["source"].get<std::string>() << ": " << s["trace"]["activities"].get<std::size_t>()
     << " device activities, " << s["trace"]["steps"].get<std::size_t>() << " steps\n";
  if (s.contains("collectives")) os << collectives_line(s["collectives"]);
  // How much of the kernel time the activity model prices from counted work: a trace recorded without operator
  // shapes is priced by the class priors, which read high off the power cap (validate --models, shapes withheld).
  if (const Json& w = s["trace"]["work"]; w.contains("class_prior_kernel_time_share") && s["gpu"].value("activity_model", false)) {
    const double prior = w["class_prior_kernel_time_share"].get<double>();
    std::snprintf(buf, sizeof buf, "kernel time priced from counted work %.0f %%, by class priors %.0f %%\n", 100 * (1 - prior),
                  100 * prior);
    os << buf;
    if (prior > kMostlyClassPriorShare) {
      os << "  (kernels no counted work reached: their operators carry no shapes, the trace does not link them to their\n"
            "  operators, or they ran in CUDA-graph replays; a trace recorded with record_shapes=True is priced from its work;\n"
            "  class priors read high off the power cap: `dvfs-sim validate --models`, column \"shapes withheld\")\n";
      if (w.contains("class_prior_at_cap_kernel_time_share"))
        os << "  "
           << class_prior_regime_line(w["class_prior_at_cap_kernel_time_share"].get<double>(), s["gpu"].contains("class_prior_regime"))
           << "\n";
    }
  }
  os << "\n";
  std::snprintf(buf, sizeof buf, "%-4s %-6s %-12s %10s %11s %9s %12s\n", "gpu", "step", "label", "time (ms)",
                "energy (J)", "mean (W)", "mean SM MHz");
  os << buf;
  const auto& steps = s["steps"];
  const std::size_t max_rows = 40;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i == max_rows) {
      os << "  ... " << steps.size() - max_rows << " more steps in summary.json\n";
      break;
    }
    const auto& st = steps[i];
    os << printf_text("%-4d %-6zu %-12s %10.2f %11.2f %9.1f %12.0f\n", st["rank"].get<int>(), st["index"].get<std::size_t>(),
                      st["label"].get<std::string>().c_str(), st["time_s"].get<double>() * 1e3, st["energy_j"].get<double>(),
                      st["mean_power_w"].get<double>(), st["mean_sm_mhz"].get<double>());
  }
  const auto& t = s["totals"];
  std::snprintf(buf, sizeof buf, "%-4s %-6s %-12s %10.2f %11.2f %9.1f %12.0f\n", "all", "total", "",
                t["time_s"].get<double>() * 1e3, t["energy_j"].get<double>(), t["mean_power_w"].get<double>(),
                t["mean_sm_mhz"].get<double>());
  os << buf;
  // Requests superseded before their latency passed never take effect: the latency summed over the requests can
  // exceed the run's time when a policy asks for clocks faster than the GPU switches.
  std::snprintf(buf, sizeof buf,
                "\nbusy %.1f%% of the time; %llu clock requests, %llu took effect (%.3f s of switch latency summed over the "
                "requests, %.3f J of transition energy)\n",
                100.0 * t["busy_s"].get<double>() / std::max(1e-12, t["time_s"].get<double>() * static_cast<double>(s["per_gpu"].size())),
                static_cast<unsigned long long>(t["clock_switches"].get<std::uint64_t>()),
                static_cast<unsigned long long>(t.value("switches_applied", std::uint64_t{0})), t["switch_latency_s"].get<double>(),
                t["switch_energy_j"].get<double>());
  os << buf;
  if (const double waiting = t.value("waiting_for_job_end_s", 0.0); waiting > 0)
    os << printf_text("%llu of %zu GPUs ended before the job's last rank and idle until it ends: %.3f GPU-seconds, %.1f J "
                      "(phase waiting_for_job_end)\n",
                      static_cast<unsigned long long>(t.value("gpus_waiting_for_job_end", std::uint64_t{0})), s["per_gpu"].size(),
                      waiting, s["energy_by_phase_j"].value("waiting_for_job_end", 0.0));
  const double total = std::max(1e-12, t["energy_j"].get<double>());
  auto shares = [&](const char* title, const Json& m) {
    os << title;
    std::vector<std::pair<double, std::string>> v;
    for (auto it = m.begin(); it != m.end(); ++it) v.emplace_back(it.value().get<double>(), it.key());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [e, name] : v) {
      if (e <= 0) continue;
      std::snprintf(buf, sizeof buf, "  %s %.1f J (%.1f%%)", name.c_str(), e, 100.0 * e / total);
      os << buf;
    }
    os << "\n";
  };
  shares("energy by phase:", s["energy_by_phase_j"]);
  shares("energy by class:", s["energy_by_class_j"]);
  return os.str();
}

}  // namespace dvfs
