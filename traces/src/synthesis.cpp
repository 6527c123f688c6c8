#include "traces/src/synthesis.hpp"

#include "sim/core/errors.hpp"
#include "models/src/collective_cost.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace dvfs {

namespace {

struct Preset {
  const char* name;
  TransformerSpec spec;
};

// Published configurations: GPT-3 (Brown et al. 2020, table 2.1), Llama 3.2 3B and Llama 3.3 70B
// (Meta model cards / config.json), Qwen3-1.7B (Qwen config.json). Batch sizes are study defaults.
const Preset kPresets[] = {
    {"gpt3-xl", {"gpt3-xl", 24, 2048, 16, 16, 8192, 50257, 2048, false, 8, 512}},
    {"gpt3-175b", {"gpt3-175b", 96, 12288, 96, 96, 49152, 50257, 2048, false, 1, 1536}},
    {"qwen3-1.7b", {"qwen3-1.7b", 28, 2048, 16, 8, 6144, 151936, 4096, true, 4, 256}},
    {"llama-3.2-3b", {"llama-3.2-3b", 28, 3072, 24, 8, 8192, 128256, 4096, true, 2, 256}},
    {"llama-3.3-70b", {"llama-3.3-70b", 80, 8192, 64, 8, 28672, 128256, 4096, true, 1, 1024}},
};

// Forward GEMM FLOPs per token of one layer: a multiply-add per weight.
double gemm_flops_per_token(const TransformerSpec& s) { return 2.0 * layer_params(s); }

}  // namespace

double layer_params(const TransformerSpec& s) {
  const double d = s.hidden, kv = static_cast<double>(s.kv_heads) / s.heads;
  return d * (d + 2.0 * d * kv) + d * d + (s.gated_mlp ? 3.0 : 2.0) * d * s.ffn;
}

TransformerSpec transformer_preset(const std::string& name, const std::string& file, const std::string& field) {
  for (const auto& p : kPresets)
    if (name == p.name) return p.spec;
  std::string list;
  for (const auto& p : kPresets) list += (list.empty() ? "" : ", ") + std::string(p.name);
  throw InputError(file, field, "unknown model \"" + name + "\" (expected one of: " + list + ")");
}

std::vector<std::string> transformer_presets() {
  std::vector<std::string> out;
  for (const auto& p : kPresets) out.push_back(p.name);
  return out;
}

