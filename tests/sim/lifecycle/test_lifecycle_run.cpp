// The lifecycle scenario kind (issue 20): a job's phases on SimGrid with CPU power states, disks and links.
#include "sim/core/errors.hpp"
#include "sim/lifecycle/lifecycle_run.hpp"
#include "sim/lifecycle/lifecycle_sim.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/scenario_kinds.hpp"
#include "sim/lifecycle/lifecycle_spec.hpp"
#include "sim/core/json_util.hpp"
#include "tests/support/scratch_dir.hpp"

#include <fstream>

#include <catch2/catch.hpp>

using namespace dvfs;

namespace {

const std::string kDir = std::string(DVFS_TEST_FIXTURES) + "/lifecycle";

Json train(double core_s_per_sample, int workers) {
  return {{"name", "epoch"}, {"kind", "train"}, {"steps", 40}, {"samples_per_step", 64}, {"read_bytes_per_step", 1e6},
          {"workers", workers}, {"core_s_per_sample", core_s_per_sample}, {"gpu_step_s", 0.05}, {"gpu_step_w", 500}};
}

Json job(Json phases, Json policies = Json::array()) {
  return {{"name", "t"}, {"lifecycle", {{"node", "node.json"}, {"gpu", "h200"}, {"phases", phases}, {"policies", policies}}}};
}

const Json& phase(const Json& s, std::size_t i) { return s.at("phases").at(i); }

}  // namespace

TEST_CASE("a GPU-bound training phase takes its steps' GPU time and draws the given GPU power while busy", "[lifecycle]") {
  const Json s = run_lifecycle(job(Json::array({train(1e-5, 4)})), "t.json", kDir);
  const Json& p = phase(s, 0);
  CHECK(p["gpu_busy_s"].get<double>() == Approx(40 * 0.05));
  CHECK(p["time_s"].get<double>() == Approx(2.0).epsilon(0.02));  // the first batch's load is the only wait
  CHECK(p["data_wait_s"].get<double>() < 0.02);
  const double idle_s = p["time_s"].get<double>() - p["gpu_busy_s"].get<double>();
  CHECK(p["gpu_j"].get<double>() == Approx(40 * 0.05 * 500 + idle_s * 120));
}

TEST_CASE("an input-bound phase waits for decoding: fewer workers, longer phase and more CPU share of energy", "[lifecycle]") {
  // 64 samples x 10 ms = 0.64 core-s per batch, 0.05 s of GPU: decoding sets the pace.
  const Json four = phase(run_lifecycle(job(Json::array({train(0.01, 4)})), "t.json", kDir), 0);
  const Json eight = phase(run_lifecycle(job(Json::array({train(0.01, 8)})), "t.json", kDir), 0);
  // Every worker decodes its share of batches back to back; the last round's batches then wait for the GPU.
  CHECK(four["time_s"].get<double>() == Approx(10 * 0.64 + 4 * 0.05).epsilon(0.01));
  CHECK(eight["time_s"].get<double>() == Approx(5 * 0.64 + 8 * 0.05).epsilon(0.01));
  CHECK(four["data_wait_s"].get<double>() > 0.5 * four["time_s"].get<double>());
  CHECK(four["cpu_core_s"].get<double>() == Approx(eight["cpu_core_s"].get<double>()));  // the same work
}

TEST_CASE("CPU energy comes from SimGrid's host energy plugin: idle power for an idle phase", "[lifecycle]") {
  const Json s = run_lifecycle(job(Json::array({{{"name", "wait"}, {"kind", "idle"}, {"seconds", 10}}})), "t.json", kDir);
  CHECK(phase(s, 0)["cpu_j"].get<double>() == Approx(10 * 60));  // node.json: pstate 0 idle 60 W
  CHECK(phase(s, 0)["gpu_j"].get<double>() == Approx(10 * 120));
  CHECK(phase(s, 0)["storage_j"].get<double>() == Approx(10 * 5));  // the local disk's idle 5 W
  CHECK(s["totals"]["share_of_phase_cpu_j"].get<double>() == Approx(600.0 / 1850.0));
}

TEST_CASE("a checkpoint, like a training phase, leaves the GPU's no-context idle: the phases after it draw the active idle",
          "[lifecycle]") {
  const Json wait = {{"name", "wait"}, {"kind", "idle"}, {"seconds", 10}};
  const Json ck = {{"name", "ckpt"}, {"kind", "checkpoint"}, {"bytes", 1e8}, {"to", "local"}};
  const Json after_ckpt = run_lifecycle(job(Json::array({wait, ck, wait})), "t.json", kDir);
  const Json after_train = run_lifecycle(job(Json::array({wait, train(1e-5, 4), wait})), "t.json", kDir);
  CHECK(phase(after_ckpt, 0)["gpu_j"].get<double>() == Approx(10 * 120));  // the node's idle: no process on the GPU yet
  const double active_w = phase(after_train, 2)["gpu_j"].get<double>() / 10;
  CHECK(active_w != Approx(120));  // the GPU model's idle at its default clock, not the node's
  CHECK(phase(after_ckpt, 2)["gpu_j"].get<double>() == Approx(10 * active_w));
}

