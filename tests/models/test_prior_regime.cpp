#include "models/src/model_registry.hpp"
#include "models/src/prior_regime.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;

namespace {

// A rank of `n` kernels of class `c` (no counted work: the class prior prices them), `dur_s` each at the top clocks,
// `gap_s` of idle before each.
Workload stream(KernelClass c, int n, double dur_s, double gap_s) {
  Workload wl;
  wl.names = {"k"};
  Rank r;
  for (int i = 0; i < n; ++i) {
    Kernel k;
    k.cls = c;
    k.duration_s = dur_s;
    k.gap_before_s = gap_s;
    k.recorded_sm_mhz = 1980;
    k.recorded_mem_mhz = 3201;
    r.kernels.push_back(k);
  }
  wl.ranks.push_back(r);
  return wl;
}

Json regime_doc(double scale) {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["class_prior_regime"] = {{"cap_fraction", 0.9}, {"below_cap_scales", {{"elementwise", scale}, {"reduction", scale}}}};
  return doc;
}

}  // namespace

TEST_CASE("the pre-pass puts back-to-back GEMMs at the cap and a host-bound stream below it", "[models][prior_regime]") {
  const GpuModel& h200 = load_gpu_model("h200");
  // GEMMs priced by the at-cap gemm prior draw more than the cap at the top clock, without gaps
  CHECK(at_cap_kernel_time_share(stream(KernelClass::gemm, 200, 1e-3, 0), h200.bound_to({"k"})) == Approx(1.0));
  // the same kernels with 9 ms of idle before each 1 ms: every window's mean sits near idle power
  CHECK(at_cap_kernel_time_share(stream(KernelClass::gemm, 200, 1e-3, 9e-3), h200.bound_to({"k"})) == Approx(0.0));
  // a rank shorter than one window is one window, judged over what it holds
  CHECK(at_cap_kernel_time_share(stream(KernelClass::gemm, 3, 1e-3, 0), h200.bound_to({"k"})) == Approx(1.0));
  // nothing to place
  CHECK(at_cap_kernel_time_share(Workload{}, h200) == 1.0);
  // ~30 years of idle and a GEMM as long: whole windows at one power are judged at once (one step per window would
  // not finish)
  Workload hour = stream(KernelClass::gemm, 1, 1e9, 1e9);
  CHECK(at_cap_kernel_time_share(hour, h200.bound_to({"k"})) == Approx(1.0));
  hour.ranks[0].kernels[0].cls = KernelClass::communication;  // the communication prior draws far below the cap
  CHECK(at_cap_kernel_time_share(hour, h200.bound_to({"k"})) == Approx(0.0));
}

TEST_CASE("the pre-pass counts kernel time by the window it falls in", "[models][prior_regime]") {
  const GpuModel m = load_gpu_model("h200").bound_to({"k"});
  const double window_s = m.governor().window_s;
  // one window of back-to-back GEMMs, then one window holding a single short GEMM and idle: the first window's kernel
  // time is at the cap, the second's is not
  Workload wl = stream(KernelClass::gemm, 100, window_s / 100, 0);
  Kernel lone = wl.ranks[0].kernels[0];
  lone.gap_before_s = 0;
  lone.duration_s = window_s / 100;
  wl.ranks[0].kernels.push_back(lone);
  Kernel idle_tail = lone;
  idle_tail.gap_before_s = window_s * 0.98;
  idle_tail.duration_s = 0;
  wl.ranks[0].kernels.push_back(idle_tail);
  CHECK(at_cap_kernel_time_share(wl, m) == Approx(100.0 / 101.0).margin(1e-6));
}

TEST_CASE("a model's class_prior_regime prices a below-cap workload's streaming priors at its scale and an at-cap one as before",
          "[models][prior_regime]") {
  const GpuModel with = GpuModel::from_json(regime_doc(0.5), "r.json");
  const GpuModel& plain = load_gpu_model("h200");
  REQUIRE(with.prior_regime().present);
  const Workload light = stream(KernelClass::elementwise, 100, 1e-3, 9e-3), heavy = stream(KernelClass::gemm, 100, 1e-3, 0);
  const GpuModel below = bound_to_workload(with, light), at = bound_to_workload(with, heavy);
  CHECK(below.below_cap_priors());
  CHECK_FALSE(at.below_cap_priors());
  const int f = plain.sm_index(1980), mem = plain.mem_index(3201);
  const double idle = plain.idle_power_w(f);
  Kernel k = light.ranks[0].kernels[0];
  const double dyn = plain.bound_to({"k"}).kernel_power_w(k, f, mem) - idle;
  REQUIRE(dyn > 0);
  CHECK(below.kernel_power_w(k, f, mem) - idle == Approx(0.5 * dyn));
  CHECK(at.kernel_power_w(k, f, mem) - idle == Approx(dyn));
  k.cls = KernelClass::gemm;  // not a class the key scales
  CHECK(below.kernel_power_w(k, f, mem) == Approx(plain.bound_to({"k"}).kernel_power_w(k, f, mem)));
  // a model without the key is bound as before: the regime changes nothing
  k.cls = KernelClass::elementwise;
  CHECK(bound_to_workload(plain, light).kernel_power_w(k, f, mem) == plain.bound_to({"k"}).kernel_power_w(k, f, mem));
}