LayerTemplate extract_layer_template(const Workload& wl, const Json& run, const std::string& source) {
  if (!run.is_object() || !run.contains("cfg"))
    throw InputError(source + "/run.json", "run.cfg", "missing: the recorded model's shape is needed to scale its layers");
  const Json& cfg = run["cfg"];
  JsonReader c(cfg, source, "run.cfg");
  LayerTemplate t;
  t.reference.name = "recorded";
  t.reference.layers = static_cast<int>(c.integer_in("layers", 1, 1 << 24));
  t.reference.hidden = static_cast<int>(c.integer_in("d", 1, 1 << 24));
  t.reference.heads = static_cast<int>(c.integer_in("nh", 1, 1 << 24));
  t.reference.kv_heads = static_cast<int>(c.integer_in_or("nkv", 1, 1 << 24, t.reference.heads));
  t.reference.ffn = static_cast<int>(c.integer_in("ffn", 1, 1 << 24));
  t.reference.seq = static_cast<int>(c.integer_in("seq", 1, 1 << 24));
  t.reference.micro_batch = static_cast<int>(c.integer_in("batch", 1, 1 << 24));
  t.reference.gated_mlp = c.has("llama") && c.raw("llama").is_boolean() && c.raw("llama").get<bool>();
  t.reference.vocab = static_cast<int>(c.integer_in_or("vocab", 1, 1 << 24, 50257));
  t.reference_params = run.contains("params") && run["params"].is_number() ? run["params"].get<double>() : 0.0;
  t.names = wl.names;
  if (wl.ranks.empty() || wl.ranks[0].steps.size() < 2)
    throw InputError(source, "steps", "expected a recording with at least two steps (one is used as the template)");
  const Rank& r = wl.ranks[0];
  const Step& st = r.steps[1];
  const int mid = t.reference.layers / 2;
  const std::string attn = "layer" + std::to_string(mid) + ".attn", mlp = "layer" + std::to_string(mid) + ".mlp";
  std::vector<Kernel> bwd;
  bool seen_layer = false;
  for (int i = st.first_kernel; i <= st.last_kernel; ++i) {
    const Kernel& k = r.kernels[static_cast<std::size_t>(i)];
    if (k.kind != ActivityKind::kernel) continue;
    const AnnotationSet& as = wl.annotation_sets[k.annotation_set];
    bool in_layer = false, in_any_layer = false;
    for (auto a : as.annotations) {
      const std::string& n = wl.annotation_names[a];
      in_layer = in_layer || n == attn || n == mlp;
      in_any_layer = in_any_layer || n.rfind("layer", 0) == 0;
    }
    if (in_layer && as.phase == Phase::forward) t.forward.push_back(k);
    if (as.phase == Phase::forward && in_any_layer) seen_layer = true;
    if (as.phase == Phase::forward && !in_any_layer) (seen_layer ? t.head_forward : t.embed_forward).push_back(k);
    else if (as.phase == Phase::backward) bwd.push_back(k);
    else if (as.phase == Phase::optimizer) t.optimizer.push_back(k);
  }
  if (t.forward.empty()) throw InputError(source, "annotations", "no kernels annotated " + attn + " / " + mlp);
  // The backward pass repeats once per layer: find the period of its kernel-name sequence.
  const std::size_t n = bwd.size();
  std::size_t best_p = 0;
  double best = 0;
  for (std::size_t p = 4; p <= n / 4; ++p) {
    std::size_t match = 0, total = 0;
    for (std::size_t i = n / 4; i + p < 3 * n / 4; ++i, ++total) match += bwd[i].name_id == bwd[i + p].name_id;
    const double ratio = total ? static_cast<double>(match) / static_cast<double>(total) : 0;
    if (ratio > best + 1e-9) best = ratio, best_p = p;
    if (ratio > 0.999) break;  // the smallest exact period
  }
  if (best < 0.9 || best_p == 0)
    throw InputError(source, "backward", "the backward pass does not repeat per layer (best period match " +
                                             std::to_string(best) + ")");
  t.backward.assign(bwd.begin() + static_cast<long>(n / 2), bwd.begin() + static_cast<long>(n / 2 + best_p));
  // Where the per-layer period starts and ends: before it, the head's backward; after, the embedding's.
  std::size_t start = 0;
  while (start + 2 * best_p <= n) {
    bool period = true;
    for (std::size_t i = 0; i < best_p && period; ++i) period = bwd[start + i].name_id == bwd[start + i + best_p].name_id;
    if (period) break;
    ++start;
  }
  const std::size_t end = std::min(n, start + best_p * static_cast<std::size_t>(t.reference.layers));
  t.head_backward.assign(bwd.begin(), bwd.begin() + static_cast<long>(start));
  t.embed_backward.assign(bwd.begin() + static_cast<long>(end), bwd.end());
  return t;
}

namespace {

// The layout must divide the model (layers, heads, sequence, batch); gradient sizes must be positive.
void check_synthesis_inputs(const TransformerSpec& tg, const ParallelLayout& lay, const SynthesisOptions& opts,
                            const std::string& source) {
  if (lay.tp < 1 || lay.pp < 1 || lay.dp < 1 || lay.cp < 1 || lay.vpp < 1)
    throw InputError(source, "layout", "expected TP, PP, DP, CP and VPP >= 1");
  const int V = lay.pp * lay.vpp;  // virtual stages
  if (tg.layers % V != 0)
    throw InputError(source, lay.vpp > 1 ? "vpp" : "pp",
                     std::to_string(tg.layers) + " layers do not split into " + std::to_string(lay.pp) + " stages" +
                         (lay.vpp > 1 ? " x " + std::to_string(lay.vpp) + " model chunks" : ""));
  if (tg.heads % lay.tp != 0 || tg.kv_heads % lay.tp != 0)
    throw InputError(source, "tp", "TP " + std::to_string(lay.tp) + " does not divide " + std::to_string(tg.heads) +
                                       " heads and " + std::to_string(tg.kv_heads) + " KV heads");
  if (lay.cp > 1 && tg.seq % (2 * lay.cp) != 0)
    throw InputError(source, "cp", "CP " + std::to_string(lay.cp) + " does not split the sequence of " + std::to_string(tg.seq) +
                                       " tokens into 2 x CP equal chunks (load-balanced causal attention)");
  if (tg.global_batch % (lay.dp * tg.micro_batch) != 0)
    throw InputError(source, "global_batch", "global batch " + std::to_string(tg.global_batch) + " is not a multiple of DP x micro-batch");
  if (!(opts.grad_bytes_per_param > 0) || !(opts.param_bytes_per_param > 0) || !(opts.bucket_params >= 0))
    throw InputError(source, "gradients", "expected bytes per parameter > 0 and bucket parameters >= 0");
}

// How the template's kernels scale from its reference model to the target on one GPU of the layout.
struct KernelScaling {
  double tok_t = 0;  // tokens one GPU works on per micro-batch: CP splits the sequence
  double r_gemm = 0, r_attn = 0, r_other = 0, r_head = 0, r_bytes = 0, r_logits = 0;