TEST_CASE("a copy from shared storage is bounded by its link and costs network energy per byte", "[lifecycle]") {
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 5e9}, {"from", "shared"}, {"to", "local"}};
  const Json s = run_lifecycle(job(Json::array({stage})), "t.json", kDir);
  // link 1.25 GB/s < shared read 2 GB/s < local write 2 GB/s
  CHECK(phase(s, 0)["time_s"].get<double>() == Approx(5e9 / 1.25e9 + 0.01).epsilon(0.01));
  CHECK(phase(s, 0)["network_j"].get<double>() == Approx(5e9 * 2e-9));
}

TEST_CASE("policies across phases: a lower CPU clock slows decoding; skipping staging reads from shared storage", "[lifecycle]") {
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 2e9}, {"from", "shared"}, {"to", "local"}};
  Json pols = Json::array({{{"name", "cpu 2 GHz"}, {"cpu_pstate", 1}}, {{"name", "no staging"}, {"staging", "skip"}},
                           {{"name", "gpu 900 MHz when input-bound"}, {"gpu_sm_mhz_input_bound", 900}}});
  const Json s = run_lifecycle(job(Json::array({stage, train(0.01, 4)}), pols), "t.json", kDir);
  const Json& slow = s["policies"][0];
  CHECK(slow["saved"]["time_s"].get<double>() < 0);  // decode at 2 GHz instead of 3
  CHECK(slow["by_kind"]["train"]["time_s"].get<double>() == Approx(1.5 * phase(s, 1)["time_s"].get<double>()).epsilon(0.05));
  const Json& skip = s["policies"][1];
  CHECK_FALSE(skip["by_kind"].contains("staging"));
  CHECK(skip["saved"]["time_s"].get<double>() > 1.0);
  const Json& gpu = s["policies"][2];  // the phase waits for data: a lower clock saves GPU energy, costs no time
  CHECK(gpu["saved"]["gpu_j"].get<double>() > 0);
  CHECK(std::abs(gpu["saved"]["time_s"].get<double>()) < 0.05 * phase(s, 1)["time_s"].get<double>());
}

TEST_CASE("the first phase of a kind pays its one-time costs on its first step; later phases of the kind do not", "[lifecycle]") {
  Json doc = job(Json::array({train(1e-5, 4), train(1e-5, 4)}));
  doc["lifecycle"]["first_occurrence"] = {{"train", {{"s", 1.5}, {"gpu_w", 300}, {"core_s", 0.4}}}};
  const Json s = run_lifecycle(doc, "t.json", kDir);
  const Json &first = phase(s, 0), &later = phase(s, 1);
  CHECK(first["time_s"].get<double>() == Approx(later["time_s"].get<double>() + 1.5).epsilon(0.01));
  CHECK(first["gpu_busy_s"].get<double>() == Approx(later["gpu_busy_s"].get<double>()));  // the steps' own work is unchanged
  CHECK(first["gpu_j"].get<double>() == Approx(later["gpu_j"].get<double>() + 1.5 * 300).epsilon(0.01));
  CHECK(first["cpu_core_s"].get<double>() == Approx(later["cpu_core_s"].get<double>() + 0.4).epsilon(0.01));
  // an input-bound first epoch: loaders keep filling their prefetch slots during the warm-up, so it costs less than 1.5 s
  Json io = job(Json::array({train(0.01, 4), train(0.01, 4)}));
  io["lifecycle"]["first_occurrence"] = {{"train", {{"s", 1.5}, {"gpu_w", 300}}}};
  const Json t = run_lifecycle(io, "t.json", kDir);
  const double extra = phase(t, 0)["time_s"].get<double>() - phase(t, 1)["time_s"].get<double>();
  CHECK(extra > 0.1);
  CHECK(extra < 1.5);
  Json bad = doc;
  bad["lifecycle"]["first_occurrence"] = {{"checkpoint", {{"s", 1}, {"gpu_w", 100}}}};
  CHECK_THROWS_WITH(run_lifecycle(bad, "t.json", kDir), Catch::Contains("t.json: lifecycle.first_occurrence"));
}

