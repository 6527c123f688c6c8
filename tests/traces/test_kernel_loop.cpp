#include "traces/src/kernel_loop.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace dvfs;
using Catch::Detail::Approx;

TEST_CASE("a kernel loop replays with the steady loop's step time", "[traces][loop]") {
  const KernelLoop loop = load_kernel_loop(data_dir() + "/traces/recordings/h200-power/gemm-bf16-1024");
  CHECK(loop.name == "gemm-bf16-1024");
  CHECK(loop.measured_power_w > 100);
  const Workload wl = steady_workload(loop);
  const Rank& r = wl.ranks.front();
  REQUIRE(r.steps.size() == 3);
  for (const Step& st : r.steps) {
    double t = st.lead_s + st.tail_s;
    for (int i = st.first_kernel; i <= st.last_kernel; ++i)
      t += r.kernels[static_cast<std::size_t>(i)].duration_s + (i > st.first_kernel ? r.kernels[static_cast<std::size_t>(i)].gap_before_s : 0.0);
    CHECK(t == Approx(loop.steady_step_s).epsilon(1e-9));
  }
  for (const Kernel& k : r.kernels) CHECK(k.gap_before_s >= 0);
}

TEST_CASE("a step range written once per stream is one step", "[traces][loop]") {
  // cuDNN's FFT convolution runs on two streams: Kineto wrote two device-side step<i> ranges per step
  const KernelLoop loop = load_kernel_loop(data_dir() + "/traces/recordings/h200-power/conv-3x3-128c-28-b64-fp32-nchw");
  CHECK(loop.recording.workload.ranks.front().steps.size() == 3);
}

namespace {

// A copy of a shipped loop recording in a temporary folder, its run.json changed by `edit`.
std::filesystem::path loop_copy(const std::string& src_dir, const char* name, const std::function<void(Json&)>& edit) {
  namespace fs = std::filesystem;
  const fs::path src = src_dir, dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"trace.json.gz", "telemetry.csv"}) fs::copy_file(src / f, dir / f);
  Json run = read_json_file((src / "run.json").string());
  edit(run);
  std::ofstream(dir / "run.json") << run.dump();
  return dir;
}

}  // namespace

TEST_CASE("a recording without a steady window is not a kernel loop", "[traces][loop]") {
  const auto dir = loop_copy(data_dir() + "/traces/recordings/h200-power/add-bf16", "dvfs_loop_without_micro",
                             [](Json& run) { run["micro"].erase("steady"); });
  CHECK_THROWS_WITH(load_kernel_loop(dir.string()), Catch::Contains("run.json: micro.steady"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a loop measured over its profiled window replays its profiled steps as recorded", "[traces][loop]") {
  const std::string dir = data_dir() + "/traces/recordings/h200-power-window/gemm-bf16-4096";
  const KernelLoop loop = load_kernel_loop(dir);
  CHECK(loop.profiled_window);
  const Recording& rec = loop.recording;
  REQUIRE(rec.steps.size() == 50);
  // the measurement is the energy counter over the profiled steps, first start to last end
  const double t0 = rec.steps.front().t0_ns, t1 = rec.steps.back().t1_ns;
  CHECK(loop.steady_s == Approx((t1 - t0) * 1e-9));
  CHECK(loop.steady_step_s == Approx(loop.steady_s / 50));
  CHECK(loop.measured_power_w == Approx(rec.telemetry.energy_j_between(t0, t1) / loop.steady_s));
  const Workload wl = steady_workload(loop);
  const Rank &replayed = wl.ranks.front(), &recorded = rec.workload.ranks.front();
  REQUIRE(replayed.kernels.size() == recorded.kernels.size());
  for (std::size_t i = 0; i < replayed.kernels.size(); ++i) CHECK(replayed.kernels[i].gap_before_s == recorded.kernels[i].gap_before_s);
  for (std::size_t i = 0; i < replayed.steps.size(); ++i) CHECK(replayed.steps[i].tail_s == recorded.steps[i].tail_s);
}

TEST_CASE("a loop's window must say it was measured over the profiled steps", "[traces][loop]") {
  const auto dir = loop_copy(data_dir() + "/traces/recordings/h200-power-window/gemm-bf16-4096", "dvfs_loop_with_unknown_window",
                             [](Json& run) { run["micro"]["window"] = "steady"; });
  CHECK_THROWS_WITH(load_kernel_loop(dir.string()), Catch::Contains("run.json: micro.window") && Catch::Contains("profiled"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the recorder's FMA-chain kernel does the FLOPs its run.json counts", "[traces][loop]") {
  // split busy_sm_fma: no operator launches the Triton kernel, so its work comes from the recorder's count
  const std::string dir = data_dir() + "/traces/recordings/h200-power-12/micro/smallgrid-66";
  const KernelLoop loop = load_kernel_loop(dir);
  const double flops = loop.micro["flops"].get<double>();
  const Rank& r = loop.recording.workload.ranks.front();
  REQUIRE(!r.kernels.empty());
  for (const Kernel& k : r.kernels) {
    CHECK(k.work == WorkSource::launch_shape);
    CHECK(k.fma_tflops * k.duration_s * 1e12 == Approx(flops).epsilon(1e-6));
    CHECK(k.tensor_tflops == 0);
    CHECK(k.memory_tbps == 0);
    CHECK(k.sm_fill == Approx(66.0 / 132).epsilon(0.01));  // one 1,024-thread block per SM
  }
}

TEST_CASE("an FMA-chain loop without a FLOP count is refused", "[traces][loop]") {
  const auto dir = loop_copy(data_dir() + "/traces/recordings/h200-power-12/micro/smallgrid-16", "dvfs_loop_without_flops",
                             [](Json& run) { run["micro"].erase("flops"); });
  CHECK_THROWS_WITH(load_kernel_loop(dir.string()), Catch::Contains("run.json: micro.flops"));
  std::filesystem::remove_all(dir);
}