  KernelScaling(const TransformerSpec& rf, const TransformerSpec& tg, const ParallelLayout& lay, bool sequence_parallel) {
    tok_t = static_cast<double>(tg.micro_batch) * tg.seq / lay.cp;
    const double tok_r = static_cast<double>(rf.micro_batch) * rf.seq;
    r_gemm = tok_t * gemm_flops_per_token(tg) / lay.tp / (tok_r * gemm_flops_per_token(rf));
    // Attention: this GPU's queries against the whole sequence's keys.
    r_attn = tok_t * tg.seq * tg.hidden / lay.tp / (tok_r * rf.seq * rf.hidden);
    const double sp = sequence_parallel ? lay.tp : 1.0;  // per-token elementwise work split over TP, or repeated
    r_other = tok_t * (tg.hidden + tg.ffn) / sp / (tok_r * (rf.hidden + rf.ffn));
    const double vocab_r = rf.vocab > 0 ? rf.vocab : 50257.0;
    r_head = tok_t * tg.hidden * tg.vocab / lay.tp / (tok_r * rf.hidden * vocab_r);
    r_bytes = tok_t * tg.hidden / sp / (tok_r * rf.hidden);
    // LM head: its GEMMs by tokens x hidden x vocabulary; the final norm by tokens x hidden; everything
    // else works on the logits (casts, softmax, loss and their gradients): tokens x vocabulary.
    r_logits = tok_t * tg.vocab / lay.tp / (tok_r * vocab_r);
  }
  static Kernel by(Kernel k, double r) {
    k.duration_s = std::max(1e-6, k.duration_s * r);
    k.annotation_set = 0;
    k.step = -1;
    return k;
  }
  Kernel layer(const Kernel& k) const {
    return by(k, k.cls == KernelClass::gemm ? r_gemm : k.cls == KernelClass::attention ? r_attn : r_other);
  }
  Kernel head(const Kernel& k) const {
    return by(k, k.cls == KernelClass::gemm ? r_head : k.cls == KernelClass::normalization ? r_bytes : r_logits);
  }
};

// Builds the stage programs of one layout, stage by stage and chunk by chunk.
class PipelineSynthesizer {
 public:
  PipelineSynthesizer(const LayerTemplate& tpl, const TransformerSpec& tg, const ParallelLayout& lay, const SynthesisOptions& opts)
      : tpl_(tpl), tg_(tg), lay_(lay), opts_(opts), V_(lay.pp * lay.vpp), scale_(tpl.reference, tg, lay, opts.sequence_parallel) {
    out_.names = tpl.names;
    out_.chunks = lay.vpp;
    add_layer_collectives();
    out_.microbatches = tg.global_batch / (lay.dp * tg.micro_batch);
    per_chunk_ = tg.layers / V_;
    out_.activation_bytes = scale_.tok_t * tg.hidden * 2.0 / lay.tp;
    // Parameters: linear layers (= their FLOPs per token / 2); the embedding and the LM head vocab x hidden each.
    one_layer_params_ = layer_params(tg), vocab_params_ = static_cast<double>(tg.vocab) * tg.hidden;
    bucket_params_ = opts.bucket_params > 0 ? opts.bucket_params : std::max(40e6, 1e6 * lay.dp);
  }

  SynthesizedPipeline run() {
    out_.forward.resize(static_cast<std::size_t>(V_));
    out_.backward.resize(static_cast<std::size_t>(V_));
    out_.buckets.resize(static_cast<std::size_t>(V_));
    out_.gradient_bytes.assign(static_cast<std::size_t>(lay_.pp), 0.0);
    for (int s = 0; s < lay_.pp; ++s) add_stage(s);
    return std::move(out_);
  }