TEST_CASE("a checkpoint first copies its tensors to the host: bytes / gpu_d2h_bps at the GPU model's copy-engine power", "[lifecycle]") {
  const Json ck = {{"name", "ckpt"}, {"kind", "checkpoint"}, {"bytes", 2e9}, {"to", "local"}};
  // the GPU has run steps before, so between them it is at the GPU model's idle power at its clock
  const Json without = phase(run_lifecycle(job(Json::array({train(1e-5, 4), ck})), "t.json", kDir), 1);
  Json doc = job(Json::array({train(1e-5, 4), ck}));
  doc["lifecycle"]["node"] = "node-d2h.json";  // node.json with gpu_d2h_bps 1e9
  const Json with = phase(run_lifecycle(doc, "t.json", kDir), 1);
  CHECK(with["time_s"].get<double>() == Approx(without["time_s"].get<double>() + 2.0));
  const double idle_w = without["gpu_j"].get<double>() / without["time_s"].get<double>();
  const double copy_w = (with["gpu_j"].get<double>() - without["gpu_j"].get<double>()) / 2.0;
  CHECK(copy_w > idle_w);       // the copy engine and DRAM reads draw power above idle ...
  CHECK(copy_w < idle_w + 10);  // ... but the SMs stay idle: far below a kernel's power
}

TEST_CASE("a lifecycle scenario is a scenario kind: dvfs-sim run's entry point runs it", "[lifecycle]") {
  Json doc = job(Json::array({train(1e-5, 2)}));
  CHECK(scenario_kind(doc) == ScenarioKind::registered);
  const ScenarioRun run = run_scenario(doc, "t.json", kDir);
  REQUIRE(run.registered != nullptr);
  CHECK(run.registered->key == "lifecycle");
  CHECK_FALSE(run.is_study());  // it writes summary.json
  CHECK(run.summary["kind"] == "lifecycle");
  CHECK(run.report().find("train") != std::string::npos);
}

TEST_CASE("bad lifecycle input names the file and field", "[lifecycle]") {
  Json bad = job(Json::array({train(0.01, 4)}));
  bad["lifecycle"]["phases"][0]["kind"] = "download";
  CHECK_THROWS_WITH(run_lifecycle(bad, "t.json", kDir), Catch::Contains("t.json: lifecycle.phases[0].kind: expected staging"));
  Json store = job(Json::array({train(0.01, 4)}));
  store["lifecycle"]["phases"][0]["read_from"] = "tape";
  CHECK_THROWS_WITH(run_lifecycle(store, "t.json", kDir), Catch::Contains("lifecycle.phases[0].read_from: expected a storage of the node"));
}

TEST_CASE("a lifecycle phase beyond the limits is refused before it drowns the job's other phases", "[lifecycle][errors]") {
  // 1e30 files staged: the other phases' seconds would vanish beside ~1e25 s in double precision, their shares 0
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"files", 1e30}, {"from", "local"}, {"to", "local"}};
  const Json many = job(Json::array({stage, train(0.01, 4)}));
  CHECK_THROWS_WITH(run_lifecycle(many, "t.json", kDir),
                    Catch::Contains("t.json: lifecycle.phases[0].files: expected at most 1e+10") && Catch::Contains("got 1e+30"));
  Json idle = job(Json::array({train(0.01, 4)}));
  idle["lifecycle"]["phases"].push_back({{"name", "wait"}, {"kind", "idle"}, {"seconds", 1e12}});
  CHECK_THROWS_WITH(run_lifecycle(idle, "t.json", kDir), Catch::Contains("lifecycle.phases[1].seconds: expected at most 1e+07"));
  Json rate = job(Json::array({train(0.01, 4)}));
  rate["lifecycle"]["phases"][0]["core_s_per_sample"] = 1e300;
  CHECK_THROWS_WITH(run_lifecycle(rate, "t.json", kDir), Catch::Contains("lifecycle.phases[0].core_s_per_sample: expected at most 1e+06"));
}

TEST_CASE("a lifecycle phase with a key of another kind, a fractional file count or two GPU step energies is refused",
          "[lifecycle][errors]") {
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"files", 1000}, {"from", "local"}, {"to", "local"}};
  auto refused = [&](Json ph, const char* key, const Json& value) {
    ph[key] = value;
    return run_lifecycle(job(Json::array({ph})), "t.json", kDir);
  };
  CHECK_NOTHROW(refused(stage, "files", 1000.0));
  // A checkpoint's `steps` and a staging's `workers` were read by nobody: the job ran as if they were not there.
  Json save = stage;
  save.erase("from");
  save["kind"] = "checkpoint";
  CHECK_THROWS_WITH(refused(save, "steps", 10), Catch::Contains("t.json: lifecycle.phases[0].steps: unknown key"));
  CHECK_THROWS_WITH(refused(save, "from", "local"), Catch::Contains("lifecycle.phases[0].from: unknown key"));
  CHECK_THROWS_WITH(refused(stage, "workers", 8), Catch::Contains("lifecycle.phases[0].workers: unknown key"));
  CHECK_THROWS_WITH(refused(train(0.01, 4), "bytes", 1e9), Catch::Contains("lifecycle.phases[0].bytes: unknown key"));
  CHECK_THROWS_WITH(refused({{"name", "wait"}, {"kind", "idle"}, {"seconds", 1}}, "steps", 3),
                    Catch::Contains("lifecycle.phases[0].steps: unknown key (expected one of: name, kind, seconds, note)"));
  for (const char* count : {"files", "sync_files", "recently_freed_inodes", "reused_before"})
    CHECK_THROWS_WITH(refused(stage, count, 2.5), Catch::Contains(std::string("lifecycle.phases[0].") + count +
                                                                  ": expected a whole number of files or inodes, got 2.5"));
  CHECK_THROWS_WITH(refused(train(0.01, 4), "gpu_step_j", 25),
                    Catch::Contains("lifecycle.phases[0].gpu_step_w: expected either gpu_step_w (mean power) or gpu_step_j"));
}

