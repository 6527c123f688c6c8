#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/recording.hpp"
#include "traces/src/synthesis.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

const Recording& recording() {
  static const Recording rec = load_recording(data_dir() + "/traces/recordings/h200-gpt3xl", Classifier::load_default());
  return rec;
}

LayerTemplate layer() { return extract_layer_template(recording().workload, recording().run["run"], "rec"); }

double total(const std::vector<Kernel>& ks) {
  double t = 0;
  for (const Kernel& k : ks) t += k.duration_s;
  return t;
}

}  // namespace

TEST_CASE("one recorded GPT-3 XL layer: its forward by annotation, its backward by the repeat period", "[synthesis]") {
  const LayerTemplate t = layer();
  CHECK(t.reference.layers == 24);
  CHECK(t.reference.hidden == 2048);
  CHECK(t.forward.size() > 10);
  CHECK(t.backward.size() > t.forward.size());
  // 24 layers' forwards and backwards make up most of a recorded step (the rest: embedding, LM head,
  // loss, optimizer, host gaps).
  const double step = (recording().steps[1].t1_ns - recording().steps[1].t0_ns) * 1e-9;
  const double layers = 24 * (total(t.forward) + total(t.backward));
  CHECK(layers < step);
  CHECK(layers > 0.6 * step);
}

TEST_CASE("synthesising the recorded shape itself keeps every kernel's time", "[synthesis]") {
  const LayerTemplate t = layer();
  TransformerSpec same = t.reference;
  same.global_batch = same.micro_batch;
  const SynthesizedPipeline p = synthesize_pipeline(t, same, ParallelLayout{}, {}, "s");
  REQUIRE(p.stages.size() == 1);
  CHECK(p.microbatches == 1);
  const auto& ks = p.stages[0].kernels;
  // Layers, embedding, head and optimizer: the recorded step's kernels, each once, at their recorded time.
  const std::size_t expected = 24 * (t.forward.size() + t.backward.size()) + t.embed_forward.size() +
                               t.embed_backward.size() + t.head_forward.size() + t.head_backward.size() + t.optimizer.size();
  CHECK(ks.size() == expected);
  const double step_busy = [&] {
    double b = 0;
    const Step& st = recording().workload.ranks[0].steps[1];
    for (int i = st.first_kernel; i <= st.last_kernel; ++i) {
      const Kernel& k = recording().workload.ranks[0].kernels[static_cast<std::size_t>(i)];
      if (k.kind == ActivityKind::kernel) b += k.duration_s;
    }
    return b;
  }();
  // The synthetic step is the recorded one up to the layers being copies of the middle layer and the
  // optimizer being scaled by parameters (1.42 B counted by the recorder, ~1.3 B in linear layers + embedding).
  CHECK(total(ks) == Approx(step_busy).epsilon(0.08));
}

TEST_CASE("tensor parallelism splits the work and adds two all-reduces per layer and pass", "[synthesis]") {
  const LayerTemplate t = layer();
  TransformerSpec s = t.reference;
  s.global_batch = s.micro_batch;
  const SynthesizedPipeline one = synthesize_pipeline(t, s, ParallelLayout{1, 1, 1}, {}, "s");
  const SynthesizedPipeline two = synthesize_pipeline(t, s, ParallelLayout{2, 1, 1}, {}, "s");
  std::size_t comms = 0;
  double gemm1 = 0, gemm2 = 0;
  for (const Kernel& k : two.stages[0].kernels) {
    comms += k.cls == KernelClass::communication;
    if (k.cls == KernelClass::gemm) gemm2 += k.duration_s;
  }
  for (const Kernel& k : one.stages[0].kernels)
    if (k.cls == KernelClass::gemm) gemm1 += k.duration_s;
  CHECK(comms == 24u * 4u);
  CHECK(gemm2 == Approx(gemm1 / 2).epsilon(1e-3));
}

TEST_CASE("layouts that do not fit the model are errors naming the field", "[synthesis]") {
  const LayerTemplate t = layer();
  TransformerSpec m = transformer_preset("llama-3.3-70b");
  CHECK_THROWS_WITH(synthesize_pipeline(t, m, ParallelLayout{8, 7, 16}, {}, "m"), Catch::Contains("m: pp: 80 layers do not split into 7"));
  CHECK_THROWS_WITH(synthesize_pipeline(t, m, ParallelLayout{3, 8, 16}, {}, "m"), Catch::Contains("m: tp: TP 3 does not divide"));
  CHECK_THROWS_WITH(synthesize_pipeline(t, m, ParallelLayout{8, 8, 3}, {}, "m"), Catch::Contains("m: global_batch"));
  CHECK_THROWS_WITH(transformer_preset("llama-9"), Catch::Contains("unknown model \"llama-9\""));
}

