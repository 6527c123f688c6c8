#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/simulation/simulation.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <functional>

using namespace dvfs;

namespace {

Kernel kernel(KernelClass c, double dur_s, float rec_sm, float rec_mem) {
  Kernel k;
  k.cls = c;
  k.duration_s = dur_s;
  k.recorded_sm_mhz = rec_sm;
  k.recorded_mem_mhz = rec_mem;
  return k;
}

bool covered(const Json& prov, const std::string& pointer) {
  for (auto it = prov.begin(); it != prov.end(); ++it) {
    const std::string& key = it.key();
    if (key.empty() || key[0] != '/') continue;
    if (pointer == key || pointer.rfind(key + "/", 0) == 0) return true;
  }
  return false;
}

void numeric_leaves(const Json& j, const std::string& ptr, std::vector<std::string>& out) {
  if (j.is_number()) out.push_back(ptr);
  else if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) numeric_leaves(it.value(), ptr + "/" + it.key(), out);
  else if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) numeric_leaves(j[i], ptr + "/" + std::to_string(i), out);
}

std::string temp_model(const std::function<void(Json&)>& edit) {
  Json j = read_json_file(models_dir() + "/h200.json");
  edit(j);
  std::string path = dvfs::testing::scratch_path("dvfs-test-model-" + std::to_string(reinterpret_cast<std::uintptr_t>(&j)) + ".json");
  std::ofstream(path) << j.dump();
  return path;
}

}  // namespace

TEST_CASE("every shipped GPU model loads and every number in it has a provenance entry", "[models]") {
  auto names = available_models();
  REQUIRE(names.size() >= 4);
  for (const auto& name : {"h200", "a100-sxm4", "a40", "rtx-3080-ti", "b200-like"})
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  for (const auto& name : names) {
    GpuModel m = load_gpu_model(name);
    CHECK(m.name() == name);
    Json doc = read_json_file(m.source_file());
    std::vector<std::string> leaves;
    for (auto it = doc.begin(); it != doc.end(); ++it)
      if (it.key() != "provenance") numeric_leaves(it.value(), "/" + it.key(), leaves);
    for (const auto& ptr : leaves) {
      INFO(name << " " << ptr);
      CHECK(covered(m.provenance(), ptr));
    }
    CHECK(m.provenance().contains("summary"));
    if (m.status() == "datasheet")
      CHECK(m.provenance()["summary"].get<std::string>().find("datasheet") != std::string::npos);
  }
}

TEST_CASE("H200 model: clock table and cap are the card's read-outs", "[models]") {
  GpuModel m = load_gpu_model("h200");
  CHECK(m.status() == "calibrated");
  CHECK(m.sm_clocks_mhz().size() == 110);
  CHECK(m.sm_clocks_mhz().front() == 345);
  CHECK(m.max_sm_mhz() == 1980);
  CHECK(m.mem_clocks_mhz() == std::vector<double>{2201, 3201});
  CHECK(m.power_cap_w() == 700);
  CHECK(m.sm_index(1502) == -1);  // not on the 15 MHz grid from 345 MHz
  CHECK(m.sm_index(1485) >= 0);
}

TEST_CASE("kernel time: recorded duration at the recorded clocks, compute-bound work scales with 1/f", "[models]") {
  GpuModel m = load_gpu_model("h200");
  const int top = m.sm_index(1980), mem = m.mem_index(3201), half = m.sm_index(990);
  Kernel g = kernel(KernelClass::gemm, 1e-3, 1980, 3201);
  CHECK(m.kernel_time_s(g, top, mem) == Catch::Detail::Approx(1e-3));
  const auto& cc = m.coefficients(KernelClass::gemm);
  CHECK(m.kernel_time_s(g, half, mem) == Catch::Detail::Approx(1e-3 * (cc.time_sm * 2 + 1 - cc.time_sm)));
  // Memory-bound work barely moves with the SM clock but does with the memory clock.
  Kernel e = kernel(KernelClass::elementwise, 1e-3, 1980, 3201);
  CHECK(m.kernel_time_s(e, half, mem) < m.kernel_time_s(g, half, mem));
  CHECK(m.kernel_time_s(e, top, m.mem_index(2201)) > 1e-3 * 1.2);
  // A kernel recorded at a throttled clock runs faster at the top clock.
  Kernel slow = kernel(KernelClass::gemm, 1e-3, 1485, 3201);
  CHECK(m.kernel_time_s(slow, top, mem) < 1e-3);
  // Unknown recorded clocks are taken as the model's default clocks.
  CHECK(m.kernel_time_s(kernel(KernelClass::gemm, 1e-3, 0, 0), top, mem) == Catch::Detail::Approx(1e-3));
}

