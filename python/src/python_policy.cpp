#include "python/src/python_policy.hpp"

#include "python/src/core_parts.hpp"
#include "sim/core/errors.hpp"

#include <pybind11/stl.h>

#include <cmath>
#include <sstream>

namespace py = pybind11;

namespace dvfs_py {

namespace {

double number_or_throw(const py::handle& v, const std::string& who, const std::string& field) {
  if (py::isinstance<py::bool_>(v) || !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
    throw dvfs::InputError(who, field, "expected a clock in MHz (a number), got " + std::string(py::str(py::type::of(v).attr("__name__"))));
  return v.cast<double>();
}

dvfs::ClockPair pair_from(const py::handle& v, const dvfs::ClockPair& fallback, const std::string& who, const std::string& field) {
  dvfs::ClockPair c = fallback;
  if (py::isinstance<py::dict>(v)) {
    for (auto item : v.cast<py::dict>()) {
      const std::string key = py::str(item.first);
      if (key == "sm_mhz") c.sm_mhz = number_or_throw(item.second, who, field + " sm_mhz");
      else if (key == "mem_mhz") c.mem_mhz = number_or_throw(item.second, who, field + " mem_mhz");
      else throw dvfs::InputError(who, field, "unknown key \"" + key + "\" (expected sm_mhz and/or mem_mhz)");
    }
    return c;
  }
  if ((py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) && py::len(v) == 2) {
    const py::sequence s = v.cast<py::sequence>();
    if (!s[0].is_none()) c.sm_mhz = number_or_throw(s[0], who, field + " sm_mhz");
    if (!s[1].is_none()) c.mem_mhz = number_or_throw(s[1], who, field + " mem_mhz");
    return c;
  }
  throw dvfs::InputError(who, field, "expected None, (sm_mhz, mem_mhz) or {\"sm_mhz\": ..., \"mem_mhz\": ...}, got " +
                                         std::string(py::str(py::type::of(v).attr("__name__"))));
}

py::object attr_or_none(const py::object& obj, const char* name) {
  return py::hasattr(obj, name) ? obj.attr(name) : py::object(py::none());
}

}  // namespace

PythonPolicy::PythonPolicy(py::object obj, std::shared_ptr<const RunContext> ctx, const std::vector<dvfs::Kernel>& stream, int rank)
    : obj_(std::move(obj)), ctx_(std::move(ctx)), stream_begin_(stream.data()), stream_size_(stream.size()), rank_(rank) {
  const py::object n = attr_or_none(obj_, "name");
  name_ = py::isinstance<py::str>(n) ? n.cast<std::string>() : py::type::of(obj_).attr("__name__").cast<std::string>();
  who_ = "python policy \"" + name_ + "\"";
  before_kernel_ = attr_or_none(obj_, "before_kernel");
  on_tick_ = attr_or_none(obj_, "on_tick");
  for (const auto* hook : {&before_kernel_, &on_tick_})
    if (!hook->is_none() && !PyCallable_Check(hook->ptr()))
      throw dvfs::InputError(who_, hook == &before_kernel_ ? "before_kernel" : "on_tick", "expected a method");
  if (before_kernel_.is_none() && on_tick_.is_none())
    throw dvfs::InputError(who_, "", "expected a before_kernel(kernel, telemetry) and/or on_tick(telemetry) method");

  const py::object period = attr_or_none(obj_, "tick_period_s");
  tick_period_s_ = period.is_none() ? 0.0 : number_or_throw(period, who_, "tick_period_s");
  if (!on_tick_.is_none() && !(tick_period_s_ > 0 && std::isfinite(tick_period_s_)))
    throw dvfs::InputError(who_, "tick_period_s", "on_tick needs a tick period > 0 s");
  if (on_tick_.is_none() && tick_period_s_ != 0)
    throw dvfs::InputError(who_, "tick_period_s", "a tick period is set but the policy has no on_tick(telemetry)");
  const py::object window = attr_or_none(obj_, "telemetry_window_s");
  window_s_ = window.is_none() ? tick_period_s_ : number_or_throw(window, who_, "telemetry_window_s");
  if (tick_period_s_ > 0 && !(window_s_ > 0)) throw dvfs::InputError(who_, "telemetry_window_s", "expected a window > 0 s");

  const py::object act = attr_or_none(obj_, "actuator");
  const std::string a = act.is_none() ? "nvml" : py::str(act).cast<std::string>();
  if (a == "nvml") actuator_ = dvfs::Actuator::nvml;
  else if (a == "firmware") actuator_ = dvfs::Actuator::firmware;
  else throw dvfs::InputError(who_, "actuator", "expected \"nvml\" (driver requests) or \"firmware\", got \"" + a + "\"");

  py::object init = attr_or_none(obj_, "initial_clocks");
  if (!init.is_none() && PyCallable_Check(init.ptr())) init = init();
  const dvfs::ClockPair top = ctx_->model->max_clocks();
  initial_ = init.is_none() ? top : pair_from(init, top, who_, "initial_clocks");
  initial_ = checked(initial_.sm_mhz, initial_.mem_mhz, "initial_clocks");
}

dvfs::ClockPair PythonPolicy::checked(double sm, double mem, const std::string& field) const {
  ctx_->model->sm_index_or_throw(sm, who_, field + " sm_mhz");
  ctx_->model->mem_index_or_throw(mem, who_, field + " mem_mhz");
  return {sm, mem};
}

std::optional<dvfs::ClockPair> PythonPolicy::to_request(const py::handle& ret, const dvfs::GpuTelemetry& t, const char* hook) const {
  if (ret.is_none()) return std::nullopt;
  const dvfs::ClockPair c = pair_from(ret, t.requested, who_, hook);
  return checked(c.sm_mhz, c.mem_mhz, hook);
}

std::optional<dvfs::ClockPair> PythonPolicy::before_kernel(const dvfs::Kernel& k, const dvfs::GpuTelemetry& t) {
  ++calls_;
  const std::ptrdiff_t i = &k - stream_begin_;
  KernelView v{k, i >= 0 && static_cast<std::size_t>(i) < stream_size_ ? static_cast<long>(i) : -1, rank_, ctx_};
  const py::object ret = before_kernel_(std::move(v), t);
  return to_request(ret, t, "before_kernel()");
}

std::optional<dvfs::ClockPair> PythonPolicy::on_tick(const dvfs::GpuTelemetry& t) {
  ++calls_;
  const py::object ret = on_tick_(t);
  return to_request(ret, t, "on_tick()");
}

void bind_policy_views(py::module_& m) {
  py::class_<KernelView>(m, "Kernel", "A device activity as a Python policy sees it (a copy: safe to keep)")
      .def_readonly("index", &KernelView::index, "position in its GPU's stream")
      .def_readonly("gpu", &KernelView::gpu)
      .def_property_readonly("name", [](const KernelView& v) { return v.ctx->names.at(v.kernel.name_id); })
      .def_property_readonly("kernel_class", [](const KernelView& v) { return dvfs::to_string(v.kernel.cls); })
      .def_property_readonly("kind", [](const KernelView& v) { return dvfs::to_string(v.kernel.kind); })
      .def_property_readonly("duration_s", [](const KernelView& v) { return v.kernel.duration_s; }, "recorded duration")
      .def_property_readonly("gap_before_s", [](const KernelView& v) { return v.kernel.gap_before_s; })
      .def_property_readonly("recorded_sm_mhz", [](const KernelView& v) { return v.kernel.recorded_sm_mhz; })
      .def_property_readonly("recorded_mem_mhz", [](const KernelView& v) { return v.kernel.recorded_mem_mhz; })
      .def_property_readonly("sm_fill", [](const KernelView& v) { return v.kernel.sm_fill; })
      .def_property_readonly("step", [](const KernelView& v) { return v.kernel.step; })
      .def_property_readonly("stream", [](const KernelView& v) { return v.kernel.stream; })
      .def_property_readonly("work", [](const KernelView& v) {
        // what the trace says this kernel computed, as rates at its recorded clocks (units of 1e12 per second)
        const dvfs::Kernel& k = v.kernel;
        py::dict d;
        d["source"] = dvfs::to_string(k.work);
        d["tensor_tflops"] = k.tensor_tflops;
        d["tensor_precision"] = dvfs::to_string(k.tensor_precision);
        d["tensor_issue"] = dvfs::to_string(k.tensor_issue);
        d["fma_tflops"] = k.fma_tflops;
        d["alu_tops"] = k.alu_tops;
        d["memory_tbps"] = k.memory_tbps;
        d["memory_fill_tbps"] = k.memory_fill_tbps;
        d["unvectorised_tbps"] = k.unvectorised_tbps;
        return d;
      }, "the kernel's counted work: source (unknown = class prior; launch_elementwise = class prior, its rates sized from "
         "its launch) and rates at its recorded clocks, 1e12 per second")
      .def_property_readonly("phase", [](const KernelView& v) {
        return dvfs::to_string(v.ctx->annotation_sets.at(v.kernel.annotation_set).phase);
      })
      .def_property_readonly("annotations", [](const KernelView& v) {
        std::vector<std::string> out;
        for (std::uint32_t a : v.ctx->annotation_sets.at(v.kernel.annotation_set).annotations) out.push_back(v.ctx->annotation_names.at(a));
        return out;
      })
      .def("time_s", [](const KernelView& v, double sm_mhz, double mem_mhz) {
        const dvfs::GpuModel& g = *v.ctx->model;
        return g.kernel_time_s(v.kernel, g.sm_index_or_throw(sm_mhz, "Kernel.time_s", "sm_mhz"),
                               g.mem_index_or_throw(mem_mhz, "Kernel.time_s", "mem_mhz"));
      }, py::arg("sm_mhz"), py::arg("mem_mhz"), "the model's time of this kernel at a clock pair")
      .def("power_w", [](const KernelView& v, double sm_mhz, double mem_mhz) {
        const dvfs::GpuModel& g = *v.ctx->model;
        return g.kernel_power_w(v.kernel, g.sm_index_or_throw(sm_mhz, "Kernel.power_w", "sm_mhz"),
                                g.mem_index_or_throw(mem_mhz, "Kernel.power_w", "mem_mhz"));
      }, py::arg("sm_mhz"), py::arg("mem_mhz"), "the model's power of this kernel at a clock pair")
      .def("__repr__", [](const KernelView& v) {
        std::ostringstream os;
        os << "<Kernel " << v.index << " " << dvfs::to_string(v.kernel.cls) << " " << v.kernel.duration_s * 1e6 << " us "
           << v.ctx->names.at(v.kernel.name_id).substr(0, 60) << ">";
        return os.str();
      });

  py::class_<dvfs::GpuTelemetry>(m, "Telemetry", "What a policy observes, like a driver-level controller")
      .def_readonly("now_s", &dvfs::GpuTelemetry::now_s)
      .def_property_readonly("sm_mhz", [](const dvfs::GpuTelemetry& t) { return t.clocks.sm_mhz; }, "in effect now")
      .def_property_readonly("mem_mhz", [](const dvfs::GpuTelemetry& t) { return t.clocks.mem_mhz; })
      .def_property_readonly("requested_sm_mhz", [](const dvfs::GpuTelemetry& t) { return t.requested.sm_mhz; },
                             "last requested (may still be in transition)")
      .def_property_readonly("requested_mem_mhz", [](const dvfs::GpuTelemetry& t) { return t.requested.mem_mhz; })
      .def_readonly("window_power_w", &dvfs::GpuTelemetry::window_power_w, "mean power over the telemetry window")
      .def_readonly("last_tick_power_w", &dvfs::GpuTelemetry::last_tick_power_w, "mean power since the previous tick")
      .def("__repr__", [](const dvfs::GpuTelemetry& t) {
        std::ostringstream os;
        os << "<Telemetry t=" << t.now_s << " s, " << t.clocks.sm_mhz << "/" << t.clocks.mem_mhz << " MHz, window "
           << t.window_power_w << " W>";
        return os.str();
      });
}

}  // namespace dvfs_py
