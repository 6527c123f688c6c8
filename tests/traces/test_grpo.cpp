#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/engine.hpp"
#include "sim/policies/policy.hpp"
#include "traces/src/grpo.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/recording.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

const GpuModel& h200() {
  static const GpuModel m = load_gpu_model("h200");
  return m;
}

const DecodeProfile& profile() {
  static const DecodeProfile p = load_decode_profile(default_decode_recordings(), h200());
  return p;
}

double busy_at_top(const std::vector<Kernel>& ks, const GpuModel& m) {
  double t = 0;
  const int s = static_cast<int>(m.sm_clocks_mhz().size()) - 1, mm = static_cast<int>(m.mem_clocks_mhz().size()) - 1;
  for (const Kernel& k : ks) t += m.kernel_time_s(k, s, mm);
  return t;
}

// Time and energy of a kernel list replayed alone at fixed clocks.
std::pair<double, double> replay_fixed(const std::vector<Kernel>& ks, ClockPair c) {
  Workload wl;
  wl.names = grpo_activity_names();
  Rank r;
  r.kernels = ks;
  wl.ranks.push_back(r);
  StaticPolicy p(c);
  ReplayOptions o;
  o.timeline_interval_s = 0;
  auto out = run_engine(wl, h200(), [&](int) { return std::make_unique<StaticPolicy>(c); }, o, EngineMode::local_loop);
  return {out[0].stats.end_s, out[0].meter.total_j()};
}

}  // namespace

TEST_CASE("the decode model at a recorded batch and context gives that recording's busy time per step", "[grpo]") {
  const DecodeProfile& p = profile();
  REQUIRE(p.batches == std::vector<double>{16, 64, 256});
  CHECK(p.reference.layers == 28);
  CHECK(p.attention_fit_rms < 0.05);
  const DecodeStepModel m(p, grpo_model_preset("qwen2.5-7b"), 1, 0, 0);
  const Classifier cls = Classifier::load_default();
  for (std::size_t i = 0; i < p.sources.size(); ++i) {
    const Recording rec = load_recording(p.sources[i], cls);
    const Rank& r = rec.workload.ranks[0];
    double busy = 0;
    for (const Kernel& k : r.kernels) busy += h200().kernel_time_s(k, static_cast<int>(h200().sm_clocks_mhz().size()) - 1, 1);
    busy /= static_cast<double>(r.steps.size());
    const int b = static_cast<int>(p.batches[i]);
    CHECK(m.busy_s(b, b * p.reference_context) == Approx(busy).epsilon(0.02));
  }
}

TEST_CASE("decode attention grows with the cached context, the rest with the batch and sublinearly", "[grpo]") {
  const DecodeStepModel m(profile(), grpo_model_preset("qwen2.5-7b"), 1, 0, 0.002);
  const double t64 = m.busy_s(64, 64 * 500.0), t64_long = m.busy_s(64, 64 * 1500.0);
  CHECK(t64_long - t64 == Approx(profile().attention_per_token_s * 28 * 64 * 1000).epsilon(1e-9));
  CHECK(m.busy_s(128, 128 * 500.0) < 2 * t64);  // weights are read once per step: decode is memory-bound
  CHECK(m.busy_s(8, 8 * 500.0) == Approx(m.busy_s(16, 8 * 500.0)).epsilon(0.01));  // held below the smallest batch
  std::vector<Kernel> ks;
  m.step(32, 32 * 700.0, 1980, 3201, ks);
  CHECK(ks.size() <= 9);
  CHECK(ks.front().gap_before_s == 0.002);  // the engine's host time per step
  std::set<KernelClass> classes;
  for (const Kernel& k : ks) classes.insert(k.cls);
  CHECK(classes.size() == ks.size());  // one activity per class
  CHECK(busy_at_top(ks, h200()) == Approx(m.busy_s(32, 32 * 700.0)).epsilon(1e-6));
}

TEST_CASE("a 72B decode step on TP 8 reads an eighth of the weights per GPU and adds its all-reduces", "[grpo]") {
  const TransformerSpec q72 = grpo_model_preset("qwen2.5-72b");
  const DecodeStepModel tp8(profile(), q72, 8, 15e-6, 0), tp8_free(profile(), q72, 8, 0, 0);
  CHECK(tp8.busy_s(32, 32 * 800.0) - tp8_free.busy_s(32, 32 * 800.0) == Approx(2 * 80 * 15e-6));
  CHECK(tp8.weight_bytes() == Approx(2.0 * 72.7e9 / 8).epsilon(0.03));
  CHECK(tp8.kv_bytes_per_token() == Approx(80 * 2 * 128 * 2.0));  // 1 KV head per GPU, K and V, bf16
  CHECK_THROWS_AS(grpo_model_preset("qwen9-1t", "s.json", "control.jobs[0].model"), InputError);
}