TEST_CASE("kernel power: idle floor, rises with SM clock, scales with SM fill", "[models]") {
  GpuModel m = load_gpu_model("h200");
  const int mem = m.mem_index(3201);
  Kernel g = kernel(KernelClass::gemm, 1e-3, 1980, 3201);
  double prev = 0;
  for (std::size_t i = 0; i < m.sm_clocks_mhz().size(); ++i) {
    const double p = m.kernel_power_w(g, static_cast<int>(i), mem);
    CHECK(p > m.idle_power_w(static_cast<int>(i)));
    CHECK(p >= prev);
    prev = p;
  }
  // At the clock the bf16 GEMM micro-benchmark ran at under the cap, the model gives its measured
  // 691 W scaled by the training fit (dynamic_scale).
  Json doc = read_json_file(m.source_file());
  const double scale = doc["power"]["dynamic_scale"].get<double>();
  const double idle = doc["power"]["idle_w"].get<double>();
  const double gemm_w = doc["provenance"]["measured_inputs"]["gemm_bf16_8192"]["power_w"].get<double>();
  const double gemm_f = doc["provenance"]["measured_inputs"]["gemm_bf16_8192"]["mean_sm_mhz"].get<double>();
  // The measured mean clock lies between two table clocks: the target lies between their powers.
  const auto& clocks = m.sm_clocks_mhz();
  const int hi = static_cast<int>(std::lower_bound(clocks.begin(), clocks.end(), gemm_f) - clocks.begin());
  REQUIRE(hi > 0);
  const double target = idle + scale * (gemm_w - idle);
  CHECK(m.kernel_power_w(g, hi - 1, mem) <= target + 1e-6);
  CHECK(m.kernel_power_w(g, hi, mem) >= target - 1e-6);
  Kernel half = g;
  half.sm_fill = 0.5f;
  const int top = m.sm_index(1980);
  CHECK(m.kernel_power_w(half, top, mem) - m.idle_power_w(top) ==
        Catch::Detail::Approx(0.5 * (m.kernel_power_w(g, top, mem) - m.idle_power_w(top))));
}

TEST_CASE("model files with bad values are rejected naming the file and the field", "[models][errors]") {
  auto expect = [](const std::function<void(Json&)>& edit, const std::string& part) {
    std::string path = temp_model(edit);
    try {
      GpuModel::load(path);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(path) != std::string::npos);
      CHECK(std::string(e.what()).find(part) != std::string::npos);
    }
  };
  expect([](Json& j) { j["colour"] = "red"; }, "colour: unknown key");
  expect([](Json& j) { j["power"]["cap_w"] = -5; }, "power.cap_w");
  expect([](Json& j) { j["power"]["idle_w"] = "lots"; }, "power.idle_w: expected a number");
  expect([](Json& j) { j["classes"]["gemm"]["time_sm"] = 1.5; }, "classes.gemm.time_sm");
  expect([](Json& j) { j["classes"].erase("copy"); }, "classes.copy: missing");
  expect([](Json& j) { j["status"] = "guessed"; }, "status");
  expect([](Json& j) { j["clocks"]["default"]["sm_mhz"] = 1000; }, "clocks.default.sm_mhz");
  expect([](Json& j) { j["voltage_curve"]["points"] = Json::array({Json::array({1000, 1.0}), Json::array({500, 0.8})}); },
         "increasing");
}

