#include "models/src/computation_work.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

TransformerStage stage(double layers, double tp = 8) {
  TransformerStage s;
  s.hidden = 4096;
  s.heads = 32;
  s.seq = 1024;
  s.micro_batch = 1;
  s.tp = tp;
  s.vocab = 50257;
  s.layers = layers;
  return s;
}

}  // namespace

TEST_CASE("a stage's work grows with its blocks: twice the blocks, twice the FLOPs and bytes", "[models][work]") {
  const ComputationWork one = forward_work(stage(6)), two = forward_work(stage(12));
  CHECK(two.flops == Approx(2 * one.flops));
  CHECK(two.bytes == Approx(2 * one.bytes));
  CHECK(forward_work(stage(0)).flops == 0);
}

TEST_CASE("a block's matmul FLOPs are 24 t h^2 + 4 t s h, split over the tensor-parallel shards", "[models][work]") {
  const TransformerStage s = stage(1, 1);
  const double t = s.seq * s.micro_batch;
  CHECK(forward_work(s).flops == Approx(24 * t * s.hidden * s.hidden + 4 * t * s.seq * s.hidden));
  CHECK(forward_work(stage(1, 8)).flops == Approx(forward_work(s).flops / 8));
  // The layer norms, dropouts and residual adds run on every shard: bytes do not fall by 8.
  CHECK(forward_work(stage(1, 8)).bytes > forward_work(s).bytes / 8);
}

TEST_CASE("backward does dgrad and wgrad: twice the forward; recomputation adds one forward", "[models][work]") {
  TransformerStage s = stage(12);
  const ComputationWork f = forward_work(s), b = backward_work(s);
  CHECK(b.flops == Approx(2 * f.flops));
  CHECK(b.bytes == Approx(2 * f.bytes));
  s.recompute = true;
  const ComputationWork r = backward_work(s);
  CHECK(r.flops == Approx(3 * f.flops));
  CHECK(r.bytes == Approx(3 * f.bytes));
  CHECK(computation_work(s, "backward").flops == r.flops);
}

TEST_CASE("an LM head adds its matmul and at least its weights and the fp32 loss pass over the logits", "[models][work]") {
  TransformerStage s = stage(12);
  const ComputationWork blocks = forward_work(s);
  s.lm_head = true;
  const ComputationWork with_head = forward_work(s);
  const double head_flops = with_head.flops - blocks.flops, head_bytes = with_head.bytes - blocks.bytes;
  CHECK(head_flops == Approx(2 * s.seq * s.hidden * s.vocab / s.tp));
  const double t = s.seq * s.micro_batch, v = s.vocab / s.tp;
  CHECK(head_bytes >= 2 * s.hidden * v + 8 * t * v);
  CHECK(backward_work(s).flops == Approx(2 * with_head.flops));
}

TEST_CASE("work of a malformed stage or an unknown computation is refused", "[models][work]") {
  TransformerStage s = stage(12);
  CHECK_THROWS_AS(computation_work(s, "optimizer"), std::invalid_argument);
  s.lm_head = true;
  s.vocab = 0;
  CHECK_THROWS_AS(forward_work(s), std::invalid_argument);
  s = stage(12);
  s.tp = 0;
  CHECK_THROWS_AS(backward_work(s), std::invalid_argument);
}

TEST_CASE("fp32 gradient accumulation adds 6 bytes per parameter to the backward only", "[models][work]") {
  TransformerStage s = stage(12);
  const ComputationWork f = forward_work(s), b = backward_work(s);
  s.fp32_grad_accumulation = true;
  const double params = 12 * s.hidden * s.hidden / s.tp * s.layers;
  CHECK(backward_work(s).bytes == Approx(b.bytes + 6 * params));
  CHECK(backward_work(s).flops == Approx(b.flops));
  CHECK(forward_work(s).bytes == Approx(f.bytes));
}