TEST_CASE("a write-behind copy: the process's CPU first, then the sync writes every dirty byte with the kernel's "
          "writeback CPU spread over other cores", "[lifecycle]") {
  // 1000 files x 1 ms of the copying process = 1 s; then the sync: the copy's 1 GB and 1 GB of other dirty files at
  // 2 GB/s = 1 s, beside 2000 files x 1 ms = 2 core-s of writeback (two cores keep up with the disk); then sync_s.
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"files", 1000}, {"from", "local"},
                      {"to", "local"}, {"core_s_per_file", 1e-3}, {"sync_bytes", 1e9}, {"sync_files", 1000}};
  const Json doc = {{"name", "t"}, {"lifecycle", {{"node", "node-write-behind.json"}, {"gpu", "h200"}, {"phases", Json::array({stage})}}}};
  const Json s = run_lifecycle(doc, "t.json", kDir);
  const Json& p = phase(s, 0);
  CHECK(p["time_s"].get<double>() == Approx(1.0 + 1.0 + 0.01).epsilon(1e-3));  // a streaming copy: max(1 s, 0.5 s)
  CHECK(p["cpu_core_s"].get<double>() == Approx(1.0 + 2.0).epsilon(1e-6));
  CHECK(p["bytes_written"].get<double>() == Approx(2e9));
}

TEST_CASE("a write-behind sync spends the disk's time per file beside the data, and writes only the data's bytes", "[lifecycle]") {
  // 1000 files x 1 ms of the copying process = 1 s; the sync: 2 GB at 2 GB/s = 1 s plus 2000 files x 0.5 ms = 1 s of
  // metadata on the disk; then sync_s. The bytes written are the data's.
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"files", 1000}, {"from", "local"},
                      {"to", "local"}, {"core_s_per_file", 1e-3}, {"sync_bytes", 1e9}, {"sync_files", 1000}};
  const Json doc = {{"name", "t"}, {"lifecycle", {{"node", "node-sync-per-file.json"}, {"gpu", "h200"}, {"phases", Json::array({stage})}}}};
  const Json s = run_lifecycle(doc, "t.json", kDir);
  const Json& p = phase(s, 0);
  CHECK(p["time_s"].get<double>() == Approx(1.0 + 1.0 + 1.0 + 0.01).epsilon(1e-3));
  CHECK(p["bytes_written"].get<double>() == Approx(2e9));
  Json bad = doc;
  bad["lifecycle"]["node"] = "node-write-behind.json";  // the same phase without the per-file time: 1 s shorter
  const Json without = run_lifecycle(bad, "t.json", kDir);
  CHECK(phase(without, 0)["time_s"].get<double>() == Approx(1.0 + 1.0 + 0.01).epsilon(1e-3));
}

TEST_CASE("a copy onto recently freed inodes spends the scan on the copying core: longer by its CPU time", "[lifecycle]") {
  // 250 files x 1 ms = 0.25 s of the copying process; 250 of them on recently freed inodes from the pool's start,
  // groups of 100: 5050 + 5050 + (100 + ... + 51) = 13,875 inodes scanned x 1 us = 13.875 ms more on the same core.
  Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 0}, {"files", 250}, {"from", "local"}, {"to", "local"},
                {"core_s_per_file", 1e-3}};
  const Json base = {{"name", "t"}, {"lifecycle", {{"node", "node-recent-free-scan.json"}, {"gpu", "h200"}, {"phases", Json::array({stage})}}}};
  const double t0 = phase(run_lifecycle(base, "t.json", kDir), 0)["time_s"].get<double>();
  stage["recently_freed_inodes"] = 10000;
  const Json recent = {{"name", "t"}, {"lifecycle", {{"node", "node-recent-free-scan.json"}, {"gpu", "h200"}, {"phases", Json::array({stage})}}}};
  const Json s = run_lifecycle(recent, "t.json", kDir);
  const Json& p = phase(s, 0);
  CHECK(p["time_s"].get<double>() - t0 == Approx(13875e-6).epsilon(1e-3));
  CHECK(p["cpu_core_s"].get<double>() == Approx(0.25 + 13875e-6).epsilon(1e-6));
}

