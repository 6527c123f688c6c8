#include "traces/src/simulated_args.hpp"

#include "sim/core/errors.hpp"

namespace dvfs {

namespace {

std::string where(std::size_t event, const std::string& key) { return "traceEvents[" + std::to_string(event) + "].args." + key; }

// A non-negative number under `key` of `obj`, or `fallback` when the key is absent.
double number_arg(const Json& obj, const char* key, const std::string& file, const std::string& field, double fallback) {
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_number() || it->get<double>() < 0)
    throw InputError(file, field + "." + key, "expected a number >= 0 (" + std::string(json_type_name(*it)) + ")");
  return it->get<double>();
}

void read_work(const Json& w, const std::string& file, const std::string& field, SimulatedArgs& out) {
  if (!w.is_object()) throw InputError(file, field, "expected an object with the activity's work rates");
  const std::string source = w.contains("source") && w["source"].is_string() ? w["source"].get<std::string>() : "";
  if (source == "shapes") out.source = WorkSource::shapes;
  else if (source == "copy_engine") out.source = WorkSource::copy_engine;
  else if (source == "launch_shape") out.source = WorkSource::launch_shape;
  else throw InputError(file, field + ".source", "expected \"shapes\", \"copy_engine\" or \"launch_shape\", got " + (w.contains("source") ? w["source"].dump() : "nothing"));
  const std::string prec = w.contains("tensor precision") && w["tensor precision"].is_string() ? w["tensor precision"].get<std::string>() : "none";
  if (prec == "bf16") out.precision = TensorPrecision::bf16;
  else if (prec == "fp8") out.precision = TensorPrecision::fp8;
  else if (prec == "tf32") out.precision = TensorPrecision::tf32;
  else if (prec == "none") out.precision = TensorPrecision::none;
  else throw InputError(file, field + ".tensor precision", "expected bf16, fp8, tf32 or none, got \"" + prec + "\"");
  out.tensor_tflops = static_cast<float>(number_arg(w, "tensor TFLOP/s", file, field, 0));
  out.fma_tflops = static_cast<float>(number_arg(w, "fma TFLOP/s", file, field, 0));
  out.alu_tops = static_cast<float>(number_arg(w, "alu TOP/s", file, field, 0));
  out.memory_tbps = static_cast<float>(number_arg(w, "memory TB/s", file, field, 0));
  out.memory_fill_tbps = static_cast<float>(number_arg(w, "memory fill TB/s", file, field, 0));
  out.has_work = true;
}

}  // namespace

SimulatedArgs read_simulated_args(const Json& args, const std::string& file, std::size_t event) {
  SimulatedArgs a;
  auto sm = args.find("sm clock (MHz)");
  auto mem = args.find("mem clock (MHz)");
  auto work = args.find("work");
  if (sm == args.end() && mem == args.end() && work == args.end()) return a;  // a recorded trace
  const std::string field = "traceEvents[" + std::to_string(event) + "].args";
  a.sm_mhz = static_cast<float>(number_arg(args, "sm clock (MHz)", file, field, 0));
  a.mem_mhz = static_cast<float>(number_arg(args, "mem clock (MHz)", file, field, 0));
  if (work != args.end()) read_work(*work, file, where(event, "work"), a);
  return a;
}

void apply_simulated_args(const SimulatedArgs& a, Kernel& k) {
  if (a.sm_mhz > 0) k.recorded_sm_mhz = a.sm_mhz;
  if (a.mem_mhz > 0) k.recorded_mem_mhz = a.mem_mhz;
  if (!a.has_work) return;
  k.tensor_tflops = a.tensor_tflops;
  k.fma_tflops = a.fma_tflops;
  k.alu_tops = a.alu_tops;
  k.memory_tbps = a.memory_tbps;
  k.memory_fill_tbps = a.memory_fill_tbps;
  k.tensor_precision = a.precision;
  k.work = a.source;
}

}  // namespace dvfs
