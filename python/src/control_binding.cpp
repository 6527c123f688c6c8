// dvfs_sim.rl and dvfs_sim.control: a power-budget scenario stepped one control interval at a time from
// Python (the environment's core), and whole runs under the C++ controllers. Observation, action mapping
// and reward are the C++ ones (sim/control/observation.hpp), so a policy trained here acts the same in
// `dvfs-sim control`.
#include "python/src/core_parts.hpp"

#include "sim/control/control_run.hpp"
#include "sim/control/fleet.hpp"
#include "sim/control/observation.hpp"
#include "sim/core/errors.hpp"
#include "sim/simulation/scenario_file.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>

namespace py = pybind11;

namespace dvfs_py {

namespace {

dvfs::ControlScenario parse(const std::string& text, const std::string& file, const std::string& base_dir) {
  return dvfs::parse_control_scenario(dvfs::parse_json_text(text, file), file, base_dir);
}

// The scenario with the caller's seed (-1: the scenario's) and duration (0: the scenario's).
dvfs::ControlScenario scenario_with(const std::string& text, const std::string& file, const std::string& base_dir, long seed, double duration_s) {
  dvfs::ControlScenario sc = parse(text, file, base_dir);
  if (seed >= 0) sc.seed = static_cast<std::uint64_t>(seed);
  if (duration_s > 0) dvfs::set_control_duration(sc, duration_s, "duration_s");
  return sc;
}

// One episode at a time: reset() builds a fresh session (SimGrid allows one live engine per process).
class EnvCore {
 public:
  EnvCore(const std::string& text, const std::string& file, const std::string& base_dir)
      : sc_(parse(text, file, base_dir)) {
    dvfs::SessionSetup probe_setup = dvfs::make_session_setup(sc_, sc_.controller);  // prepares (and caches) the programs now
    for (std::size_t b = 0; b < probe_setup.budgets.size(); ++b)
      if (probe_setup.budgets[b].controlled) {
        budget_ = static_cast<int>(b);
        break;
      }
    if (budget_ < 0) throw dvfs::InputError(file, "control.budgets", "the environment needs a controlled budget");
    for (std::size_t b = 0; b < probe_setup.budgets.size(); ++b)
      if (probe_setup.budgets[b].controlled && static_cast<int>(b) != budget_)
        throw dvfs::InputError(file, "control.budgets", "the environment controls one budget; this scenario has several controlled ones");
  }

  ~EnvCore() { close(); }
  EnvCore(const EnvCore&) = delete;
  EnvCore& operator=(const EnvCore&) = delete;

  py::array_t<double> reset(long seed, double duration_s) {
    close();
    dvfs::ControlScenario sc = sc_;
    if (seed >= 0) sc.seed = static_cast<std::uint64_t>(seed);
    if (duration_s > 0) dvfs::set_control_duration(sc, duration_s, "reset(duration_s)");
    current_ = sc;
    {
      SimulationLock lock;
      session_ = std::make_unique<dvfs::ControlSession>(dvfs::make_session_setup(sc, sc.controller));
    }
    reward_sum_ = 0;
    wall_s_ = 0;
    return to_array(dvfs::budget_observation(*session_, budget_));
  }

  py::tuple step(const std::vector<double>& action) {
    if (!session_) throw dvfs::InputError("env", "step", "call reset() before step()");
    if (session_->done()) throw dvfs::InputError("env", "step", "the episode is over: call reset()");
    if (static_cast<int>(action.size()) != sc_.controller.action.size())
      throw dvfs::InputError("env", "action", "expected " + std::to_string(sc_.controller.action.size()) + " values (" +
                                                  join(dvfs::action_names(sc_.controller.action)) + "), got " + std::to_string(action.size()));
    const auto t0 = std::chrono::steady_clock::now();
    double reward = 0;
    {
      SimulationLock lock;
      py::gil_scoped_release no_gil;
      dvfs::apply_budget_action(*session_, budget_, action, sc_.controller.action);
      session_->advance();
      reward = dvfs::budget_reward(*session_, budget_, sc_.reward);
    }
    wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    reward_sum_ += reward;
    const dvfs::IntervalReport& r = session_->reports().back();
    py::dict info;
    info["t_s"] = r.t_end_s;
    info["measured_w"] = r.budget_measured_w[static_cast<std::size_t>(budget_)];
    info["exact_w"] = r.budget_exact_w[static_cast<std::size_t>(budget_)];
    info["budget_w"] = session_->setup().budgets[static_cast<std::size_t>(budget_)].budget_w;
    info["violated"] = r.budget_violated[static_cast<std::size_t>(budget_)] != 0;
    double g = 0, t = 0;
    for (double v : r.job_generated_tokens) g += v;
    for (double v : r.job_trained_tokens) t += v;
    info["generated_tokens"] = g;
    info["trained_tokens"] = t;
    return py::make_tuple(to_array(dvfs::budget_observation(*session_, budget_)), reward, session_->done(), info);
  }