TEST_CASE("a scan price of recently freed inodes needs the disk's inodes per group: refused without, naming the field", "[lifecycle]") {
  const Json doc = {{"name", "t"}, {"lifecycle", {{"node", "node-bad-recent-free-scan.json"}, {"gpu", "h200"},
                    {"phases", Json::array({{{"name", "wait"}, {"kind", "idle"}, {"seconds", 1}}})}}}};
  CHECK_THROWS_WITH(run_lifecycle(doc, "t.json", kDir), Catch::Contains("storage[0].inodes_per_group: expected > 0 inodes per block group"));
}

TEST_CASE("a sync time per file belongs to a write-behind disk: elsewhere it is refused, naming the field", "[lifecycle]") {
  const Json doc = {{"name", "t"}, {"lifecycle", {{"node", "node-bad-sync-per-file.json"}, {"gpu", "h200"},
                    {"phases", Json::array({{{"name", "wait"}, {"kind", "idle"}, {"seconds", 1}}})}}}};
  CHECK_THROWS_WITH(run_lifecycle(doc, "t.json", kDir), Catch::Contains("storage[0].sync_s_per_file: expected only with write_behind"));
}

TEST_CASE("write-behind is a local disk's: a file server marked write_behind is refused, naming the field", "[lifecycle]") {
  const Json doc = {{"name", "t"}, {"lifecycle", {{"node", "node-bad-write-behind.json"}, {"gpu", "h200"},
                    {"phases", Json::array({{{"name", "wait"}, {"kind", "idle"}, {"seconds", 1}}})}}}};
  CHECK_THROWS_WITH(run_lifecycle(doc, "t.json", kDir), Catch::Contains("storage[0].write_behind: expected write_behind only on a local disk"));
}

// Each node field at an extreme, one at a time: SimGrid aborted (exit 134) on an infinite amount of work, and a
// block group of 1e-9 inodes looped for ever; now every one is one error naming the node file and the field.
TEST_CASE("a node file's clocks, bandwidths and per-file costs beyond their limits are refused, naming the field", "[lifecycle][errors]") {
  const dvfs::testing::ScratchDir dir("lifecycle-node");
  const Json base = read_json_file(kDir + "/node.json");
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"files", 1000}, {"from", "shared"}, {"to", "local"}};
  auto run_with = [&](const std::string& pointer, const Json& value, const Json& scenario_ghz = nullptr) {
    Json node = base;
    node[Json::json_pointer(pointer)] = value;
    std::ofstream(dir / "node.json") << node.dump();
    Json doc = job(Json::array({stage, train(0.01, 4)}));
    if (!scenario_ghz.is_null()) doc["lifecycle"]["recorded_cpu_ghz"] = scenario_ghz;
    return run_lifecycle(doc, "t.json", dir.path());
  };
  CHECK_NOTHROW(run_with("/cores", 16));
  CHECK_THROWS_WITH(run_with("/cores", 16, 1e300), Catch::Contains("t.json: lifecycle.recorded_cpu_ghz: expected 0.01 to 100 GHz"));
  CHECK_THROWS_WITH(run_with("/cpu_pstates/0/ghz", 1e300), Catch::Contains("node.json: cpu_pstates[0].ghz: expected 0.01 to 100 GHz"));
  CHECK_THROWS_WITH(run_with("/cpu_pstates/1/ghz", 1e-300), Catch::Contains("cpu_pstates[1].ghz: expected 0.01 to 100 GHz"));
  CHECK_THROWS_WITH(run_with("/cpu_pstates/0/all_cores_w", 1e300), Catch::Contains("cpu_pstates[0].all_cores_w: expected at most 1e+06"));
  CHECK_THROWS_WITH(run_with("/gpu_d2h_bps", 1e-300), Catch::Contains("node.json: gpu_d2h_bps: expected 1 to 1e+15 bytes per second"));
  CHECK_THROWS_WITH(run_with("/gpu_idle_w", 1e300), Catch::Contains("gpu_idle_w: expected at most 10000"));
  CHECK_THROWS_WITH(run_with("/storage/0/read_bps", 1e300), Catch::Contains("storage[0].read_bps: expected 1 to 1e+15"));
  CHECK_THROWS_WITH(run_with("/storage/0/sync_s", 1e300), Catch::Contains("storage[0].sync_s: expected at most 1e+07"));
  CHECK_THROWS_WITH(run_with("/storage/0/file_open_s", 1e300), Catch::Contains("storage[0].file_open_s: expected at most 1"));
  CHECK_THROWS_WITH(run_with("/storage/1/link_latency_s", 1e300), Catch::Contains("storage[1].link_latency_s: expected at most 1e+07"));
  CHECK_THROWS_WITH(run_with("/storage/0/idle_w", 1e300), Catch::Contains("storage[0].idle_w: expected at most 1e+06"));
  Json writeback = base["storage"][0];
  writeback["write_behind"] = true;
  writeback["writeback_core_s_per_file"] = 1e300;
  CHECK_THROWS_WITH(run_with("/storage/0", writeback), Catch::Contains("storage[0].writeback_core_s_per_file: expected at most 1"));
  Json scan = base["storage"][0];
  scan["recent_free_scan_core_s"] = 1e300;
  scan["inodes_per_group"] = 8192;
  CHECK_THROWS_WITH(run_with("/storage/0", scan), Catch::Contains("storage[0].recent_free_scan_core_s: expected at most 1"));
  scan["recent_free_scan_core_s"] = 2.67e-8;
  scan["inodes_per_group"] = 1e-9;
  CHECK_THROWS_WITH(run_with("/storage/0", scan), Catch::Contains("storage[0].inodes_per_group: expected 1 to 4.29497e+09 inodes"));
  Json twin = base["storage"][1];
  twin["name"] = "local";
  CHECK_THROWS_WITH(run_with("/storage/1", twin), Catch::Contains("storage[1].name: expected a name no other storage has"));
  // Bounded fields whose product is not: 1e10 files at 1 core-second each onto a disk.
  Json slow = base["storage"][0];
  slow["write_behind"] = true;
  slow["writeback_core_s_per_file"] = 1;
  Json doc = job(Json::array({{{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"files", 1e10}, {"from", "shared"}, {"to", "local"}}}));
  Json node = base;
  node["storage"][0] = slow;
  std::ofstream(dir / "node.json") << node.dump();
  CHECK_THROWS_WITH(run_lifecycle(doc, "t.json", dir.path()),
                    Catch::Contains("t.json: lifecycle.phases[0].files: expected a copy whose CPU work is at most 1e+07 core-seconds"));
}

