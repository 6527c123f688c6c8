#include "sim/lifecycle/lifecycle_run.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "sim/lifecycle/lifecycle_sim.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "sim/simulation/simulation.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace dvfs {
namespace {

// One step's GPU cost from replaying a recording's profiled steps on the GPU model (native governor, or a
// static SM clock when sm_mhz > 0): the kernels' busy time and the energy outside host gaps, per step.
StepCost replay_step_cost(const std::string& trace, const std::string& gpu, double sm_mhz, const std::string& file) {
  Json doc = {{"name", "lifecycle-step-replay"}, {"trace", trace}, {"gpu", gpu}};
  if (sm_mhz > 0) doc["policy"] = {{"name", "static"}, {"sm_mhz", sm_mhz}};
  else doc["policy"] = "native";
  const Scenario sc = parse_scenario(doc, file, "");
  const Json s = simulate(sc).summary;
  const double steps = static_cast<double>(s.at("steps").size());
  if (steps < 1) throw InputError(file, "lifecycle.phases[].trace", "expected a recording with profiled steps: " + trace);
  const double busy = s.at("totals").at("busy_s").get<double>();
  const double gaps_j = s.at("energy_by_phase_j").value("host_gaps", 0.0);
  StepCost c;
  c.gpu_busy_s = busy / steps;
  c.gpu_busy_j = (s.at("totals").at("energy_j").get<double>() - gaps_j) / steps;
  c.gpu_busy_w = c.gpu_busy_j / c.gpu_busy_s;
  return c;
}

// A given step cost moved to a static SM clock with the GPU model's GEMM-class time and power shapes (a
// synthesised step has no kernels of its own).
StepCost shift_step_cost(const StepCost& c, const GpuModel& m, double sm_mhz) {
  const ClassCoefficients& cc = m.coefficients(KernelClass::gemm);
  const double mem = m.default_clocks().mem_mhz, top = m.default_clocks().sm_mhz;
  StepCost s = c;
  s.gpu_busy_s = c.gpu_busy_s * m.time_shape(cc, sm_mhz, mem) / m.time_shape(cc, top, mem);
  const double w = (c.gpu_busy_j > 0 ? c.gpu_busy_j / c.gpu_busy_s : c.gpu_busy_w);
  s.gpu_busy_w = w * m.coefficient_power_at(cc, sm_mhz, mem) / m.coefficient_power_at(cc, top, mem);
  s.gpu_busy_j = s.gpu_busy_w * s.gpu_busy_s;
  return s;
}

struct Context {
  const LifecycleSpec& spec;
  const GpuModel& model;
  std::map<std::pair<std::string, double>, StepCost> replays;

