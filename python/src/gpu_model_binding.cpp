// dvfs_sim.model(name): the C++ GpuModel itself, read-only, with its pure time and power functions.
// Nothing of the model is re-implemented in Python; clocks are checked against the model's tables.
#include "python/src/core_parts.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/stage_model.hpp"
#include "sim/core/errors.hpp"

#include <pybind11/stl.h>

#include <memory>

namespace py = pybind11;

namespace dvfs_py {

namespace {

std::vector<std::string> kernel_class_names() {
  std::vector<std::string> names;
  for (int i = 0; i < dvfs::kKernelClassCount; ++i) names.emplace_back(dvfs::to_string(static_cast<dvfs::KernelClass>(i)));
  return names;
}

dvfs::KernelClass class_or_throw(const std::string& cls, const std::string& who) {
  dvfs::KernelClass c;
  if (dvfs::kernel_class_from_string(cls, c)) return c;
  std::string names;
  for (const std::string& n : kernel_class_names()) names += (names.empty() ? "" : ", ") + n;
  throw dvfs::InputError(who, "kernel.class", "unknown kernel class \"" + cls + "\" (expected one of " + names + ")");
}

std::string who(const dvfs::GpuModel& m, const char* method) { return "model(\"" + m.name() + "\")." + method; }

py::dict coefficients_dict(const dvfs::ClassCoefficients& c) {
  py::dict d;
  d["time_sm"] = c.time_sm;
  d["time_mem"] = c.time_mem;
  d["dynamic_w"] = c.dynamic_w;
  d["sm_share"] = c.sm_share;
  return d;
}

// A kernel recorded at (recorded_sm_mhz, recorded_mem_mhz), 0 meaning the model's default clocks.
dvfs::Kernel make_kernel(const dvfs::GpuModel& m, const std::string& cls, double duration_s, double rec_sm, double rec_mem,
                         double sm_fill, const char* method) {
  dvfs::Kernel k;
  k.cls = class_or_throw(cls, who(m, method));
  if (!(duration_s >= 0)) throw dvfs::InputError(who(m, method), "kernel.duration_s", "expected a duration >= 0 s");
  if (!(sm_fill > 0 && sm_fill <= 1)) throw dvfs::InputError(who(m, method), "kernel.sm_fill", "expected a share of the SMs in (0, 1]");
  if (rec_sm != 0) m.sm_index_or_throw(rec_sm, who(m, method), "kernel.recorded_sm_mhz");
  if (rec_mem != 0) m.mem_index_or_throw(rec_mem, who(m, method), "kernel.recorded_mem_mhz");
  k.duration_s = duration_s;
  k.recorded_sm_mhz = static_cast<float>(rec_sm);
  k.recorded_mem_mhz = static_cast<float>(rec_mem);
  k.sm_fill = static_cast<float>(sm_fill);
  return k;
}

}  // namespace

void bind_gpu_model(py::module_& m) {
  py::class_<dvfs::GpuModel, std::shared_ptr<dvfs::GpuModel>>(m, "GpuModel", "A GPU model file, loaded by the C++ core")
      .def_property_readonly("name", &dvfs::GpuModel::name)
      .def_property_readonly("display_name", &dvfs::GpuModel::display_name)
      .def_property_readonly("status", &dvfs::GpuModel::status)
      .def_property_readonly("source_file", &dvfs::GpuModel::source_file)
      .def_property_readonly("derived_from", &dvfs::GpuModel::derived_from)
      .def_property_readonly("sm_count", &dvfs::GpuModel::sm_count)
      .def_property_readonly("sm_clocks_mhz", &dvfs::GpuModel::sm_clocks_mhz)
      .def_property_readonly("mem_clocks_mhz", &dvfs::GpuModel::mem_clocks_mhz)
      .def_property_readonly("power_cap_w", &dvfs::GpuModel::power_cap_w)
      .def_property_readonly("idle_w", &dvfs::GpuModel::idle_w)
      .def_property_readonly("max_clocks", [](const dvfs::GpuModel& g) { return py::make_tuple(g.max_sm_mhz(), g.max_mem_mhz()); })
      .def_property_readonly("default_clocks",
                             [](const dvfs::GpuModel& g) { return py::make_tuple(g.default_clocks().sm_mhz, g.default_clocks().mem_mhz); })
      .def_property_readonly("provenance_json", [](const dvfs::GpuModel& g) { return g.provenance().dump(); })
      .def_property_readonly("switch_latency_json", [](const dvfs::GpuModel& g) { return dvfs::to_json(g.switch_latency()).dump(); })
      .def("coefficients", [](const dvfs::GpuModel& g, const std::string& cls) {
        return coefficients_dict(g.coefficients(class_or_throw(cls, who(g, "coefficients"))));
      }, py::arg("kernel_class"))
      .def("idle_power_w", [](const dvfs::GpuModel& g, double sm_mhz) {
        return g.idle_power_w(g.sm_index_or_throw(sm_mhz, who(g, "idle_power_w"), "sm_mhz"));
      }, py::arg("sm_mhz"))
      .def("kernel_time_s", [](const dvfs::GpuModel& g, const std::string& cls, double duration_s, double rec_sm, double rec_mem,
                               const std::string& name, double sm_mhz, double mem_mhz) {
        dvfs::Kernel k = make_kernel(g, cls, duration_s, rec_sm, rec_mem, 1.0, "kernel_time_s");
        const int si = g.sm_index_or_throw(sm_mhz, who(g, "kernel_time_s"), "sm_mhz");
        const int mi = g.mem_index_or_throw(mem_mhz, who(g, "kernel_time_s"), "mem_mhz");
        if (name.empty() || g.kernel_overrides().empty()) return g.kernel_time_s(k, si, mi);
        // A kernel name with a fitted time share of its own (`kernels.<name>`) uses it, as in a replay.
        const dvfs::GpuModel bound = g.bound_to({name});
        k.name_id = 0;
        return bound.kernel_time_s(k, si, mi);
      }, py::arg("kernel_class"), py::arg("duration_s"), py::arg("recorded_sm_mhz"), py::arg("recorded_mem_mhz"),
         py::arg("name"), py::arg("sm_mhz"), py::arg("mem_mhz"))
      .def("kernel_power_w", [](const dvfs::GpuModel& g, const std::string& cls, double sm_fill, double sm_mhz, double mem_mhz) {
        const dvfs::Kernel k = make_kernel(g, cls, 0.0, 0.0, 0.0, sm_fill, "kernel_power_w");
        const int si = g.sm_index_or_throw(sm_mhz, who(g, "kernel_power_w"), "sm_mhz");
        const int mi = g.mem_index_or_throw(mem_mhz, who(g, "kernel_power_w"), "mem_mhz");
        return g.kernel_power_w(k, si, mi);
      }, py::arg("kernel_class"), py::arg("sm_fill"), py::arg("sm_mhz"), py::arg("mem_mhz"))
      .def_property_readonly("computations", [](const dvfs::GpuModel& g) {
        std::vector<std::string> names;
        for (const auto& c : g.computations()) names.push_back(c.first);
        return names;
      })
      // A whole computation (a stage's forward or backward) measured once at an anchor clock pair, predicted
      // at another (models/src/stage_model.hpp): what a stage profile is validated with.
      .def("predict_computation", [](const dvfs::GpuModel& g, const std::string& name, double anchor_time_s,
                                     double anchor_energy_j, double anchor_sm_mhz, double anchor_mem_mhz, double sm_mhz,
                                     double mem_mhz) {
        const std::string w = who(g, "predict_computation");
        const dvfs::ClassCoefficients* cc = g.computation(name);
        if (!cc) throw dvfs::InputError(w, "computation", "the model has no computation \"" + name + "\"");
        if (!(anchor_time_s > 0) || !(anchor_energy_j > 0))
          throw dvfs::InputError(w, "anchor", "expected a measured time > 0 s and energy > 0 J");
        g.sm_index_or_throw(anchor_sm_mhz, w, "anchor.sm_mhz");
        g.mem_index_or_throw(anchor_mem_mhz, w, "anchor.mem_mhz");
        g.sm_index_or_throw(sm_mhz, w, "sm_mhz");
        g.mem_index_or_throw(mem_mhz, w, "mem_mhz");
        const dvfs::StagePrediction p = dvfs::predict_computation(
            g, *cc, {anchor_time_s, anchor_energy_j, {anchor_sm_mhz, anchor_mem_mhz}}, {sm_mhz, mem_mhz});
        py::dict d;
        d["time_s"] = p.time_s;
        d["energy_j"] = p.energy_j;
        d["power_w"] = p.power_w;
        d["effective_sm_mhz"] = p.effective_sm_mhz;
        return d;
      }, py::arg("computation"), py::arg("anchor_time_s"), py::arg("anchor_energy_j"), py::arg("anchor_sm_mhz"),
         py::arg("anchor_mem_mhz"), py::arg("sm_mhz"), py::arg("mem_mhz"));

  m.def("load_model", [](const std::string& name_or_path) {
    return std::make_shared<dvfs::GpuModel>(dvfs::load_gpu_model(name_or_path, "dvfs_sim.model", "gpu"));
  }, py::arg("name_or_path"), "A model by name (models/gpus/<name>.json) or model file path.");
  m.def("kernel_classes", &kernel_class_names);
}

}  // namespace dvfs_py