// Each was accepted and ran: window_s 1e20 crashed (segmentation fault), a 1e-12 s governor period ran out of memory,
// a clock list [1e-9, 1980] hung, [1980, 1e300] gave 0 s kernels, a falling voltage curve 290 kW, a spread of 1e300 s
// a NaN switch latency, dynamic_w 1e308 inf energy.
TEST_CASE("model files with values beyond the model limits are refused naming the field and the limit", "[models][errors]") {
  auto expect = [](const std::function<void(Json&)>& edit, const std::string& part) {
    const std::string path = temp_model(edit);
    INFO(part);
    CHECK_THROWS_WITH(GpuModel::load(path), Catch::Contains(path) && Catch::Contains(part));
  };
  expect([](Json& j) { j["native_governor"]["window_s"] = 1e20; }, "native_governor.window_s: expected 0.0001 to 10 s");
  expect([](Json& j) { j["native_governor"]["control_period_s"] = 1e-12; }, "native_governor.control_period_s: expected 0.0001 to 1 s");
  expect([](Json& j) { j["native_governor"]["target_fraction"] = 7; }, "native_governor.target_fraction: expected a fraction");
  expect([](Json& j) { j["clocks"]["sm_mhz"] = Json::array({1e-9, 1980}); }, "clocks.sm_mhz: expected clocks from 1 to 20000 MHz (element 0)");
  expect([](Json& j) { j["clocks"]["sm_mhz"] = Json::array({1980, 1e300}); }, "clocks.sm_mhz: expected clocks from 1 to 20000 MHz (element 1)");
  expect([](Json& j) { j["clocks"]["mem_mhz"] = Json::array({1e6}); }, "clocks.mem_mhz: expected clocks from 1 to 20000 MHz");
  expect([](Json& j) { j["voltage_curve"]["points"] = Json::array({Json::array({345, 100}), Json::array({1980, 1})}); },
         "voltage_curve.points: expected [MHz, relative voltage] pairs");
  expect([](Json& j) { j["voltage_curve"]["points"] = Json::array({Json::array({345, 1.0}), Json::array({1980, 0.8})}); },
         "voltage_curve.points: expected a voltage that does not fall as the clock rises (element 1)");
  expect([](Json& j) { j["power"]["cap_w"] = 1e300; }, "power.cap_w: expected 0 to 10000 W");
  expect([](Json& j) { j["power"]["dynamic_scale"] = 1e300; }, "power.dynamic_scale: expected 0 to 100");
  expect([](Json& j) { j["classes"]["gemm"]["dynamic_w"] = 1e308; }, "classes.gemm.dynamic_w: expected 0 to 10000 W");
  expect([](Json& j) { j["activity"]["ramp_s"] = 1e300; }, "activity.ramp_s: expected 0 to 1 s");
  expect([](Json& j) { j["activity"]["tensor_pj_per_flop"]["bf16"] = 1e30; }, "activity.tensor_pj_per_flop.bf16: expected 0 to 10000 pJ");
  expect([](Json& j) { j["switch_latency"]["sm"]["spread_s"] = 1e300; }, "switch_latency.sm.spread_s: expected 0 to 10 s");
  expect([](Json& j) { j["switch_latency"]["sm"]["mean_s"] = 0.001; j["switch_latency"]["sm"]["spread_s"] = 10; }, "switch_latency.sm.spread_s: expected a spread of at most 1000 x mean_s");
  expect([](Json& j) { j["switch_latency"]["firmware_s"] = 1e300; }, "switch_latency.firmware_s: expected 0 to 10 s");
  expect([](Json& j) { j["switch_latency"]["sm"]["energy_j"] = 1e300; }, "switch_latency.sm.energy_j: expected 0 to 1000 J");
}

TEST_CASE("the native governor's up_steps_per_period must be a whole number of clock steps", "[models][errors][governor-steps]") {
  // 1.5 was truncated to 1 step (static_cast<int>) and ran without a word.
  for (const double bad : {1.5, 0.25}) {
    const std::string path = temp_model([bad](Json& j) { j["native_governor"]["up_steps_per_period"] = bad; });
    CHECK_THROWS_WITH(GpuModel::load(path), Catch::Contains(path + ": native_governor.up_steps_per_period: expected a whole number of clock steps (0 to 4096), got "));
  }
  const std::string whole = temp_model([](Json& j) { j["native_governor"]["up_steps_per_period"] = 3.0; });
  CHECK(GpuModel::load(whole).governor().up_steps_per_period == 3);
  const std::string zero = temp_model([](Json& j) { j["native_governor"]["up_steps_per_period"] = 0; });
  CHECK(GpuModel::load(zero).governor().up_steps_per_period == 0);
}