 private:
  // A communication kernel standing for one collective call, lasting its closed-form ring time.
  Kernel comm_kernel(const std::string& name, CollectiveKind kind, int group, int members, double bytes, double bw, double lat) {
    Kernel k;
    k.cls = KernelClass::communication;
    k.kind = ActivityKind::kernel;
    k.sm_fill = 0.1f;
    k.duration_s = collective_time_s(kind, false, members, bytes, bw, lat);
    k.recorded_sm_mhz = tpl_.forward.front().recorded_sm_mhz;
    k.recorded_mem_mhz = tpl_.forward.front().recorded_mem_mhz;
    auto it = std::find(out_.names.begin(), out_.names.end(), name);
    k.name_id = static_cast<std::uint32_t>(it - out_.names.begin());
    if (it == out_.names.end()) out_.names.push_back(name);
    out_.collectives.push_back(CollectiveCall{kind, bytes, group, -1});
    k.collective = static_cast<std::uint32_t>(out_.collectives.size());
    return k;
  }

  void add_layer_collectives() {
    // TP: two all-reduces of the layer's activations per layer and pass (after attention, after the MLP).
    const double tp_bytes = scale_.tok_t * tg_.hidden * 2.0;
    if (lay_.tp > 1)
      tp_allreduce_ = comm_kernel("synthetic TP all-reduce (ring over NVLink)", CollectiveKind::all_reduce, -1, lay_.tp, tp_bytes,
                                  opts_.nvlink_bw_bps, opts_.nvlink_latency_s);
    // CP: every GPU needs every other GPU's keys and values (all-gather before attention) and returns
    // their gradients (reduce-scatter in the backward, after re-gathering them), as Megatron's ring
    // attention moves them; not overlapped with the attention here.
    const double kv_bytes = static_cast<double>(tg_.micro_batch) * tg_.seq * 2.0 * tg_.kv_heads * (tg_.hidden / tg_.heads) / lay_.tp * 2.0;
    const bool cp_in_node = lay_.tp * lay_.cp <= opts_.gpus_per_node;
    const double cp_bw = cp_in_node ? opts_.nvlink_bw_bps : opts_.inter_bw_bps, cp_lat = cp_in_node ? opts_.nvlink_latency_s : opts_.inter_latency_s;
    if (lay_.cp > 1) {
      cp_gather_ = comm_kernel("synthetic CP all-gather of K and V", CollectiveKind::all_gather, -2, lay_.cp, kv_bytes, cp_bw, cp_lat);
      cp_scatter_ = comm_kernel("synthetic CP reduce-scatter of dK and dV", CollectiveKind::reduce_scatter, -2, lay_.cp, kv_bytes, cp_bw, cp_lat);
    }
    fwd_attn_ = first_attention(tpl_.forward);
    bwd_attn_ = first_attention(tpl_.backward);
  }

  static std::size_t first_attention(const std::vector<Kernel>& ks) {
    for (std::size_t i = 0; i < ks.size(); ++i)
      if (ks[i].cls == KernelClass::attention) return i;
    return std::size_t{0};
  }

  // Where a layer's forward and backward put their collectives: the TP all-reduces after the first
  // and second half of its kernels; CP's before its first attention kernel.
  void add_layer(Rank& r, const std::vector<Kernel>& layer, bool backward) const {
    const std::size_t half = layer.size() / 2;
    for (std::size_t i = 0; i < layer.size(); ++i) {
      if (lay_.cp > 1 && i == (backward ? bwd_attn_ : fwd_attn_)) {
        r.kernels.push_back(cp_gather_);
        if (backward) r.kernels.push_back(cp_scatter_);
      }
      r.kernels.push_back(scale_.layer(layer[i]));
      if (lay_.tp > 1 && (i + 1 == half || i + 1 == layer.size())) r.kernels.push_back(tp_allreduce_);
    }
  }