TEST_CASE("launch-sized elementwise kernels are priced from their size only below the cap, where the key says so",
          "[models][prior_regime]") {
  Json doc = regime_doc(0.5);
  doc["class_prior_regime"]["price_launch_sized_elementwise"] = true;
  const GpuModel sized = GpuModel::from_json(doc, "r.json"), scaled_only = GpuModel::from_json(regime_doc(0.5), "r.json");
  const GpuModel& plain = load_gpu_model("h200");
  Workload light = stream(KernelClass::elementwise, 100, 1e-3, 9e-3), heavy = stream(KernelClass::gemm, 100, 1e-3, 0);
  Kernel k = light.ranks[0].kernels[0];
  k.work = WorkSource::launch_elementwise;  // 1 TB/s sized from its launch
  k.memory_tbps = 1.0f;
  k.alu_tops = 0.125f;
  for (Workload* wl : {&light, &heavy}) wl->ranks[0].kernels.push_back(k);
  const int f = plain.sm_index(1980), mem = plain.mem_index(3201);
  Kernel counted = k;
  counted.work = WorkSource::shapes;  // the same work counted from shapes: what the activity model makes of it
  const double activity_w = plain.bound_to({"k"}).kernel_power_w(counted, f, mem);
  const double prior_w = plain.bound_to({"k"}).kernel_power_w(k, f, mem);
  REQUIRE(activity_w != Approx(prior_w));
  // below the cap: the activity model; at the cap: the at-cap prior, exactly as a model without the key
  CHECK(bound_to_workload(sized, light).kernel_power_w(k, f, mem) == Approx(activity_w));
  CHECK(bound_to_workload(sized, heavy).kernel_power_w(k, f, mem) == prior_w);
  // without price_launch_sized_elementwise the kernel keeps its (scaled) prior below the cap
  const double idle = plain.idle_power_w(f);
  CHECK(bound_to_workload(scaled_only, light).kernel_power_w(k, f, mem) == Approx(idle + 0.5 * (prior_w - idle)));
  CHECK(bound_to_workload(plain, light).kernel_power_w(k, f, mem) == prior_w);
  // the pre-pass prices with the at-cap priors, so the key cannot move a workload's regime: launch-sized kernels whose
  // sized work, priced by the activity model, would put every window at the cap stay below it as their prior puts them
  Workload near = stream(KernelClass::elementwise, 400, 1e-3, 0.2e-3);
  for (Kernel& e : near.ranks[0].kernels) e.work = WorkSource::launch_elementwise, e.tensor_tflops = 900, e.memory_tbps = 4.0f,
                                               e.tensor_precision = TensorPrecision::bf16;
  Workload counted_near = near;
  for (Kernel& e : counted_near.ranks[0].kernels) e.work = WorkSource::shapes;
  REQUIRE(at_cap_kernel_time_share(counted_near, plain.bound_to({"k"})) == Approx(1.0));  // what pricing the size would give
  REQUIRE(at_cap_kernel_time_share(near, plain.bound_to({"k"})) == Approx(0.0));
  CHECK(bound_to_workload(sized, near).at_cap_share() == Approx(0.0));
  CHECK(bound_to_workload(sized, near).below_cap_priors());
  // a new binding forgets the regime
  CHECK(bound_to_workload(sized, light).bound_to({"k"}).kernel_power_w(k, f, mem) == prior_w);
}

