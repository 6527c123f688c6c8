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
  KernelRates& r = out.work;
  if (source == "shapes") r.source = WorkSource::shapes;
  else if (source == "copy_engine") r.source = WorkSource::copy_engine;
  else if (source == "launch_shape") r.source = WorkSource::launch_shape;
  else if (source == "launch_elementwise") r.source = WorkSource::launch_elementwise;
  else if (source == "transfer_bytes") r.source = WorkSource::transfer_bytes;
  else throw InputError(file, field + ".source", "expected \"shapes\", \"launch_shape\", \"launch_elementwise\", \"copy_engine\" or \"transfer_bytes\", got " + (w.contains("source") ? w["source"].dump() : "nothing"));
  const std::string prec = w.contains("tensor precision") && w["tensor precision"].is_string() ? w["tensor precision"].get<std::string>() : "none";
  if (prec == "bf16") r.precision = TensorPrecision::bf16;
  else if (prec == "fp8") r.precision = TensorPrecision::fp8;
  else if (prec == "tf32") r.precision = TensorPrecision::tf32;
  else if (prec == "fp64") r.precision = TensorPrecision::fp64;
  else if (prec == "none") r.precision = TensorPrecision::none;
  else throw InputError(file, field + ".tensor precision", "expected bf16, fp8, tf32, fp64 or none, got \"" + prec + "\"");
  const std::string issue = w.contains("tensor issue") && w["tensor issue"].is_string() ? w["tensor issue"].get<std::string>() : "wgmma";
  if (issue == "mma.sync") r.tensor_issue = TensorIssue::warp;
  else if (issue == "wgmma") r.tensor_issue = TensorIssue::warpgroup;
  else throw InputError(file, field + ".tensor issue", "expected \"wgmma\" or \"mma.sync\", got \"" + issue + "\"");
  r.tensor_tflops = static_cast<float>(number_arg(w, "tensor TFLOP/s", file, field, 0));
  r.fma_tflops = static_cast<float>(number_arg(w, "fma TFLOP/s", file, field, 0));
  r.alu_tops = static_cast<float>(number_arg(w, "alu TOP/s", file, field, 0));
  r.memory_tbps = static_cast<float>(number_arg(w, "memory TB/s", file, field, 0));
  r.memory_fill_tbps = static_cast<float>(number_arg(w, "memory fill TB/s", file, field, 0));
  if (r.memory_fill_tbps > r.memory_tbps)
    throw InputError(file, field + ".memory fill TB/s", "expected at most the activity's memory TB/s (fills are part of it)");
  r.unvectorised_tbps = static_cast<float>(number_arg(w, "unvectorised TB/s", file, field, 0));
  if (r.unvectorised_tbps > r.memory_tbps)
    throw InputError(file, field + ".unvectorised TB/s", "expected at most the activity's memory TB/s (part of it)");
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
  if (a.has_work) apply_rates(a.work, k);
}

}  // namespace dvfs