// Every byte was charged at the highest j_per_byte and link_j_per_byte of any storage of the node: a checkpoint to a
// free local disk cost 1000 J because the file server's device had 1e-6 J/B.
TEST_CASE("each byte costs the energy per byte of the storage it goes to or comes from, and of that storage's link only",
          "[lifecycle]") {
  const dvfs::testing::ScratchDir dir("lifecycle-per-byte");
  Json node = read_json_file(kDir + "/node.json");
  node["storage"][1]["j_per_byte"] = 1e-6;  // shared; local: 5e-9 J/B, idle 5 W; shared's link: 2e-9 J/B
  std::ofstream(dir / "node.json") << node.dump();
  auto ckpt = [&](const char* to) {
    const Json ck = {{"name", "ck"}, {"kind", "checkpoint"}, {"bytes", 1e9}, {"to", to}};
    return phase(run_lifecycle(job(Json::array({ck})), "t.json", dir.path()), 0);
  };
  const Json local = ckpt("local");
  CHECK(local["storage_j"].get<double>() == Approx(5 * local["time_s"].get<double>() + 1e9 * 5e-9));
  CHECK(local["network_j"].get<double>() == 0);
  const Json shared = ckpt("shared");
  CHECK(shared["storage_j"].get<double>() == Approx(5 * shared["time_s"].get<double>() + 1e9 * 1e-6));
  CHECK(shared["network_j"].get<double>() == Approx(1e9 * 2e-9));
  // a staging copy: read from shared at its rate, written to local at local's
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"from", "shared"}, {"to", "local"}};
  const Json s = phase(run_lifecycle(job(Json::array({stage})), "t.json", dir.path()), 0);
  CHECK(s["storage_j"].get<double>() == Approx(5 * s["time_s"].get<double>() + 1e9 * 1e-6 + 1e9 * 5e-9));
  CHECK(s["network_j"].get<double>() == Approx(1e9 * 2e-9));
}

// The output folder given as an existing file: nothing was written, yet the run exited 0 and printed the path.
TEST_CASE("a lifecycle summary that cannot be written is an error naming the output folder, not a silent success",
          "[lifecycle][errors]") {
  const dvfs::testing::ScratchDir dir("lifecycle-out");
  std::ofstream(dir / "empty.json") << "";
  const ScenarioKindSpec* kind = scenario_kind_registry().find("lifecycle");
  REQUIRE(kind != nullptr);
  const Json summary = {{"kind", "lifecycle"}};
  CHECK_THROWS_WITH(kind->outputs(summary, dir / "empty.json"),
                    Catch::Equals(dir / "empty.json" + ": cannot write result files"));
  const std::vector<std::string> files = kind->outputs(summary, dir / "out");
  REQUIRE(files.size() == 1);
  CHECK(read_json_file(files[0]) == summary);
}