TEST_CASE("a window closes where it fills, also when the fill sums one ulp short of its length", "[models][prior_regime]") {
  // 0.3 s windows. On each of 999 ranks: f s of idle (f = 0.1, 0.2, ... 99.9 ms: the first window stays mostly GEMM),
  // then one GEMM to 0.09 s past the end of the third window, then idle. The GEMM time in the first three windows is at the cap; its last 0.09 s shares a window
  // with 0.21 s of idle, below it. For some f (19 of them) the double sum f + (0.3 - f) lands one ulp under 0.3, which
  // once kept the first window open, so that the GEMM's last 0.09 s joined it and counted at the cap.
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  const double w = 0.3;
  doc["native_governor"]["window_s"] = w;
  const GpuModel m = GpuModel::from_json(doc, "w.json").bound_to({"k"});
  const int top_sm = static_cast<int>(m.sm_clocks_mhz().size()) - 1, top_mem = static_cast<int>(m.mem_clocks_mhz().size()) - 1;
  Workload wl = stream(KernelClass::gemm, 1, 1, 0);
  wl.ranks.clear();
  double at_cap_s = 0, kernel_s = 0;
  for (int i = 1; i < 1000; ++i) {
    const double f = i * 1e-4;
    Workload one = stream(KernelClass::gemm, 1, (w - f) + 2 * w + 0.3 * w, f);
    Kernel tail = one.ranks[0].kernels[0];
    tail.duration_s = 0;
    tail.gap_before_s = 2 * w;
    one.ranks[0].kernels.push_back(tail);
    const double d = m.kernel_time_s(one.ranks[0].kernels[0], top_sm, top_mem);
    kernel_s += d;
    at_cap_s += d - (f + d - 3 * w);  // all but the part in the fourth window
    wl.ranks.push_back(one.ranks[0]);
  }
  CHECK(at_cap_kernel_time_share(wl, m) == Approx(at_cap_s / kernel_s).epsilon(1e-7));
}

TEST_CASE("a workload takes the below-cap priors only when under half its kernel time is at the cap", "[models][prior_regime]") {
  const GpuModel with = GpuModel::from_json(regime_doc(0.5), "r.json");
  CHECK(with.in_prior_regime(0.5).regime_scale(KernelClass::elementwise) == 1.0);
  CHECK(with.in_prior_regime(0.4999).regime_scale(KernelClass::elementwise) == 0.5);
  CHECK(with.in_prior_regime(0.4999).regime_scale(KernelClass::gemm) == 1.0);
  CHECK(with.in_prior_regime(std::nan("")).regime_scale(KernelClass::elementwise) == 1.0);  // no share: the at-cap priors
  // a new binding starts from the at-cap priors
  CHECK(with.in_prior_regime(0.0).bound_to({"k"}).regime_scale(KernelClass::elementwise) == 1.0);
}

TEST_CASE("no shipped model carries class_prior_regime: neither form passed its keep test", "[models][prior_regime]") {
  for (const std::string& name : available_models()) CHECK_FALSE(load_gpu_model(name).prior_regime().present);
}

TEST_CASE("the class-prior regime line says which side of the cap a trace sits on", "[models][prior_regime]") {
  CHECK_THAT(class_prior_regime_line(0.99, false), Catch::Contains("99 %") && Catch::Contains("the regime the class priors were set in"));
  CHECK_THAT(class_prior_regime_line(0.1, false), Catch::Contains("only 10 %") && Catch::Contains("expect this energy too high"));
  CHECK_THAT(class_prior_regime_line(0.001, false), Catch::Contains("only under 1 %"));
  CHECK_THAT(class_prior_regime_line(0.1, true), Catch::Contains("priced with the model's below-cap scales"));
}

TEST_CASE("a bad class_prior_regime names the field and what was expected", "[models][prior_regime]") {
  auto error_of = [](const Json& regime) {
    Json doc = read_json_file(load_gpu_model("h200").source_file());
    doc["class_prior_regime"] = regime;
    try {
      GpuModel::from_json(doc, "r.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of({{"cap_fraction", 0.9}, {"below_cap_scales", {{"elementwize", 0.5}}}}),
             Catch::Contains("below_cap_scales") && Catch::Contains("unknown kernel class"));
  CHECK_THAT(error_of({{"cap_fraction", 1.5}, {"below_cap_scales", {{"elementwise", 0.5}}}}), Catch::Contains("cap_fraction"));
  CHECK_THAT(error_of({{"cap_fraction", 0.9}, {"below_cap_scales", {{"elementwise", -1}}}}), Catch::Contains("elementwise"));
  CHECK_THAT(error_of({{"cap_fraction", 0.9}, {"below_cap_scales", 0.5}}), Catch::Contains("below_cap_scales"));
  CHECK_THAT(error_of({{"cap_fraction", 0.9}, {"below_cap_scales", {{"elementwise", 0.5}}}, {"scale", 1}}), Catch::Contains("unknown key"));
  CHECK_THAT(error_of({{"cap_fraction", 0.9}, {"below_cap_scales", {{"elementwise", 0.5}}}, {"price_launch_sized_elementwise", 1}}),
             Catch::Contains("price_launch_sized_elementwise"));
  CHECK(error_of({{"cap_fraction", 0.9}, {"below_cap_scales", {{"elementwise", 0.5}}}}) == "no error");
}