  std::string summary(bool series) const {
    if (!session_) throw dvfs::InputError("env", "summary", "no episode yet: call reset()");
    return dvfs::session_summary(*session_, current_, "python", reward_sum_, wall_s_, series).dump();
  }

  void close() {
    if (!session_) return;
    SimulationLock lock;
    session_.reset();
  }

  int observation_size() const { return dvfs::kObservationSize; }
  int action_size() const { return sc_.controller.action.size(); }
  std::vector<std::string> action_names() const { return dvfs::action_names(sc_.controller.action); }
  double interval_s() const { return sc_.interval_s; }
  double duration_s() const { return sc_.duration_s; }
  std::uint64_t seed() const { return sc_.seed; }
  py::dict action_spec() const {
    py::dict d;
    d["target_span"] = sc_.controller.action.target_span;
    d["headroom_w"] = sc_.controller.action.headroom_w;
    return d;
  }

 private:
  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }
  dvfs::ControlScenario sc_, current_;
  int budget_ = -1;
  std::unique_ptr<dvfs::ControlSession> session_;
  double reward_sum_ = 0, wall_s_ = 0;
};

}  // namespace

void bind_control(py::module_& m) {
  py::class_<EnvCore>(m, "ControlEnvCore", "One power-budget scenario stepped interval by interval (dvfs_sim.rl.PowerBudgetEnv)")
      .def(py::init<const std::string&, const std::string&, const std::string&>(), py::arg("scenario_json"), py::arg("file"), py::arg("base_dir"))
      .def("reset", &EnvCore::reset, py::arg("seed") = -1, py::arg("duration_s") = 0.0)
      .def("step", &EnvCore::step, py::arg("action"))
      .def("summary", &EnvCore::summary, py::arg("series") = false)
      .def("close", &EnvCore::close)
      .def_property_readonly("observation_size", &EnvCore::observation_size)
      .def_property_readonly("action_size", &EnvCore::action_size)
      .def_property_readonly("action_names", &EnvCore::action_names)
      .def_property_readonly("action_spec", &EnvCore::action_spec)
      .def_property_readonly("interval_s", &EnvCore::interval_s)
      .def_property_readonly("duration_s", &EnvCore::duration_s)
      .def_property_readonly("seed", &EnvCore::seed);
  m.def("fleet_study_json", [](const std::string& path, const std::vector<int>& sizes, double duration_s, bool samples) {
    dvfs::FleetScenario fs = dvfs::parse_fleet_scenario(dvfs::read_scenario_document(path), path);  // a trace named as such
    if (!sizes.empty()) fs.sizes = sizes;
    for (int n : fs.sizes)
      if (n < 1) throw dvfs::InputError(path, "fleet.sizes", "expected whole numbers of GPUs >= 1");
    if (duration_s > 0) dvfs::set_fleet_duration(fs, duration_s, "duration_s");
    SimulationLock lock;
    py::gil_scoped_release no_gil;
    return dvfs::run_fleet_study(fs, samples).dump();
  }, py::arg("path"), py::arg("sizes") = std::vector<int>{}, py::arg("duration_s") = 0.0, py::arg("samples") = false);
  m.def("observation_names", &dvfs::observation_names);
  m.def("controller_names", &dvfs::controller_names);
  m.def("run_control_json", [](const std::string& text, const std::string& file, const std::string& base_dir, const std::string& controller,
                               const std::string& policy_file, long seed, double duration_s, bool series) {
    const dvfs::ControlScenario sc = scenario_with(text, file, base_dir, seed, duration_s);
    const dvfs::ControllerSpec c = dvfs::controller_named(sc, controller, policy_file);
    SimulationLock lock;
    py::gil_scoped_release no_gil;
    dvfs::ControlRunOptions o;
    o.series = series;
    return dvfs::run_control(sc, c, o).dump();
  }, py::arg("scenario_json"), py::arg("file"), py::arg("base_dir"), py::arg("controller") = "", py::arg("policy_file") = "",
     py::arg("seed") = -1, py::arg("duration_s") = 0.0, py::arg("series") = false);
  // The table `dvfs-sim control --controller a,b` prints (compare_controllers): Python's control.compare reads its rows.
  m.def("compare_controllers_json", [](const std::string& text, const std::string& file, const std::string& base_dir,
                                       const std::vector<std::string>& controllers, const std::string& policy_file, long seed, double duration_s) {
    const dvfs::ControlScenario sc = scenario_with(text, file, base_dir, seed, duration_s);
    const std::vector<dvfs::ControllerSpec> specs = dvfs::checked_controllers(sc, controllers, policy_file, "controllers");
    SimulationLock lock;
    py::gil_scoped_release no_gil;
    return dvfs::compare_controllers(sc, specs).dump();
  }, py::arg("scenario_json"), py::arg("file"), py::arg("base_dir"), py::arg("controllers"), py::arg("policy_file") = "",
     py::arg("seed") = -1, py::arg("duration_s") = 0.0);
}

}  // namespace dvfs_py
