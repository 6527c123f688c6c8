#include "models/src/computation_work.hpp"

#include <stdexcept>

namespace dvfs {

namespace {

constexpr double kBf16 = 2.0;  // bytes per element

// One transformer block's forward on one shard: matmul FLOPs, and bytes split into weights and the
// rest (activations), so the backward can count them differently.
struct BlockCounts {
  double flops = 0, weight_bytes = 0, activation_bytes = 0;
};

BlockCounts block_forward(const TransformerStage& s) {
  const double t = s.micro_batch * s.seq, h = s.hidden, tp = s.tp;
  BlockCounts c;
  // QKV, projection, two MLP GEMMs: 24 t h^2 / tp; scores and context: 4 t s h / tp.
  c.flops = 24 * t * h * h / tp + 4 * t * s.seq * h / tp;
  c.weight_bytes = kBf16 * 12 * h * h / tp;
  // GEMM inputs and outputs (QKV in h, out 3h/tp; proj in h/tp, out h; fc1 in h, out 4h/tp;
  // fc2 in 4h/tp, out h), each element read or written once.
  const double gemm_io = t * h * (4 + 12 / tp);
  // Attention core: q, k, v read and the context written; the score matrix (heads/tp x s x s per
  // sequence) written by QK^T, read and written by scale+mask, softmax and dropout, read by PV
  // (8 bf16 passes) plus a 1-byte dropout mask.
  const double attn_io = 4 * t * h / tp;
  const double scores = s.heads / tp * s.micro_batch * s.seq * s.seq;
  // Replicated on every shard (no sequence parallelism): two layer norms (read + write), two
  // dropouts (read + write + 1-byte mask), two residual adds (two reads + one write).
  const double replicated = t * h * (2 * 2 + 2 * 2 + 2 * 3);
  const double gelu = 2 * 4 * t * h / tp;  // read + write of the 4h/tp MLP activation
  c.activation_bytes = kBf16 * (gemm_io + attn_io + replicated + gelu) + scores * (8 * kBf16 + 1);
  return c;
}

// Final layer norm, LM head (vocabulary split over the shards) and the loss: logits written in
// bf16, then read, and the fp32 softmax / cross-entropy reads and writes them once more.
BlockCounts head_forward(const TransformerStage& s) {
  const double t = s.micro_batch * s.seq, h = s.hidden, v = s.vocab / s.tp;
  BlockCounts c;
  c.flops = 2 * t * h * v;
  c.weight_bytes = kBf16 * h * v;
  c.activation_bytes = kBf16 * 2 * t * h + kBf16 * t * h + kBf16 * t * v * 2 + 4.0 * t * v * 2;
  return c;
}

BlockCounts stage_forward(const TransformerStage& s) {
  if (s.hidden <= 0 || s.heads <= 0 || s.seq <= 0 || s.micro_batch <= 0 || s.tp <= 0 || s.layers < 0)
    throw std::invalid_argument("transformer stage: hidden, heads, seq, micro_batch, tp must be > 0, layers >= 0");
  if (s.lm_head && s.vocab <= 0) throw std::invalid_argument("transformer stage: an LM head needs vocab > 0");
  const BlockCounts b = block_forward(s);
  BlockCounts c{b.flops * s.layers, b.weight_bytes * s.layers, b.activation_bytes * s.layers};
  if (s.lm_head) {
    const BlockCounts hd = head_forward(s);
    c.flops += hd.flops;
    c.weight_bytes += hd.weight_bytes;
    c.activation_bytes += hd.activation_bytes;
  }
  return c;
}

}  // namespace

ComputationWork forward_work(const TransformerStage& s) {
  const BlockCounts c = stage_forward(s);
  return {c.flops, c.weight_bytes + c.activation_bytes};
}

ComputationWork backward_work(const TransformerStage& s) {
  const BlockCounts c = stage_forward(s);
  // dgrad and wgrad: twice the matmul FLOPs; weights read once (dgrad) and gradients written once
  // (wgrad); every activation the forward touched is read back and its gradient written.
  const double grad_bytes = s.fp32_grad_accumulation ? 4 * c.weight_bytes : c.weight_bytes;  // 8 B or 2 B / param
  ComputationWork w{2 * c.flops, c.weight_bytes + grad_bytes + 2 * c.activation_bytes};
  if (s.recompute) {
    w.flops += c.flops;
    w.bytes += c.weight_bytes + c.activation_bytes;
  }
  return w;
}

ComputationWork computation_work(const TransformerStage& s, const std::string& instruction) {
  if (instruction == "forward") return forward_work(s);
  if (instruction == "backward") return backward_work(s);
  throw std::invalid_argument("computation \"" + instruction + "\": expected forward or backward");
}

}  // namespace dvfs