TEST_CASE("gradient buckets close at layer ends and hold every parameter of the stage once", "[synthesis]") {
  const LayerTemplate t = layer();
  TransformerSpec m = transformer_preset("llama-3.2-3b");
  SynthesisOptions o;
  o.bucket_params = 2e8;  // a llama-3.2-3b layer holds ~0.1 B linear-layer parameters: two layers a bucket
  const SynthesizedPipeline p = synthesize_pipeline(t, m, ParallelLayout{2, 2, 4}, o, "m");
  REQUIRE(p.buckets.size() == 2);
  double grad = 0;
  for (std::size_t v = 0; v < 2; ++v) {
    const auto& bs = p.buckets[v];
    REQUIRE(!bs.empty());
    CHECK(bs.back().end == p.backward[v].second);
    for (std::size_t i = 0; i < bs.size(); ++i) {
      CHECK(bs[i].end > p.backward[v].first);
      if (i) CHECK(bs[i].end > bs[i - 1].end);
      CHECK(bs[i].param_bytes == Approx(bs[i].bytes / 2));  // bf16 parameters, fp32 gradients
      grad += bs[i].bytes;
    }
  }
  // Linear layers (FLOPs per token / 2 each) plus the embedding and the LM head, fp32, split over TP 2.
  const double d = m.hidden, kv = static_cast<double>(m.kv_heads) / m.heads;
  const double layer_params = d * (d + 2 * d * kv) + d * d + 3 * d * m.ffn;
  CHECK(grad == Approx((m.layers * layer_params + 2.0 * m.vocab * m.hidden) * 4 / 2).epsilon(1e-9));
}

TEST_CASE("interleaving splits each stage into model chunks with the embedding first and the head last", "[synthesis]") {
  const LayerTemplate t = layer();
  TransformerSpec m = transformer_preset("llama-3.2-3b");
  const SynthesizedPipeline one = synthesize_pipeline(t, m, ParallelLayout{1, 2, 1, 1, 1}, {}, "m");
  const SynthesizedPipeline two = synthesize_pipeline(t, m, ParallelLayout{1, 2, 1, 1, 2}, {}, "m");
  CHECK(two.chunks == 2);
  REQUIRE(two.forward.size() == 4);
  // The same kernels per stage, in two chunks: virtual stage 0 (stage 0, chunk 0) starts with the embedding.
  CHECK(two.stages[0].kernels.size() == one.stages[0].kernels.size() - t.embed_forward.size() - t.embed_backward.size() +
                                            t.embed_forward.size() + t.embed_backward.size());
  CHECK(two.forward[0].second - two.forward[0].first == t.embed_forward.size() + 7 * t.forward.size());
  CHECK(two.forward[3].second - two.forward[3].first == 7 * t.forward.size() + t.head_forward.size());
  CHECK_THROWS_WITH(synthesize_pipeline(t, m, ParallelLayout{1, 2, 1, 1, 3}, {}, "m"),
                    Catch::Contains("m: vpp: 28 layers do not split into 2 stages x 3 model chunks"));
}

TEST_CASE("context parallelism splits the tokens and gathers keys and values for attention", "[synthesis]") {
  const LayerTemplate t = layer();
  TransformerSpec m = transformer_preset("llama-3.2-3b");
  const SynthesizedPipeline one = synthesize_pipeline(t, m, ParallelLayout{1, 1, 1, 1}, {}, "m");
  const SynthesizedPipeline two = synthesize_pipeline(t, m, ParallelLayout{1, 1, 1, 2}, {}, "m");
  double gemm1 = 0, gemm2 = 0;
  int gathers = 0, scatters = 0;
  for (const Kernel& k : one.stages[0].kernels)
    if (k.cls == KernelClass::gemm) gemm1 += k.duration_s;
  for (const Kernel& k : two.stages[0].kernels) {
    if (k.cls == KernelClass::gemm) gemm2 += k.duration_s;
    if (k.collective) {
      const CollectiveCall& c = two.collectives[k.collective - 1];
      CHECK(c.group == -2);
      gathers += c.kind == CollectiveKind::all_gather;
      scatters += c.kind == CollectiveKind::reduce_scatter;
    }
  }
  CHECK(gemm2 < 0.6 * gemm1);  // half the tokens per GPU (the LM head scales alike)
  CHECK(gathers == 2 * 28);    // forward, and again in the backward
  CHECK(scatters == 28);
  CHECK(two.activation_bytes == Approx(one.activation_bytes / 2));
  CHECK_THROWS_WITH(synthesize_pipeline(t, transformer_preset("gpt3-xl"), ParallelLayout{1, 1, 1, 3}, {}, "g"),
                    Catch::Contains("g: cp: CP 3 does not split the sequence of 2048 tokens"));
}
