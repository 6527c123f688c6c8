#pragma once
// Workload synthesis (issue 5, first part): kernel streams of a transformer's pipeline stages, built
// from one layer of a recorded training trace and scaled to another model shape and parallel layout.
//
//  - Layer template: from a recording of a uniform transformer (the H200 GPT-3 XL trace), one layer's
//    forward kernels (those annotated `layer<k>.attn` / `layer<k>.mlp`, k the middle layer) and one
//    layer's backward kernels (the backward pass repeats per layer: its repeat period in kernel names is
//    detected and one period from the middle taken, since autograd's kernels carry no layer ranges).
//  - Scaling: each kernel's recorded duration times the ratio of its work in the target to the
//    reference, per tensor-parallel rank: GEMMs by linear-layer FLOPs per token (q, k, v with grouped
//    KV heads, output projection, MLP with 2 or 3 matrices), attention by tokens x sequence x hidden,
//    everything else by tokens x (hidden + FFN) (bytes moved). Kernels never get shorter than 1 µs.
//  - Tensor parallelism: one rank stands for its TP group (the group runs the same stream in lock step);
//    two all-reduces of tokens x hidden bf16 per layer and pass are inserted as communication kernels
//    lasting a ring all-reduce over NVLink, 2 (TP - 1) / TP x bytes / bandwidth + 2 (TP - 1) x latency.
//  - Pipeline: stage s holds layers [s L / PP, (s + 1) L / PP); its forward and backward of a
//    micro-batch are its layers' templates back to back, the first stage adding the embedding and the
//    last the head (LM head GEMMs scale with tokens x hidden x vocabulary, the rest by bytes); after
//    the gradient all-reduce each stage runs the optimizer step, scaled by its parameters per TP rank
//    over the recorded model's.
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct TransformerSpec {
  std::string name;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, seq = 0;
  bool gated_mlp = false;  // SwiGLU (three matrices) instead of two
  int micro_batch = 1, global_batch = 0;  // sequences
};

// gpt3-xl, gpt3-175b, qwen3-1.7b, llama-3.2-3b, llama-3.3-70b (published configurations).
TransformerSpec transformer_preset(const std::string& name);
std::vector<std::string> transformer_presets();

struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1;
};

struct LayerTemplate {
  TransformerSpec reference;         // the recorded model's shape (tokens = micro_batch x seq)
  std::vector<Kernel> forward, backward;
  // Outside the layers, from the same step: the embedding (forward kernels before the first layer and
  // backward kernels after the last layer period), the head (final norm, LM head, loss: forward kernels
  // after the last layer, backward kernels before the first layer period) and the optimizer step.
  std::vector<Kernel> embed_forward, embed_backward, head_forward, head_backward, optimizer;
  double reference_params = 0;       // the recorded model's parameters (run.json "run.params"), for the optimizer
  std::vector<std::string> names;    // name table the kernels' name_id index
};

// `run` is the recording's run.json "run" object: its `cfg` (layers, d, nh, nkv, ffn, vocab, seq, batch,
// llama) and `params`.
LayerTemplate extract_layer_template(const Workload& recorded, const Json& run, const std::string& source);

struct SynthesisOptions {
  double nvlink_bw_bps = 450e9;     // per GPU and direction
  double nvlink_latency_s = 5e-6;
};

struct SynthesizedPipeline {
  std::vector<Rank> stages;  // one rank program per pipeline stage (standing for its TP group)
  std::vector<std::pair<std::size_t, std::size_t>> forward, backward, optimizer;
  int microbatches = 0;
  std::vector<std::string> names;
  double kernels_per_microbatch = 0;  // per stage, forward + backward
  // Per TP rank: bf16 activations sent between stages per micro-batch, and bf16 gradients of the
  // stage's layer weights (linear layers only) all-reduced across data-parallel replicas.
  double activation_bytes = 0;
  std::vector<double> gradient_bytes;
};

// Throws InputError naming the field: a layout that does not divide the layers, heads or batch.
SynthesizedPipeline synthesize_pipeline(const LayerTemplate& tpl, const TransformerSpec& target,
                                        const ParallelLayout& layout, const SynthesisOptions& opts,
                                        const std::string& source);

}  // namespace dvfs
