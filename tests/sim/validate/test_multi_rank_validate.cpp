#include <filesystem>
#include "support/scratch_dir.hpp"
#include "sim/core/errors.hpp"
#include "sim/validate/validate.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

// A two-rank recording in the layout the recorder writes (rank<N>/trace.json, telemetry.csv, run.json):
// two steps per rank; rank 1 computes 2 ms before the all-reduce, rank 0 1 ms and then waits for it in the
// NCCL kernel; the all-reduce of 220.5 MB then takes 0.5 ms, what a 2-GPU ring at 450 GB/s gives.
std::string write_two_rank_recording() {
  static int made = 0;
  const std::string dir = dvfs::testing::scratch_path("dvfs-multirank-" + std::to_string(made++));
  std::filesystem::create_directories(dir);
  const double base_ns = 1.8e18;
  for (int r = 0; r < 2; ++r) {
    const std::string rd = dir + "/rank" + std::to_string(r);
    mkdir(rd.c_str(), 0755);
    std::ostringstream tr;
    tr.precision(15);
    tr << R"({"baseTimeNanoseconds": )" << static_cast<long long>(base_ns) << R"(, "distributedInfo": {"backend": "nccl", "rank": )" << r
       << R"(, "world_size": 2}, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}], "traceEvents": [)";
    int corr = 0;
    bool first = true;
    auto event = [&](const std::string& e) {
      tr << (first ? "" : ",") << e;
      first = false;
    };
    for (int s = 0; s < 2; ++s) {
      const double t = 4000.0 * s;
      event(R"({"ph": "X", "cat": "user_annotation", "name": "step)" + std::to_string(s) + R"(", "pid": 1, "tid": 1, "ts": )" +
            std::to_string(t) + R"(, "dur": 3600})");
      const double compute = r == 0 ? 1000 : 2000;
      struct K {
        const char* name;
        double ts, dur;
        bool nccl;
      };
      for (const K& k : {K{"sm90_xmma_gemm_bf16bf16_bf16f32", t + 10, compute, false},
                         K{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 10 + compute, r == 0 ? 1500.0 : 500.0, true},
                         K{"sm90_xmma_gemm_bf16bf16_bf16f32", t + 2510, 1000, false}}) {
        ++corr;
        event(R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" + std::to_string(t + corr % 3 + 1) +
              R"(, "dur": 1, "args": {"correlation": )" + std::to_string(corr) + "}}");
        std::string args = R"("device": 0, "stream": )" + std::string(k.nccl ? "20" : "7") + R"(, "correlation": )" + std::to_string(corr);
        if (k.nccl)
          args += R"(, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 55125000, "Out msg nelems": 55125000, )"
                  R"("Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]")";
        event(R"({"ph": "X", "cat": "kernel", "name": ")" + std::string(k.name) + R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(k.ts) +
              R"(, "dur": )" + std::to_string(k.dur) + ", \"args\": {" + args + "}}");
      }
    }
    tr << "]}";
    std::ofstream(rd + "/trace.json") << tr.str();
    // 500 W throughout, sampled every 0.5 ms; the clocks at the top.
    std::ofstream tel(rd + "/telemetry.csv");
    tel << "t_ns,energy_mj,power_mw,sm_mhz,mem_mhz\n";
    for (int i = -20; i <= 40; ++i) {
      const double t_ns = base_ns + i * 5e5;
      tel << static_cast<long long>(t_ns) << "," << 1e6 + 500.0 * (i + 20) * 0.5 << ",500000,1980,3201\n";
    }
    std::ofstream run(rd + "/run.json");
    run << R"({"device": {"name": "NVIDIA H200"}, "run": {"profiled_steps": [)";
    for (int s = 0; s < 2; ++s)
      run << (s ? "," : "") << R"({"t0_ns": )" << static_cast<long long>(base_ns + 4e6 * s) << R"(, "t1_ns": )"
          << static_cast<long long>(base_ns + 4e6 * s + 3.6e6) << "}";
    run << "]}}";
  }
  return dir;
}

}  // namespace

TEST_CASE("a multi-GPU recording is validated rank by rank with its collectives replayed together", "[validate][multi-rank]") {
  const std::string dir = write_two_rank_recording();
  REQUIRE(is_multi_rank_recording(dir));
  const Json rep = validate_multi_rank(dir, "h200", default_cluster_spec());
  CHECK(rep["ranks"] == 2);
  CHECK(rep["collectives"]["calls_simulated"] == 4);
  const Json* recorded = nullptr;
  for (const Json& src : rep["clock_sources"])
    if (src["clock_source"] == "recorded") recorded = &src;
  REQUIRE(recorded != nullptr);
  REQUIRE((*recorded)["ranks"].size() == 2);
  for (const Json& r : (*recorded)["ranks"]) {
    INFO("rank " << r["rank"]);
    CHECK(std::fabs(r["time_error_pct"].get<double>()) < 2.0);
    // Rank 0 waited 1 ms for rank 1 inside the all-reduce; the replay must find the same wait.
    CHECK(r["simulated_communication_s"].get<double>() == Approx(r["measured_communication_s"].get<double>()).epsilon(0.03));
  }
  CHECK((*recorded)["iteration_time_mape_pct"].get<double>() < 2.0);
  CHECK(format_multi_rank_validation(rep).find("iteration time (slowest rank per step) MAPE") != std::string::npos);
  // Each rank's telemetry is checked for stalls (samples every 0.5 ms here: none); a stall is named with its rank.
  REQUIRE(rep["telemetry_gaps"].size() == 2);
  for (const Json& g : rep["telemetry_gaps"]) CHECK(g["steps"].empty());
  CHECK(format_multi_rank_validation(rep).find("telemetry gap") == std::string::npos);
  Json stalled = rep;
  stalled["telemetry_gaps"][1]["steps"] = Json::array({1});
  stalled["telemetry_gaps"][1]["longest_s"] = 0.4;
  CHECK(format_multi_rank_validation(stalled).find("telemetry gap: rank " + std::to_string(rep["telemetry_gaps"][1]["rank"].get<int>()) +
                                                   " step 1 energy interpolated across up to 400 ms") != std::string::npos);
  std::system(("rm -rf " + dir).c_str());
}
