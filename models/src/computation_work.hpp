#pragma once
// What a transformer pipeline stage's forward or backward computation does on one GPU (one
// tensor-parallel shard), counted from the workload alone: floating-point operations and DRAM
// bytes. Pure functions, no measurement; the counts and their assumptions are in models/README.md
// ("Retargeting by FLOPs and bytes"). Used to retarget a computation measured on one GPU to
// another (models/src/stage_model.hpp, retarget_computation_by_work).
#include <string>

namespace dvfs {

struct TransformerStage {
  double hidden = 0, heads = 0, seq = 0, micro_batch = 1, tp = 1, vocab = 0;
  double layers = 0;       // transformer blocks in the stage
  bool lm_head = false;    // final norm + LM head + loss on this stage
  bool recompute = false;  // activation checkpointing: the backward re-runs the forward first
  // wgrad adds into fp32 gradient buffers (read + write 8 B per parameter) instead of writing bf16
  // gradients (2 B): mixed-precision training's usual main_grad accumulation.
  bool fp32_grad_accumulation = false;
};

struct ComputationWork {
  double flops = 0;  // tensor-core FLOPs (GEMMs and attention matmuls)
  double bytes = 0;  // DRAM bytes (weights, activations, gradients; bf16 unless said)
};

ComputationWork forward_work(const TransformerStage& s);
// dgrad + wgrad (2x the forward's matmul FLOPs; activations read and written twice, weights read
// and their gradients written or accumulated), plus the forward again when the stage recomputes.
ComputationWork backward_work(const TransformerStage& s);
// "forward" or "backward"; anything else throws std::invalid_argument.
ComputationWork computation_work(const TransformerStage& s, const std::string& instruction);

}  // namespace dvfs