  StepCost step_cost(const LifecyclePhase& p, double sm_mhz) {
    if (p.trace.empty()) return sm_mhz > 0 ? shift_step_cost(p.step, model, sm_mhz) : p.step;
    auto key = std::make_pair(p.trace, sm_mhz);
    auto it = replays.find(key);
    if (it == replays.end()) it = replays.emplace(key, replay_step_cost(p.trace, spec.gpu, sm_mhz, spec.file)).first;
    return it->second;
  }
};

bool stepped(const LifecyclePhase& p) { return p.kind == "train" || p.kind == "validation"; }

// GPU power while a checkpoint's tensors go to the host: a copy-engine transfer (SMs idle) reading `bps` bytes/s of
// device memory, priced by the GPU model at its default clocks (activity model: copy_engine_w + DRAM pJ/B).
double d2h_copy_w(const GpuModel& m, double bps) {
  Kernel k;
  k.kind = ActivityKind::memcpy;
  k.cls = KernelClass::copy;
  k.work = WorkSource::copy_engine;
  k.memory_tbps = static_cast<float>(bps / 1e12);
  k.sm_fill = 0;
  const ClockPair c = m.default_clocks();
  return m.kernel_power_w(k, m.sm_index(c.sm_mhz), m.mem_index(c.mem_mhz));
}

// The phases as a policy runs them; `base` (the run without policy) says which phases wait for data.
std::vector<SimPhase> plan(Context& ctx, const LifecyclePolicy* pol, const std::vector<PhaseOutcome>* base) {
  const LifecycleSpec& s = ctx.spec;
  std::map<std::string, std::string> unstaged;  // staging target -> its source, when the policy skips staging
  std::vector<SimPhase> out;
  // Before the first steps or checkpoint the GPU has not left its no-context idle state: a checkpoint saves GPU
  // tensors, so its process holds a CUDA context (split.json gpu_context_amendment: the save probes drew ~125 W).
  bool gpu_used = false;
  std::map<std::string, int> seen;  // phases of each kind so far: the first of a kind pays its one-time costs
  const double copy_w = d2h_copy_w(ctx.model, s.node.gpu_d2h_bps);
  for (std::size_t i = 0; i < s.phases.size(); ++i) {
    // A GPU between steps keeps its clocks (the GPU model's idle power at its default clock); one left idle
    // for a whole phase settles to the node's measured idle draw.
    const double active_idle_w = ctx.model.idle_power_at(ctx.model.default_clocks().sm_mhz);
    gpu_used = gpu_used || stepped(s.phases[i]) || s.phases[i].kind == "checkpoint";
    SimPhase sp{s.phases[i], gpu_used ? active_idle_w : s.node.gpu_idle_w, copy_w};
    if (auto w = s.first_occurrence.find(sp.phase.kind); w != s.first_occurrence.end() && seen[sp.phase.kind]++ == 0)
      sp.phase.warmup = w->second;
    if (pol && !pol->dataset_on.empty() && sp.phase.kind == "staging" && sp.phase.from != pol->dataset_on) {
      sp.phase.from = pol->dataset_on;  // the dataset was written there: none of it is dirty in this node's page cache
      sp.phase.sync_bytes = sp.phase.sync_files = 0;
    }
    if (pol && pol->staging == "skip" && sp.phase.kind == "staging") {
      unstaged[sp.phase.to] = sp.phase.from;
      continue;
    }
    if (stepped(sp.phase)) {
      if (auto it = unstaged.find(sp.phase.read_from); it != unstaged.end()) sp.phase.read_from = it->second;
      // Input-bound: the GPU waits for its input (batches, or the host's launches) in the run without policy:
      // batches made it wait for over 10 % of the phase, or it was busy for under half of it.
      const bool input_bound = base && ((*base)[i].data_wait_s > 0.1 * (*base)[i].time_s || (*base)[i].gpu_busy_s < 0.5 * (*base)[i].time_s);
      const double mhz = pol && input_bound ? pol->gpu_sm_mhz_input_bound : 0;
      sp.phase.step = ctx.step_cost(sp.phase, mhz);
      if (mhz > 0) sp.gpu_idle_w = ctx.model.idle_power_at(mhz);
    }
    out.push_back(sp);
  }
  return out;
}

Json phase_json(const PhaseOutcome& o) {
  return {{"name", o.name}, {"kind", o.kind}, {"time_s", o.time_s}, {"cpu_j", o.cpu_j}, {"gpu_j", o.gpu_j},
          {"storage_j", o.storage_j}, {"network_j", o.network_j}, {"energy_j", o.total_j()}, {"gpu_busy_s", o.gpu_busy_s},
          {"data_wait_s", o.data_wait_s}, {"cpu_core_s", o.cpu_core_s}, {"bytes_read", o.bytes_read},
          {"bytes_written", o.bytes_written}, {"bytes_network", o.bytes_network}, {"steps", o.steps}};
}

void add(Json& into, const PhaseOutcome& o) {
  if (!into.is_object()) into = Json::object();
  for (const char* k : {"time_s", "cpu_j", "gpu_j", "storage_j", "network_j", "energy_j", "gpu_busy_s", "data_wait_s", "cpu_core_s"})
    into[k] = into.value(k, 0.0) + phase_json(o)[k].get<double>();
}

void shares(Json& row, const Json& totals) {
  const double e = row.value("energy_j", 0.0);
  for (const char* k : {"cpu_j", "gpu_j", "storage_j", "network_j"}) row[std::string("share_of_phase_") + k] = e > 0 ? row[k].get<double>() / e : 0.0;
  row["share_of_job_time"] = row["time_s"].get<double>() / totals["time_s"].get<double>();
  row["share_of_job_energy"] = e / totals["energy_j"].get<double>();
}

Json report(const std::vector<PhaseOutcome>& run) {
  Json totals = Json::object(), by_kind = Json::object(), phases = Json::array();
  for (const PhaseOutcome& o : run) {
    add(totals, o);
    add(by_kind[o.kind], o);
  }
  for (const PhaseOutcome& o : run) {
    Json row = phase_json(o);
    shares(row, totals);
    phases.push_back(row);
  }
  for (auto it = by_kind.begin(); it != by_kind.end(); ++it) shares(it.value(), totals);
  shares(totals, totals);
  return {{"phases", phases}, {"by_kind", by_kind}, {"totals", totals}};
}

Json saved(const Json& base, const Json& with) {
  Json s;
  for (const char* k : {"time_s", "cpu_j", "gpu_j", "storage_j", "network_j", "energy_j"})
    s[k] = base["totals"][k].get<double>() - with["totals"][k].get<double>();
  s["energy_fraction"] = s["energy_j"].get<double>() / base["totals"]["energy_j"].get<double>();
  Json kinds = Json::object();
  for (auto it = base["by_kind"].begin(); it != base["by_kind"].end(); ++it) {
    const Json w = with["by_kind"].value(it.key(), Json::object());
    kinds[it.key()] = {{"time_s", it.value()["time_s"].get<double>() - w.value("time_s", 0.0)},
                       {"energy_j", it.value()["energy_j"].get<double>() - w.value("energy_j", 0.0)}};
  }
  s["by_kind"] = kinds;
  return s;
}

}  // namespace

