// Fuzz target: a recording's telemetry and run.json (traces/src/recording.*, traces/src/kernel_loop.*).
// The input is telemetry.csv, then a line "@run.json", then run.json. Every input goes through
// Telemetry::load_csv and its queries, and through read_steady_window (run.json `micro.steady`); when
// the CSV loads and run.json is an object, the two replace those of a shipped kernel-loop recording
// (h200-power/add-bf16, its trace kept) and the whole recording is loaded as `validate --models` and
// the kernel-loop replay do: clocks attached from the telemetry, profiled steps, steady workload.
#include "fuzz/fuzz_support.hpp"
#include "sim/core/errors.hpp"
#include "traces/src/kernel_loop.hpp"
#include "traces/src/recording.hpp"

#include <filesystem>

namespace {

const std::string& recording_dir() {
  static const std::string dir = [] {
    const std::string d = dvfs::fuzz::scratch_dir() + "/recording";
    std::filesystem::create_directories(d);
    dvfs::fuzz::copy_file(dvfs::fuzz::source_dir() + "/traces/recordings/h200-power/add-bf16/trace.json.gz", d + "/trace.json.gz");
    return d;
  }();
  return dir;
}

void query(const dvfs::Telemetry& t) {
  const double t0 = t.begin_ns(), t1 = t.end_ns(), mid = 0.5 * (t0 + t1);
  (void)t.at(mid);
  (void)t.at(t0 - 1);
  (void)t.energy_j_between(t0, mid);
  (void)t.energy_j_between(t0 - 1e9, t1 + 1e9);
  (void)t.mean_sm_mhz(t0, t1);
  (void)t.mean_sm_mhz(mid, mid);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string dir = recording_dir();
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string sep = "\n@run.json\n";
  const std::size_t at = text.find(sep);
  const std::string csv = text.substr(0, at);
  const std::string run = at == std::string::npos ? std::string("{}") : text.substr(at + sep.size());
  dvfs::fuzz::write_file(dir + "/telemetry.csv", reinterpret_cast<const std::uint8_t*>(csv.data()), csv.size());
  dvfs::fuzz::write_file(dir + "/run.json", reinterpret_cast<const std::uint8_t*>(run.data()), run.size());

  bool telemetry_ok = false, run_is_object = false;
  dvfs::SteadyWindow steady;
  bool steady_ok = false;
  dvfs::fuzz::expect_input_errors_only("telemetry", [&] {
    query(dvfs::Telemetry::load_csv(dir + "/telemetry.csv"));
    telemetry_ok = true;
  });
  dvfs::fuzz::expect_input_errors_only("telemetry", [&] {
    const dvfs::Json doc = dvfs::parse_json_text(run, dir + "/run.json");
    run_is_object = doc.is_object();
    steady = dvfs::read_steady_window(doc, dir + "/run.json");
    steady_ok = true;
  });
  if (!telemetry_ok || !run_is_object) return 0;  // the recording would stop at the same error
  static const dvfs::Classifier classifier = dvfs::Classifier::load_default();
  dvfs::fuzz::expect_input_errors_only("telemetry", [&] {
    dvfs::KernelLoop loop;
    loop.recording = dvfs::load_recording(dir, classifier);
    if (!steady_ok) return;
    loop.steady_step_s = steady.step_s;
    loop.steady_s = steady.seconds;
    if (loop.recording.workload.ranks.empty() || loop.recording.workload.ranks.front().steps.empty()) return;
    (void)dvfs::steady_workload(loop);
  });
  return 0;
}
