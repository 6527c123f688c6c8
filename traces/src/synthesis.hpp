#pragma once
// Workload synthesis: kernel streams of a transformer's pipeline stages, built from one layer of a
// recorded training trace and scaled to another model shape and parallel layout.
//
//  - Layer template: from a recording of a uniform transformer (the H200 GPT-3 XL trace), one layer's
//    forward kernels (those annotated `layer<k>.attn` / `layer<k>.mlp`, k the middle layer) and one
//    layer's backward kernels (the backward pass repeats per layer: its repeat period in kernel names is
//    detected and one period from the middle taken, since autograd's kernels carry no layer ranges).
//  - Scaling: each kernel's recorded duration times the ratio of its work in the target to the
//    reference, per GPU: GEMMs by linear-layer FLOPs per token (q, k, v with grouped KV heads, output
//    projection, MLP with 2 or 3 matrices), attention by tokens x sequence x hidden, everything else by
//    tokens x (hidden + FFN) (bytes moved), all divided by TP, tokens divided by CP. Kernels never get
//    shorter than 1 us.
//  - Tensor parallelism: one program stands for its TP group (the group runs the same stream in lock
//    step); two all-reduces of tokens x hidden bf16 per layer and pass are communication kernels lasting
//    a ring all-reduce over NVLink, 2 (TP - 1) / TP x bytes / bandwidth + 2 (TP - 1) x latency, and
//    referring to a collective call, so an engine that simulates every TP rank runs them on its network.
//  - Context parallelism: the sequence is split over CP GPUs; each layer all-gathers the keys and values
//    before attention (and re-gathers them and reduce-scatters their gradients in the backward).
//  - Pipeline: virtual stage v = c x PP + s (model chunk c of stage s; one chunk unless interleaved)
//    holds layers [v L / (PP VPP), (v + 1) L / (PP VPP)); its forward and backward of a micro-batch are
//    its layers' templates back to back, the first virtual stage adding the embedding and the last the
//    head (LM head GEMMs scale with tokens x hidden x vocabulary, the rest by bytes). Each chunk's
//    backward carries its gradient buckets; after the gradient sync each stage runs the optimizer step,
//    scaled by its parameters per TP rank (per DP shard with the distributed optimizer) over the
//    recorded model's.
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
// The preset named `name`; an unknown name is an InputError naming `file` and `field` (the CLI's: --model).
TransformerSpec transformer_preset(const std::string& name, const std::string& file = "--model", const std::string& field = "");
// Parameters of one layer's linear layers (q, k, v with grouped KV heads, output projection, MLP).
double layer_params(const TransformerSpec& s);
std::vector<std::string> transformer_presets();

// TP x CP GPUs run one stage's stream in lock step (one actor stands for them unless TP is unfolded);
// PP stages, each holding `vpp` model chunks (interleaved schedules); DP replicas of the whole pipeline.
struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, vpp = 1;
  int gpus() const { return tp * pp * dp * cp; }
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
  double inter_bw_bps = 50e9;       // per GPU NIC, for context-parallel groups that span nodes
  double inter_latency_s = 5e-6;
  int gpus_per_node = 8;
  // Gradients are reduced in fp32 (Megatron-LM sets accumulate_allreduce_grads_in_fp32 for bf16
  // training); parameters are all-gathered in bf16 by the distributed optimizer.
  double grad_bytes_per_param = 4;
  double param_bytes_per_param = 2;
  // Parameters per gradient bucket; 0 = Megatron-LM's default max(40 M, 1 M x DP).
  double bucket_params = 0;
  bool distributed_optimizer = false;  // optimizer on a 1/DP shard (its kernels scaled by 1/DP)
  // Megatron's sequence parallelism: the norms, dropouts and other per-token elementwise work are split
  // over the TP ranks too (otherwise every TP rank repeats them); each TP all-reduce kernel then stands for
  // the reduce-scatter + all-gather pair that replaces it (the same bytes on the wire).
  bool sequence_parallel = true;
};

// Program layout per stage: for each chunk c (virtual stage v = c x PP + s), its forward kernels then its
// backward kernels; then the optimizer step. Communication kernels of TP (all-reduce) and CP (K/V
// all-gather, dK/dV reduce-scatter) refer to `collectives` (group -1: TP, -2: CP) and last the ring's
// closed-form time over NVLink (CP: over the network when TP x CP GPUs do not fit in a node).
struct SynthesizedPipeline {
  std::vector<Rank> stages;  // one rank program per pipeline stage (standing for its TP x CP group)
  int chunks = 1;
  std::vector<std::pair<std::size_t, std::size_t>> forward, backward;  // per virtual stage
  std::vector<std::pair<std::size_t, std::size_t>> optimizer;          // per stage
  // Per virtual stage: gradient buckets of its backward (end kernel index, fp32 gradient bytes and
  // bf16 parameter bytes per TP rank), closed at layer ends once `bucket_params` are gathered.
  std::vector<std::vector<GradientBucket>> buckets;
  std::vector<CollectiveCall> collectives;
  int microbatches = 0;
  std::vector<std::string> names;
  double kernels_per_microbatch = 0;  // per stage (all its chunks), forward + backward
  // Per TP rank: bf16 activations sent between stages per micro-batch, and the gradient bytes each
  // stage synchronises across data-parallel replicas (sum of its buckets).
  double activation_bytes = 0;
  std::vector<double> gradient_bytes;
};

// Device memory one GPU of the busiest stage needs (Korthikanti et al., MLSys 2023, with sequence
// parallelism and flash attention): bf16 weights (2 B per parameter), gradients (grad_bytes_per_param),
// fp32 Adam master weights and moments (12 B, divided by DP with the distributed optimizer), and the
// activations of the micro-batches in flight, 34 s b h / TP bytes per layer (s: tokens per GPU after CP),
// plus fp32 logits on the last stage. 1F1B holds PP micro-batches on the first stage, GPipe all of them.
struct MemoryEstimate {
  double weights_bytes = 0, gradients_bytes = 0, optimizer_bytes = 0, activations_bytes = 0;
  double total_bytes() const { return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes; }
};
MemoryEstimate estimate_memory(const TransformerSpec& model, const ParallelLayout& layout, const SynthesisOptions& opts,
                               int microbatches_in_flight);

// Throws InputError naming the field: a layout that does not divide the layers (PP x VPP), heads (TP),
// sequence (2 x CP, for load-balanced causal attention) or batch (DP x micro-batch).
SynthesizedPipeline synthesize_pipeline(const LayerTemplate& tpl, const TransformerSpec& target,
                                        const ParallelLayout& layout, const SynthesisOptions& opts,
                                        const std::string& source);

}  // namespace dvfs