// A train phase of 1e6 steps ran for minutes (SimGrid's time per step grows with a loader's steps); 1e8 was accepted.
TEST_CASE("a lifecycle phase's steps and the steps simulated in all are bounded, naming the phase's steps", "[lifecycle][errors]") {
  Json one = job(Json::array({train(1e-5, 4)}));
  one["lifecycle"]["phases"][0]["steps"] = 1000000;
  CHECK_THROWS_WITH(run_lifecycle(one, "t.json", kDir),
                    Catch::Contains("t.json: lifecycle.phases[0].steps: expected at most 10000 steps in a phase") &&
                        Catch::Contains("got 1000000"));
  // 6 phases x 10,000 steps, run for the job and its one policy: 1.2e5 > 1e5; the sixth phase's steps cross it ...
  Json many = job(Json::array(), Json::array({{{"name", "cpu"}, {"cpu_pstate", 1}}}));
  for (int i = 0; i < 6; ++i) {
    Json p = train(1e-5, 4);
    p["steps"] = 10000;
    many["lifecycle"]["phases"].push_back(p);
  }
  CHECK_THROWS_WITH(run_lifecycle(many, "t.json", kDir),
                    Catch::Contains("t.json: lifecycle.phases[5].steps: expected at most 100000 steps simulated in all") &&
                        Catch::Contains("60000, run 2 times (the job and its 1 policies)"));
  // ... five reach it exactly: accepted (parsed only; running them takes seconds)
  many["lifecycle"]["phases"].erase(5);
  CHECK_NOTHROW(parse_lifecycle(many, "t.json", kDir));
}

// A given step's policy clock of 99999 MHz was extrapolated ("saves -8864 J (-205.7 %)"), 1 MHz made a 170 s job;
// replayed steps refused the same clock, naming "policy.sm_mhz".
TEST_CASE("a lifecycle policy's GPU clock must be one the GPU model has, named at the policy", "[lifecycle][errors]") {
  for (double mhz : {99999.0, 1.0, 1000.5}) {
    const Json doc = job(Json::array({train(0.01, 4)}), Json::array({{{"name", "x"}, {"gpu_sm_mhz_input_bound", mhz}}}));
    CHECK_THROWS_WITH(run_lifecycle(doc, "t.json", kDir),
                      Catch::StartsWith("t.json: lifecycle.policies[0].gpu_sm_mhz_input_bound: SM clock") &&
                          Catch::Contains("is not supported by h200 (expected one of 345-1980 MHz in 15 MHz steps)"));
  }
  const Json ok = job(Json::array({train(0.01, 4)}), Json::array({{{"name", "x"}, {"gpu_sm_mhz_input_bound", 990}}}));
  CHECK_NOTHROW(parse_lifecycle(ok, "t.json", kDir));
}

// gpu_step_w 5000 on a 700 W H200 and 0 W (below idle) ran, and so did a node GPU idle of 900 W or 1e6 W.
TEST_CASE("lifecycle GPU powers within the node's idle and the GPU's board limit: step, warm-up and node idle", "[lifecycle][errors]") {
  auto with = [&](const char* key, double value, double host_step_s = 0) {
    Json ph = train(1e-5, 4);  // gpu_step_s 0.05
    ph.erase("gpu_step_w");
    ph[key] = value;
    if (host_step_s > 0) ph["host_step_s"] = host_step_s;
    return parse_lifecycle(job(Json::array({ph})), "t.json", kDir);
  };
  CHECK_THROWS_WITH(with("gpu_step_w", 5000), Catch::Equals("t.json: lifecycle.phases[0].gpu_step_w: expected a step's GPU energy of at "
                                                            "most h200's board limit over the step (700 W x 0.05 s, the longer of "
                                                            "gpu_step_s and host_step_s = 35 J), got 250 J"));
  CHECK_THROWS_WITH(with("gpu_step_w", 0), Catch::Contains("lifecycle.phases[0].gpu_step_w: expected a busy GPU's mean power of at least "
                                                           "the node's GPU idle power (120 W"));
  CHECK_THROWS_WITH(with("gpu_step_w", 100), Catch::Contains("got 100 W"));
  CHECK_THROWS_WITH(with("gpu_step_j", 50), Catch::Contains("lifecycle.phases[0].gpu_step_j: expected a step's GPU energy of at most"));
  CHECK_THROWS_WITH(with("gpu_step_j", 1), Catch::Contains("got 20 W (gpu_step_j / gpu_step_s)"));
  CHECK_NOTHROW(with("gpu_step_w", 700));
  // energy per busy second beyond the limit, within it over a step the host makes longer (a replayed step's power
  // counts the idle between its kernels: the shipped LLM validation steps are 738.2 W over their busy time)
  CHECK_NOTHROW(with("gpu_step_w", 738.2, 0.06));
  Json warm = job(Json::array({train(1e-5, 4)}));
  warm["lifecycle"]["first_occurrence"] = {{"train", {{"s", 1}, {"gpu_w", 800}}}};
  CHECK_THROWS_WITH(parse_lifecycle(warm, "t.json", kDir),
                    Catch::Equals("t.json: lifecycle.first_occurrence.train.gpu_w: expected a GPU power from the node's GPU idle power "
                                  "(120 W) to h200's board limit (700 W), got 800 W"));
  const dvfs::testing::ScratchDir dir("lifecycle-idle");
  Json node = read_json_file(kDir + "/node.json");
  node["gpu_idle_w"] = 900;
  std::ofstream(dir / "node.json") << node.dump();
  CHECK_THROWS_WITH(parse_lifecycle(job(Json::array({train(1e-5, 4)})), "t.json", dir.path()),
                    Catch::Equals(dir / "node.json" + ": gpu_idle_w: expected an idle power below the board limit of the scenario's "
                                                      "GPU (h200: 700 W, t.json lifecycle.gpu), got 900 W"));
}

