// pybind11 module dvfs_sim._core: the C++ core behind `import dvfs_sim`. Documents cross the boundary
// as JSON text, so Python gets plain dicts and the C++ side keeps one validation path.
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/calibrate/profile_fit.hpp"
#include "sim/compare.hpp"
#include "sim/pipeline/synthetic_run.hpp"
#include "sim/calibrate/recording_fit.hpp"
#include "sim/validate/model_checks.hpp"
#include "sim/validate/validate.hpp"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {

std::string run_json(const std::string& scenario_json, const std::string& file, const std::string& base_dir,
                     const std::string& output_dir) {
  dvfs::Json doc;
  try {
    doc = dvfs::Json::parse(scenario_json);
  } catch (const dvfs::Json::parse_error& e) {
    throw dvfs::InputError(file, "", std::string("malformed JSON (") + e.what() + ")");
  }
  dvfs::Scenario sc = dvfs::parse_scenario(doc, file, base_dir);
  if (!sc.synthetic.is_null()) {
    dvfs::Json res;
    {
      py::gil_scoped_release release;
      res = dvfs::run_synthetic(dvfs::synthetic_request(sc));
    }
    return res.dump();
  }
  dvfs::SimulationResult r;
  {
    py::gil_scoped_release release;  // the simulation needs no Python objects
    r = dvfs::simulate(sc);
  }
  const std::string out = output_dir.empty() ? sc.output_dir : output_dir;
  if (!out.empty()) dvfs::write_results(r, out);
  return r.summary.dump();
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "dvfs-sim C++ core";
  py::register_exception<dvfs::InputError>(m, "InputError", PyExc_ValueError);
  m.def("run_json", &run_json, py::arg("scenario_json"), py::arg("file"), py::arg("base_dir"),
        py::arg("output_dir") = "", "Run a scenario given as JSON text; returns the summary as JSON text.");
  m.def("validate_json", [](const std::string& dir, const std::string& gpu) {
    return dvfs::validate_recording(dir, gpu).dump();
  });
  m.def("validate_models_json", [] { return dvfs::validate_models().dump(); });
  m.def("calibrate_json", [](bool from_profile, const std::string& path, const std::string& base, const std::string& date) {
    const std::string profile = from_profile ? path : "", recording = from_profile ? "" : path;
    const std::string base_path = dvfs::resolve_model_path(base, "", "base");
    const std::string command = "dvfs_sim.calibrate(" + (profile.empty() ? "recording=" + recording : "profile=" + profile) +
                                ", base=" + base + ")";
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
    dvfs::Json out;
    {
      py::gil_scoped_release release;
      out = dvfs::compare_grid(sc, policies, budgets, latencies);
    }
    return out.dump();
  });
  m.def("available_models", &dvfs::available_models);
  m.def("default_scenario_path", &dvfs::default_scenario_path);
  m.def("data_dir", &dvfs::data_dir);
}