Json run_lifecycle(const Json& doc, const std::string& file, const std::string& base_dir) {
  const LifecycleSpec spec = parse_lifecycle(doc, file, base_dir);
  const GpuModel model = load_gpu_model(spec.gpu, file, "lifecycle.gpu");
  Context ctx{spec, model, {}};
  const std::vector<PhaseOutcome> base = simulate_lifecycle(spec.node, plan(ctx, nullptr, nullptr), 0, spec.recorded_cpu_ghz);
  Json out = report(base);
  out["kind"] = "lifecycle";
  out["scenario"] = doc.value("name", "");
  out["node"] = {{"file", normalize_path(spec.node.file)}, {"cores", spec.node.cores}, {"provenance", spec.node.provenance}};
  out["gpu"] = model.name();
  Json pols = Json::array();
  for (const LifecyclePolicy& p : spec.policies) {
    const Json r = report(simulate_lifecycle(spec.node, plan(ctx, &p, &base), p.cpu_pstate, spec.recorded_cpu_ghz));
    pols.push_back({{"name", p.name}, {"gpu_sm_mhz_input_bound", p.gpu_sm_mhz_input_bound}, {"cpu_pstate", p.cpu_pstate},
                    {"cpu_ghz", spec.node.pstates[p.cpu_pstate].ghz}, {"staging", p.staging.empty() ? "as described" : p.staging},
                    {"dataset_on", p.dataset_on.empty() ? "as described" : p.dataset_on},
                    {"totals", r["totals"]}, {"by_kind", r["by_kind"]}, {"saved", saved(out, r)}});
  }
  out["policies"] = pols;
  return out;
}

std::string format_lifecycle_run(const Json& s) {
  std::ostringstream o;
  char line[256];
  o << "lifecycle " << s.value("scenario", "") << " (model output; GPU " << s.value("gpu", "") << ")\n";
  std::snprintf(line, sizeof line, "%-28s %9s %6s %10s %10s %9s %6s %6s\n", "phase", "time s", "time%", "CPU J", "GPU J", "stor+net J", "CPU%", "E%");
  o << line;
  auto row = [&](const std::string& name, const Json& r) {
    std::snprintf(line, sizeof line, "%-28.28s %9.2f %5.1f%% %10.0f %10.0f %9.0f %5.1f%% %5.1f%%\n", name.c_str(), r["time_s"].get<double>(),
                  100 * r["share_of_job_time"].get<double>(), r["cpu_j"].get<double>(), r["gpu_j"].get<double>(),
                  r["storage_j"].get<double>() + r["network_j"].get<double>(), 100 * r["share_of_phase_cpu_j"].get<double>(),
                  100 * r["share_of_job_energy"].get<double>());
    o << line;
  };
  for (auto it = s["by_kind"].begin(); it != s["by_kind"].end(); ++it) row(it.key(), it.value());
  row("total", s["totals"]);
  int name_width = 0;  // the policies' names in full (they were cut at 30 characters), aligned on the longest
  for (const Json& p : s["policies"]) name_width = std::max(name_width, static_cast<int>(p["name"].get<std::string>().size()));
  for (const Json& p : s["policies"]) {
    const Json& v = p["saved"];
    o << printf_text("policy %-*s saves %8.2f s, %8.0f J (%5.1f%%: CPU %.0f J, GPU %.0f J, storage+net %.0f J)\n", name_width,
                     p["name"].get<std::string>().c_str(), v["time_s"].get<double>(), v["energy_j"].get<double>(),
                     100 * v["energy_fraction"].get<double>(), v["cpu_j"].get<double>(), v["gpu_j"].get<double>(),
                     v["storage_j"].get<double>() + v["network_j"].get<double>());
  }
  return o.str();
}

}  // namespace dvfs