// Accepted and ignored: a local disk's link_bps and link_latency_s (its link_j_per_byte was charged), a writeback CPU
// price on a disk without write-behind, sync_bytes / sync_files of a copy to such a disk, and policies that change
// nothing.
TEST_CASE("lifecycle keys that would change nothing are refused, naming them", "[lifecycle][errors]") {
  const dvfs::testing::ScratchDir dir("lifecycle-unused");
  const Json base = read_json_file(kDir + "/node.json");  // local: a disk, no write-behind; shared: remote
  const Json ck = {{"name", "ck"}, {"kind", "checkpoint"}, {"bytes", 1e9}, {"to", "local"}};
  auto node_with = [&](const char* key, const Json& value) {
    Json node = base;
    node["storage"][0][key] = value;
    std::ofstream(dir / "node.json") << node.dump();
    return parse_lifecycle(job(Json::array({ck})), "t.json", dir.path());
  };
  for (const char* key : {"link_bps", "link_latency_s", "link_j_per_byte"})
    CHECK_THROWS_WITH(node_with(key, 1e-3), Catch::Equals(dir / "node.json" + ": storage[0]." + key +
                                                          ": expected only on a remote storage (\"remote\": true): a disk of the node has no link"));
  CHECK_THROWS_WITH(node_with("writeback_core_s_per_file", 1e-5),
                    Catch::Contains("storage[0].writeback_core_s_per_file: expected only with write_behind"));
  for (const char* key : {"sync_bytes", "sync_files"}) {
    Json c = ck;
    c[key] = 1000;
    CHECK_THROWS_WITH(parse_lifecycle(job(Json::array({c})), "t.json", kDir),
                      Catch::Equals(std::string("t.json: lifecycle.phases[0].") + key + ": expected only for a copy to a write_behind disk "
                                    "(storage \"local\" writes as the copy goes: its sync has no other dirty data to write)"));
  }
  const Json stage = {{"name", "stage"}, {"kind", "staging"}, {"bytes", 1e9}, {"from", "shared"}, {"to", "local"}};
  auto policy = [&](const Json& phases, const Json& pol) { return parse_lifecycle(job(phases, Json::array({pol})), "t.json", kDir); };
  CHECK_THROWS_WITH(policy(Json::array({stage, train(0.01, 4)}), {{"name", "nothing"}}),
                    Catch::Equals("t.json: lifecycle.policies[0]: expected a policy that changes something: gpu_sm_mhz_input_bound, "
                                  "cpu_pstate > 0, staging: \"skip\" or dataset_on"));
  CHECK_THROWS_WITH(policy(Json::array({stage}), {{"name", "p0"}, {"cpu_pstate", 0}}), Catch::Contains("lifecycle.policies[0]: expected a policy that changes"));
  CHECK_THROWS_WITH(policy(Json::array({train(0.01, 4)}), {{"name", "s"}, {"staging", "skip"}}),
                    Catch::Equals("t.json: lifecycle.policies[0].staging: expected a staging phase to skip (the job has none)"));
  CHECK_THROWS_WITH(policy(Json::array({train(0.01, 4)}), {{"name", "d"}, {"dataset_on", "shared"}}),
                    Catch::Equals("t.json: lifecycle.policies[0].dataset_on: expected a staging phase whose source it sets (the job has none)"));
  CHECK_THROWS_WITH(policy(Json::array({stage}), {{"name", "d"}, {"dataset_on", "shared"}}),
                    Catch::Contains("lifecycle.policies[0].dataset_on: expected a storage other than the staging phases' source (\"shared\" already is"));
  CHECK_THROWS_WITH(policy(Json::array({stage}), {{"name", "g"}, {"gpu_sm_mhz_input_bound", 990}}),
                    Catch::Contains("lifecycle.policies[0].gpu_sm_mhz_input_bound: expected a train or validation phase"));
  CHECK_NOTHROW(policy(Json::array({stage, train(0.01, 4)}), {{"name", "d"}, {"dataset_on", "local"}, {"staging", "skip"}}));
}