TEST_CASE("unknown GPU names list the models that exist", "[models][errors]") {
  try {
    load_gpu_model("h900", "scenario.json", "gpu");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("scenario.json: gpu: unknown GPU \"h900\"") == 0);
    CHECK(msg.find("h200") != std::string::npos);
  }
}

TEST_CASE("per-kernel time shares apply to kernels of that name once the model is bound to the trace", "[models]") {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["kernels"] = {{"my_gemm", {{"time_sm", 1.0}, {"time_mem", 0.0}}}};
  const GpuModel m = GpuModel::from_json(doc, "k.json");
  REQUIRE(m.kernel_overrides().size() == 1);
  Kernel k;
  k.cls = KernelClass::gemm;
  k.duration_s = 1e-3;
  k.recorded_sm_mhz = 1980;
  k.recorded_mem_mhz = 3201;
  k.name_id = 1;
  const int half = m.sm_index(990), mem = m.mem_index(3201);
  const ClassCoefficients& cc = m.coefficients(KernelClass::gemm);
  const double class_time = 1e-3 * (cc.time_sm * 2 + 1 - cc.time_sm);
  CHECK(m.kernel_time_s(k, half, mem) == Catch::Detail::Approx(class_time));  // unbound: the class
  const GpuModel bound = m.bound_to({"other", "my_gemm"});
  CHECK(bound.bound_kernel_names() == 1);
  CHECK(bound.kernel_time_s(k, half, mem) == Catch::Detail::Approx(2e-3));  // fully SM-bound: 2x at half clock
  k.name_id = 0;
  CHECK(bound.kernel_time_s(k, half, mem) == Catch::Detail::Approx(class_time));
  CHECK(bound.kernel_power_w(k, half, mem) == m.kernel_power_w(k, half, mem));  // power stays per class
}

TEST_CASE("a bad per-kernel entry names the kernel and the field", "[models]") {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["kernels"] = {{"k1", {{"time_sm", 0.8}, {"time_mem", 0.5}}}};
  try {
    GpuModel::from_json(doc, "k.json");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "k.json: kernels.k1.time_mem: expected time_sm + time_mem <= 1");
  }
  doc["kernels"] = {{"k1", {{"time_sm", 0.8}, {"sm_share", 0.5}}}};
  CHECK_THROWS_WITH(GpuModel::from_json(doc, "k.json"), Catch::Contains("kernels.k1.sm_share: unknown key"));
}

TEST_CASE("a simulation binds the model's per-kernel shares to the trace's kernel names", "[models][sim]") {
  const LoadedTrace trace = load_trace(data_dir() + "/tests/fixtures/kineto_current.json");
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  Scenario sc;
  sc.name = "bind";
  sc.gpu = "h200";
  sc.policy.name = "static";
  sc.policy.clocks = ClockPair{990, 3201};
  sc.replay.timeline_interval_s = 0;
  doc.erase("kernels");
  const double without = simulate(sc, trace, GpuModel::from_json(doc, "a.json")).summary["totals"]["time_s"].get<double>();
  // The GEMM of the fixture becomes fully SM-bound: at half the clock it takes twice as long.
  doc["kernels"] = {{"nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN", {{"time_sm", 1.0}, {"time_mem", 0.0}}}};
  const double with = simulate(sc, trace, GpuModel::from_json(doc, "b.json")).summary["totals"]["time_s"].get<double>();
  CHECK(with > without);
}

