// pybind11 module dvfs_sim._core: the C++ core behind `import dvfs_sim`. Documents cross the boundary
// as JSON text, so Python gets plain dicts and the C++ side keeps one validation path; timelines come
// back as numpy arrays and GPU models as the C++ objects themselves (see core_parts.hpp for the rest).
#include "python/src/core_parts.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "sim/simulation/simulation.hpp"
#include "sim/calibrate/profile_fit.hpp"
#include "sim/compare.hpp"
#include "sim/pipeline/perseus_runs.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/calibrate/recording_fit.hpp"
#include "sim/validate/model_checks.hpp"
#include "sim/validate/validate.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "dvfs-sim C++ core";
  py::register_exception<dvfs::InputError>(m, "InputError", PyExc_ValueError);
  dvfs_py::bind_gpu_model(m);
  dvfs_py::bind_simulation(m);
  dvfs_py::bind_trace_cache(m);
  dvfs_py::bind_control(m);
  m.def("validate_json", [](const std::string& dir, const std::string& gpu) {
    dvfs_py::SimulationLock lock;
    py::gil_scoped_release no_gil;
    return dvfs::validate_recording(dir, gpu).dump();
  });
  m.def("validate_models_json", [](const std::vector<std::string>& sections) {
    dvfs_py::SimulationLock lock;
    py::gil_scoped_release no_gil;
    return dvfs::validate_models(sections).dump();
  }, py::arg("sections"));
  m.def("model_check_sections", [] { return dvfs::model_check_sections(); });
  m.def("validate_perseus_runs_json", [](const std::string& dir, const std::vector<int>& plans, double p2p_latency_s) {
    dvfs_py::SimulationLock lock;
    py::gil_scoped_release no_gil;
    return dvfs::validate_perseus_runs(dir, plans, p2p_latency_s).dump();
  }, py::arg("dir"), py::arg("plans"), py::arg("p2p_latency_s"));
  m.def("calibrate_json", [](bool from_profile, const std::string& path, const std::string& base, const std::string& date) {
    const std::string profile = from_profile ? path : "", recording = from_profile ? "" : path;
    const std::string base_path = dvfs::resolve_model_path(base, "", "base");
    const std::string command = "dvfs_sim.calibrate(" + (profile.empty() ? "recording=" + recording : "profile=" + profile) +
                                ", base=" + base + ")";
    dvfs_py::SimulationLock lock;
    py::gil_scoped_release no_gil;
    if (from_profile) {
      dvfs::ProfileCalibration c = dvfs::calibrate_from_profile(profile, base_path, command, date);
      return dvfs::Json{{"model", c.model}, {"report", {{"fit_error_in_sample", c.fit_error.to_json()}, {"table", c.table}}}}.dump();
    }
    dvfs::RecordingCalibration c = dvfs::calibrate_from_recording(recording, base_path, command, date);
    return dvfs::Json{{"model", c.model}, {"report", c.report}}.dump();
  });
  m.def("compare_grid_json", [](const std::string& scenario_path, const std::vector<std::string>& policies,
                                const std::vector<double>& budgets, const std::vector<double>& latencies) {
    const dvfs::Scenario sc = dvfs::load_scenario(scenario_path);
    dvfs_py::SimulationLock lock;
    py::gil_scoped_release no_gil;
    return dvfs::compare_grid(sc, policies, budgets, latencies).dump();
  });
  m.def("available_models", &dvfs::installed_models);  // raises naming the folder when it holds no model, as the CLI does
  m.def("policy_names_text", [] { return dvfs::policy_names(); });
  m.def("policy_entries", [] {
    py::list out;
    for (const dvfs::PolicyEntry& e : dvfs::policy_registry().entries())
      out.append(py::dict(py::arg("name") = e.name, py::arg("summary") = e.summary, py::arg("kind") = dvfs::to_string(e.kind),
                          py::arg("keys") = e.keys, py::arg("scenario_keys") = e.scenario_keys));
    return out;
  }, "Every registered policy: name, summary, kind (online / planned / pipeline), the keys it accepts.");
  m.def("default_comparison", &dvfs::default_comparison);
  m.def("default_scenario_path", &dvfs::default_scenario_path);
  // a trace or a recording given where a scenario file belongs is refused as what it is (the CLI's message)
  m.def("check_scenario_file", [](const std::string& path) { dvfs::read_scenario_document(path); });
  m.def("data_dir", &dvfs::data_dir);
}