  // Chunk c of stage s: its forward and its backward with the gradient buckets; adds its parameters to
  // `stage_params`.
  void add_chunk(Rank& r, int s, int c, double& stage_params) {
    const int v = c * lay_.pp + s;
    const bool first = v == 0, last = v == V_ - 1;
    const std::size_t fwd_begin = r.kernels.size();
    if (first) {
      for (const Kernel& k : tpl_.embed_forward) r.kernels.push_back(KernelScaling::by(k, scale_.r_bytes));
      // The recording's first gap is the host time between steps (data loading, step start): not part
      // of every micro-batch.
      if (!tpl_.embed_forward.empty()) r.kernels[fwd_begin].gap_before_s = 0;
    }
    for (int l = 0; l < per_chunk_; ++l) add_layer(r, tpl_.forward, false);
    if (last)
      for (const Kernel& k : tpl_.head_forward) r.kernels.push_back(scale_.head(k));
    const std::size_t bwd_begin = r.kernels.size();
    out_.forward[static_cast<std::size_t>(v)] = {fwd_begin, bwd_begin};
    // Backward: the head's, then the layers' in reverse, then the embedding's. A bucket closes at the end
    // of a layer once it holds bucket_params parameters; the last one at the end of the chunk.
    auto& buckets = out_.buckets[static_cast<std::size_t>(v)];
    double pending = 0;
    auto close_bucket = [&] {
      buckets.push_back({r.kernels.size(), pending * opts_.grad_bytes_per_param / lay_.tp, pending * opts_.param_bytes_per_param / lay_.tp});
      stage_params += pending;
      pending = 0;
    };
    if (last) {
      for (const Kernel& k : tpl_.head_backward) r.kernels.push_back(scale_.head(k));
      pending += vocab_params_;
    }
    for (int l = 0; l < per_chunk_; ++l) {
      add_layer(r, tpl_.backward, true);
      pending += one_layer_params_;
      if (pending >= bucket_params_) close_bucket();
    }
    if (first) {
      for (const Kernel& k : tpl_.embed_backward) r.kernels.push_back(KernelScaling::by(k, scale_.r_bytes));
      pending += vocab_params_;
    }
    if (pending > 0) close_bucket();
    out_.backward[static_cast<std::size_t>(v)] = {bwd_begin, r.kernels.size()};
    for (const auto& b : buckets) out_.gradient_bytes[static_cast<std::size_t>(s)] += b.bytes;
  }

  void add_stage(int s) {
    Rank r;
    r.id = s;
    double stage_params = 0;
    for (int c = 0; c < lay_.vpp; ++c) add_chunk(r, s, c, stage_params);
    out_.kernels_per_microbatch = static_cast<double>(r.kernels.size());  // every chunk once per micro-batch
    // Optimizer step: streaming over the stage's parameters held by one TP rank (and one DP shard of
    // them with the distributed optimizer).
    const std::size_t opt_begin = r.kernels.size();
    const double shard = opts_.distributed_optimizer ? lay_.dp : 1.0;
    const double r_opt = tpl_.reference_params > 0 ? stage_params / lay_.tp / shard / tpl_.reference_params : 0.0;
    for (Kernel k : tpl_.optimizer) r.kernels.push_back(KernelScaling::by(k, r_opt));
    out_.optimizer.push_back({opt_begin, r.kernels.size()});
    out_.stages.push_back(std::move(r));
  }

  const LayerTemplate& tpl_;
  const TransformerSpec& tg_;
  const ParallelLayout& lay_;
  const SynthesisOptions& opts_;
  const int V_;  // virtual stages
  const KernelScaling scale_;
  SynthesizedPipeline out_;
  Kernel tp_allreduce_{}, cp_gather_{}, cp_scatter_{};
  std::size_t fwd_attn_ = 0, bwd_attn_ = 0;
  int per_chunk_ = 0;
  double one_layer_params_ = 0, vocab_params_ = 0, bucket_params_ = 0;
};

}  // namespace

SynthesizedPipeline synthesize_pipeline(const LayerTemplate& tpl, const TransformerSpec& tg, const ParallelLayout& lay,
                                        const SynthesisOptions& opts, const std::string& source) {
  check_synthesis_inputs(tg, lay, opts, source);
  return PipelineSynthesizer(tpl, tg, lay, opts).run();
}

MemoryEstimate estimate_memory(const TransformerSpec& m, const ParallelLayout& lay, const SynthesisOptions& opts,
                               int in_flight) {
  const double layers = static_cast<double>(m.layers) / lay.pp, vocab_params = static_cast<double>(m.vocab) * m.hidden;
  // The first stage holds the most activations, the last the logits; both may hold a vocabulary matrix.
  const double params = (layers * layer_params(m) + vocab_params) / lay.tp;
  MemoryEstimate e;
  e.weights_bytes = 2.0 * params;
  e.gradients_bytes = opts.grad_bytes_per_param * params;
  e.optimizer_bytes = 12.0 * params / (opts.distributed_optimizer ? lay.dp : 1.0);
  const double tokens = static_cast<double>(m.micro_batch) * m.seq / lay.cp;
  const double per_layer = 34.0 * tokens * m.hidden / lay.tp;
  const double logits = lay.pp == 1 ? 4.0 * tokens * m.vocab / lay.tp : 0.0;
  e.activations_bytes = per_layer * layers * std::max(1, in_flight) + logits;
  return e;
}

}  // namespace dvfs