TEST_CASE("coalescing kernels by class keeps time and energy at constant clocks", "[grpo]") {
  std::vector<Kernel> ks;
  const KernelClass seq[] = {KernelClass::gemm, KernelClass::elementwise, KernelClass::gemm, KernelClass::attention,
                             KernelClass::normalization, KernelClass::gemm, KernelClass::elementwise};
  for (int i = 0; i < 70; ++i) {
    Kernel k;
    k.cls = seq[i % 7];
    k.duration_s = 20e-6 * (1 + i % 5);
    k.gap_before_s = 3e-6;
    k.sm_fill = 0.2f + 0.1f * static_cast<float>(i % 8);
    k.recorded_sm_mhz = 1650;
    k.recorded_mem_mhz = 3201;
    k.name_id = 0;
    ks.push_back(k);
  }
  const std::vector<Kernel> c = coalesce_by_class(ks, h200(), 0.0005, "train");
  CHECK(c.size() < ks.size() / 2);
  for (ClockPair clk : {ClockPair{1980, 3201}, ClockPair{1200, 3201}, ClockPair{900, 2201}}) {
    const auto a = replay_fixed(ks, clk), b = replay_fixed(c, clk);
    CHECK(b.first == Approx(a.first).epsilon(1e-9));
    // SM fill is a float; each kernel's ramp t / (t + ramp_s) is folded into the merged fill at the top clocks, so below
    // them (kernels stretched, ramps nearer 1) the merged energy is close, not exact (unsized_prior_ramp)
    const bool top = clk.sm_mhz == 1980;
    CHECK(b.second == Approx(a.second).epsilon(top ? 1e-6 : 0.01));
  }
}

TEST_CASE("response lengths are seeded, clipped and long-tailed", "[grpo]") {
  std::mt19937_64 a(7), b(7);
  const auto x = draw_response_lengths(2000, 300, 0.7, 1024, a), y = draw_response_lengths(2000, 300, 0.7, 1024, b);
  CHECK(x == y);
  int at_max = 0;
  for (int v : x) {
    CHECK(v >= 1);
    CHECK(v <= 1024);
    at_max += v == 1024;
  }
  CHECK(at_max > 0);  // the tail reaches the limit
  std::vector<int> s = x;
  std::sort(s.begin(), s.end());
  CHECK(s[1000] == Approx(300).epsilon(0.08));
}

TEST_CASE("a job whose KV cache does not fit is refused naming the field", "[grpo]") {
  GrpoJobSpec j;
  j.concurrency_max = 4096;
  j.concurrency = 64;
  try {
    prepare_grpo_job(j, h200(), "s.json", "control.jobs[0]");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.field() == "control.jobs[0].concurrency_max");
    CHECK(e.file() == "s.json");
  }
  j.concurrency_max = 64;
  j.concurrency = 65;
  CHECK_THROWS_AS(prepare_grpo_job(j, h200(), "s.json", "control.jobs[0]"), InputError);
}

TEST_CASE("training programs of a GRPO step come from the synthesis and scale with the model", "[grpo]") {
  GrpoJobSpec small;
  small.dp = 8;
  const PreparedGrpoJob a = prepare_grpo_job(small, h200(), "s", "j");
  GrpoJobSpec big = small;
  big.model = "qwen2.5-14b";
  const PreparedGrpoJob b = prepare_grpo_job(big, h200(), "s", "j");
  const double fa = busy_at_top(a.training.forward, h200()), fb = busy_at_top(b.training.forward, h200());
  CHECK(busy_at_top(a.training.backward, h200()) > 1.5 * fa);  // a backward costs about twice its forward
  CHECK(fb / fa == Approx(14.8 / 7.6).epsilon(0.25));            // about the parameter ratio
  CHECK(a.training.gradient_bytes == Approx(4.0 * 7.6e9).epsilon(0.05));  // fp32 gradients of every parameter
  CHECK(busy_at_top(a.training.prefill_one, h200()) < fa);        // one 512-token prompt vs 4 x 1536 tokens
}

TEST_CASE("decode steps carry the recorded decode kernels' work, so the activity model prices them", "[grpo]") {
  const DecodeProfile& p = profile();
  const DecodeStepModel m(p, grpo_model_preset("qwen2.5-7b"), 1, 0, 0);
  const Classifier cls = Classifier::load_default();
  const Recording rec = load_recording(p.sources[1], cls);  // batch 64
  const Rank& r = rec.workload.ranks[0];
  const int top = static_cast<int>(h200().sm_clocks_mhz().size()) - 1, mem = static_cast<int>(h200().mem_clocks_mhz().size()) - 1;
  double rec_t = 0, rec_j = 0;
  for (const Kernel& k : r.kernels)
    if (k.step >= 0) {
      const double t = h200().kernel_time_s(k, top, mem);
      rec_t += t;
      rec_j += t * h200().kernel_power_w(k, top, mem);
    }
  std::vector<Kernel> step;
  m.step(64, 64 * p.reference_context, static_cast<float>(h200().max_sm_mhz()), static_cast<float>(h200().max_mem_mhz()), step);
  std::size_t priced = 0;
  double syn_t = 0, syn_j = 0;
  for (const Kernel& k : step) {
    priced += k.work == WorkSource::shapes;
    const double t = h200().kernel_time_s(k, top, mem);
    syn_t += t;
    syn_j += t * h200().kernel_power_w(k, top, mem);
  }
  CHECK(priced >= 3);  // gemm, attention, elementwise at least
  // the coalesced step draws the recorded steps' busy power at the top clocks (work rates averaged per class)
  const double steps = static_cast<double>(r.steps.size());
  CHECK(syn_j / syn_t == Approx(rec_j / rec_t).epsilon(0.1));
  CHECK(syn_t == Approx(rec_t / steps).epsilon(0.05));
}
