// dvfs_sim.simulate / run / sweep workers: one scenario end to end, returning the summary (JSON text)
// and, on request, the timeline as numpy arrays (no temporary files). Optionally with a Python policy
// instead of the scenario's, and with a per-process cache of loaded traces for sweeps.
#include "python/src/core_parts.hpp"
#include "python/src/python_policy.hpp"
#include "python/src/trace_cache.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/prior_regime.hpp"
#include "sim/core/errors.hpp"
#include "sim/results/summary.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/scenario_kinds.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;

namespace dvfs_py {

namespace {

py::dict timeline_arrays(const std::vector<dvfs::RankOutcome>& outcomes) {
  const dvfs::TimelineColumns c = dvfs::timeline_columns(outcomes);
  py::dict d;
  d["gpu"] = to_array(c.gpu);
  d["t_s"] = to_array(c.t_s);
  d["power_w"] = to_array(c.power_w);
  d["sm_mhz"] = to_array(c.sm_mhz);
  d["mem_mhz"] = to_array(c.mem_mhz);
  d["energy_j"] = to_array(c.energy_j);
  return d;
}

// The scenario under a Python policy: the replay of simulate() with a factory making PythonPolicy.
// Runs with the GIL held (every callback is a Python call).
dvfs::SimulationResult simulate_with_python_policy(const dvfs::Scenario& sc, const dvfs::LoadedTrace& trace,
                                                   const dvfs::GpuModel& unbound, const py::object& policy) {
  auto ctx = std::make_shared<RunContext>();
  ctx->names = trace.workload.names;
  ctx->annotation_names = trace.workload.annotation_names;
  ctx->annotation_sets = trace.workload.annotation_sets;
  ctx->model = std::make_shared<const dvfs::GpuModel>(dvfs::bound_to_workload(unbound, trace.workload));
  std::shared_ptr<const RunContext> shared = ctx;
  const dvfs::Workload& wl = trace.workload;
  std::vector<PythonPolicy*> made;
  dvfs::PolicyFactory factory = [&](int rank) {
    const dvfs::Rank* r = &wl.ranks.front();
    for (const auto& x : wl.ranks)
      if (x.id == rank) r = &x;
    // A policy object may hand out one instance per GPU (for per-GPU state) through for_gpu(rank).
    py::object obj = py::hasattr(policy, "for_gpu") ? policy.attr("for_gpu")(rank) : policy;
    auto p = std::make_unique<PythonPolicy>(obj, shared, r->kernels, rank);
    made.push_back(p.get());
    return p;
  };
  dvfs::SimulationResult r = dvfs::simulate_with_factory(sc, trace, *ctx->model, factory);
  std::uint64_t calls = 0;
  for (const PythonPolicy* p : made) calls += p->calls();
  r.summary["python_policy"] = {{"callbacks", calls}};
  return r;
}

}  // namespace

py::tuple simulate_scenario(const std::string& scenario_json, const std::string& file, const std::string& base_dir,
                            const std::string& output_dir, bool want_timeline, const py::object& policy, bool cache_trace) {
  dvfs::Json doc = dvfs::parse_json_text(scenario_json, file);
  const dvfs::ScenarioKind kind = dvfs::scenario_kind(doc);
  dvfs::ScenarioOptions opts;
  opts.output_dir_given = !output_dir.empty();  // a study that writes no files refuses it, as the CLI's -o
  if (!policy.is_none()) {
    if (kind == dvfs::ScenarioKind::synthetic)
      throw dvfs::InputError(file, "synthetic", "a Python policy drives replayed traces only; synthesised runs take the scenario's policy");
    if (const dvfs::ScenarioKindSpec* k = dvfs::registered_kind(doc))
      throw dvfs::InputError(file, k->key, "a Python policy drives replayed traces only; a " + k->key + " scenario runs without one");
    if (doc.is_object() && !doc.contains("policy")) doc["policy"] = "max";  // the Python policy replaces it
    opts.replay = [&policy](const dvfs::Scenario& sc, const dvfs::LoadedTrace& trace, const dvfs::GpuModel& model) {
      py::gil_scoped_acquire gil;  // every callback is a Python call
      return simulate_with_python_policy(sc, trace, model, policy);
    };
  }
  if (cache_trace) opts.load_trace = [](const dvfs::Scenario& sc, const dvfs::GpuModel& model) { return cached_trace(sc, model); };
  SimulationLock lock;
  dvfs::ScenarioRun run;
  {
    py::gil_scoped_release no_gil;  // loading and replaying need no Python objects (a Python policy takes the GIL back)
    run = dvfs::run_scenario(doc, file, base_dir, opts);
    const std::string out = output_dir.empty() ? run.output_dir : output_dir;
    if (!out.empty()) dvfs::write_scenario_outputs(run, out);
  }
  const bool timeline = want_timeline && (run.kind == dvfs::ScenarioKind::replay || run.kind == dvfs::ScenarioKind::multi_rank);
  return py::make_tuple(run.summary.dump(), timeline ? py::object(timeline_arrays(run.outcomes)) : py::object(py::none()));
}

void bind_simulation(py::module_& m) {
  bind_policy_views(m);
  m.def("simulate", &simulate_scenario, py::arg("scenario_json"), py::arg("file"), py::arg("base_dir"),
        py::arg("output_dir") = "", py::arg("timeline") = false, py::arg("policy") = py::none(), py::arg("cache_trace") = false,
        "Run a scenario given as JSON text; returns (summary JSON text, timeline arrays or None).");
}

}  // namespace dvfs_py