TEST_CASE("a named class prior prices a class-prior kernel of that class and name at its scale once bound", "[models][named_prior]") {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["class_prior_by_name"] = Json::array({{{"class", "gemm"}, {"name_contains", {"sgemm", "_ffma"}}, {"scale", 0.5}}});
  const GpuModel m = GpuModel::from_json(doc, "n.json");
  doc.erase("class_prior_by_name");
  const GpuModel plain = GpuModel::from_json(doc, "p.json");
  Kernel k = kernel(KernelClass::gemm, 1e-3, 1980, 3201);  // no counted work: the class prior prices it
  k.name_id = 1;
  const int f = m.sm_index(1980), mem = m.mem_index(3201);
  const double idle = m.idle_power_w(f), class_dyn = plain.kernel_power_w(k, f, mem) - idle;
  REQUIRE(class_dyn > 0);
  CHECK(m.kernel_power_w(k, f, mem) == Catch::Detail::Approx(plain.kernel_power_w(k, f, mem)));  // unbound: the class
  const GpuModel bound = m.bound_to({"nvjet_sm90_tst_128x256", "cutlass_80_simt_sgemm_256x128", "sm80_xmma_gemm_f32f32_ffma"});
  CHECK(bound.kernel_power_w(k, f, mem) - idle == Catch::Detail::Approx(0.5 * class_dyn));
  k.name_id = 2;
  CHECK(bound.kernel_power_w(k, f, mem) - idle == Catch::Detail::Approx(0.5 * class_dyn));
  k.name_id = 0;  // a tensor-core GEMM's name: the class prior
  CHECK(bound.kernel_power_w(k, f, mem) == Catch::Detail::Approx(plain.kernel_power_w(k, f, mem)));
  k.name_id = 1;
  k.cls = KernelClass::elementwise;  // the name matches, the class does not: the class prior
  CHECK(bound.kernel_power_w(k, f, mem) == Catch::Detail::Approx(plain.bound_to({"a", "b"}).kernel_power_w(k, f, mem)));
}

TEST_CASE("the shipped H200 model prices shapeless CUDA-core fp32 GEMMs below the tensor-core GEMM prior", "[models][named_prior]") {
  // split fp32_gemm_prior: their share of the gemm prior is derived from the fit-set fp32 GEMM loop's shaped price
  const GpuModel& h200 = load_gpu_model("h200");
  const Json doc = read_json_file(h200.source_file());
  const double scale = doc.at("class_prior_by_name").at(0).at("scale").get<double>();
  CHECK(scale > 0.3);
  CHECK(scale < 1.0);
  const GpuModel bound = h200.bound_to({"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32", "cutlass_80_simt_sgemm_256x128_8x4_nn_align1",
                                        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4"});
  Kernel k = kernel(KernelClass::gemm, 1e-3, 1980, 3201);
  const int f = bound.sm_index(1980), mem = bound.mem_index(3201);
  const double idle = bound.idle_power_w(f), tf32 = bound.kernel_power_w(k, f, mem) - idle;  // TF32: tensor cores, the gemm prior
  for (std::uint32_t id : {1u, 2u}) {
    k.name_id = id;
    CHECK(bound.kernel_power_w(k, f, mem) - idle == Catch::Detail::Approx(scale * tf32));
  }
}

TEST_CASE("a bad named class prior names the field and what was expected", "[models][named_prior]") {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  auto error_of = [&](const Json& entry) {
    doc["class_prior_by_name"] = Json::array({entry});
    try {
      GpuModel::from_json(doc, "n.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of({{"class", "gemmm"}, {"name_contains", {"x"}}, {"scale", 1}}),
             Catch::Contains("class_prior_by_name[0].class") && Catch::Contains("unknown kernel class"));
  CHECK_THAT(error_of({{"class", "gemm"}, {"name_contains", Json::array()}, {"scale", 1}}),
             Catch::Contains("name_contains") && Catch::Contains("non-empty array"));
  CHECK_THAT(error_of({{"class", "gemm"}, {"name_contains", {""}}, {"scale", 1}}), Catch::Contains("non-empty strings"));
  CHECK_THAT(error_of({{"class", "gemm"}, {"name_contains", {"x"}}, {"scale", -1}}), Catch::Contains("scale"));
  CHECK_THAT(error_of({{"class", "gemm"}, {"name_contains", {"x"}}, {"scale", 1}, {"scales", 2}}), Catch::Contains("unknown key"));
  doc["class_prior_by_name"] = {{"class", "gemm"}};
  CHECK_THROWS_WITH(GpuModel::from_json(doc, "n.json"), Catch::Contains("class_prior_by_name") && Catch::Contains("expected an array"));
}
