#include "traces/src/grpo.hpp"

#include "models/src/model_registry.hpp"
#include "models/src/retarget.hpp"
#include "models/src/switch_latency.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/recording.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace dvfs {

namespace {

double head_dim(const TransformerSpec& s) { return static_cast<double>(s.hidden) / s.heads; }

constexpr const char* kPhases[] = {"decode", "prefill", "train"};

// Kernel classes in the order a coalesced decode step replays them.
constexpr KernelClass kStepOrder[] = {KernelClass::normalization, KernelClass::gemm,      KernelClass::attention,
                                      KernelClass::elementwise,   KernelClass::reduction, KernelClass::copy,
                                      KernelClass::other,         KernelClass::optimizer, KernelClass::communication};

Kernel activity(KernelClass c, double duration_s, double fill, std::uint32_t name, float sm, float mem) {
  Kernel k;
  k.cls = c;
  k.duration_s = duration_s;
  k.sm_fill = static_cast<float>(std::clamp(fill, 0.001, 1.0));
  k.name_id = name;
  k.recorded_sm_mhz = sm;
  k.recorded_mem_mhz = mem;
  return k;
}

// Adds a recorded kernel's work, at the top clocks (its rates scaled to its top-clock time t), to its class.
void add_class_work(const Kernel& k, double t, double ramp_s, std::array<double, kKernelClassCount>& class_time,
                    std::array<double, kKernelClassCount>& known_time, std::array<std::array<double, kRates + 1>, kKernelClassCount>& work,
                    std::array<std::array<double, kTensorPrecisionCount>, kKernelClassCount>& tensor_by_precision) {
  const auto c = static_cast<std::size_t>(k.cls);
  class_time[c] += t;
  if (!counted_work(k) || t <= 0) return;
  known_time[c] += t;
  work[c][kRates] += t * t / (t + ramp_s);  // ramp weight x time
  const double to_top = k.duration_s / t;  // the same work in the top-clock time
  const std::array<float, kRates> rates = work_rates(k);
  for (std::size_t j = 0; j < kRates; ++j) work[c][j] += rates[j] * to_top * t;
  tensor_by_precision[c][static_cast<std::size_t>(k.tensor_precision)] += k.tensor_tflops * k.duration_s;
}

}  // namespace

TransformerSpec grpo_model_preset(const std::string& name, const std::string& file, const std::string& field) {
  // Qwen2.5 config.json (Qwen team, 2024): layers, hidden, heads, KV heads, intermediate size, vocabulary.
  if (name == "qwen2.5-7b") return {"qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, 2048, true, 1, 1};
  if (name == "qwen2.5-14b") return {"qwen2.5-14b", 48, 5120, 40, 8, 13824, 152064, 2048, true, 1, 1};
  if (name == "qwen2.5-72b") return {"qwen2.5-72b", 80, 8192, 64, 8, 29568, 152064, 2048, true, 1, 1};
  for (const std::string& p : transformer_presets())
    if (p == name) return transformer_preset(name);
  std::string list = "qwen2.5-7b, qwen2.5-14b, qwen2.5-72b";
  for (const std::string& p : transformer_presets()) list += ", " + p;
  throw InputError(file, field, "unknown model \"" + name + "\" (expected one of: " + list + ")");
}

std::vector<std::string> default_decode_recordings() {
  std::vector<std::string> out;
  for (int b : {16, 64, 256}) out.push_back(data_dir() + "/traces/recordings/h200-decode-shapes/qwen2.5-7b-decode-b" + std::to_string(b));
  return out;
}

std::vector<std::string> grpo_activity_names() {
  std::vector<std::string> out;
  for (const char* p : kPhases)
    for (int c = 0; c < kKernelClassCount; ++c) out.push_back(std::string(p) + " " + to_string(static_cast<KernelClass>(c)));
  return out;
}

std::uint32_t grpo_name_id(const std::string& phase, KernelClass c) {
  for (std::uint32_t p = 0; p < 3; ++p)
    if (phase == kPhases[p]) return p * kKernelClassCount + static_cast<std::uint32_t>(c);
  return 0;
}

DecodeProfile load_decode_profile(const std::vector<std::string>& dirs, const GpuModel& model) {
  if (dirs.size() < 2) throw InputError(dirs.empty() ? "" : dirs.front(), "", "expected decode recordings at two or more batch sizes");
  const Classifier cls = Classifier::load_default();
  const int top_sm = static_cast<int>(model.sm_clocks_mhz().size()) - 1, top_mem = static_cast<int>(model.mem_clocks_mhz().size()) - 1;
  DecodeProfile p;
  // Attention per layer and step against batch x context, for the least-squares fit.
  std::vector<double> attn_x, attn_y;
  double attn_time = 0, attn_fill_time = 0, ctx_sum = 0;
  std::size_t ctx_n = 0;
  struct Loaded {
    double batch;
    DecodeProfile::Part layers, head, rest;
    std::array<DecodeProfile::ClassWork, kKernelClassCount> work;
  };
  std::vector<Loaded> loaded;
  for (const std::string& dir : dirs) {
    const std::string gen_file = dir + "/generation.json";
    const Json gen = read_json_file(gen_file);
    JsonReader g(gen, gen_file, "");
    TransformerSpec shape;
    shape.name = g.string_or("preset", "recorded");
    shape.layers = static_cast<int>(g.integer_in("layers", 1, 1 << 24));
    shape.hidden = static_cast<int>(g.integer_in("d", 1, 1 << 24));
    shape.heads = static_cast<int>(g.integer_in("heads", 1, 1 << 24));
    shape.kv_heads = static_cast<int>(g.integer_in("kv_heads", 1, 1 << 24));
    shape.ffn = static_cast<int>(g.integer_in("ffn", 1, 1 << 24));
    shape.vocab = static_cast<int>(g.integer_in("vocab", 1, 1 << 24));
    shape.gated_mlp = true;
    const double batch = static_cast<double>(g.integer_in("batch", 1, 1 << 24));
    const double ctx0 = g.number("context_at_first_profiled_step");
    if (p.sources.empty()) p.reference = shape;
    else if (shape.layers != p.reference.layers || shape.hidden != p.reference.hidden || shape.ffn != p.reference.ffn)
      throw InputError(gen_file, "layers/d/ffn", "expected the same model shape in every decode recording");
    p.sources.push_back(dir);
    const Recording rec = load_recording(dir, cls);
    const Rank& r = rec.workload.ranks.at(0);
    if (r.steps.empty()) throw InputError(dir, "steps", "expected profiled decode steps");
    Loaded L{batch, {}, {}, {}, {}};
    std::array<double, kKernelClassCount> fill_time[3]{};
    std::array<double, kKernelClassCount> class_time{}, known_time{};
    std::array<std::array<double, kRates + 1>, kKernelClassCount> work{};  // rate x top-clock time; [kRates]: ramp weight x time
    std::array<std::array<double, kTensorPrecisionCount>, kKernelClassCount> tensor_by_precision{};
    for (std::size_t si = 0; si < r.steps.size(); ++si) {
      const Step& st = r.steps[si];
      const double ctx = ctx0 + static_cast<double>(si);
      double attn_step = 0;
      for (int i = st.first_kernel; i <= st.last_kernel; ++i) {
        const Kernel& k = r.kernels[static_cast<std::size_t>(i)];
        const double t = model.kernel_time_s(k, top_sm, top_mem);
        add_class_work(k, t, model.activity().ramp_s, class_time, known_time, work, tensor_by_precision);
        int part = 2;  // rest
        for (auto a : rec.workload.annotation_sets[k.annotation_set].annotations) {
          const std::string& n = rec.workload.annotation_names[a];
          if (n.rfind("layer", 0) == 0) part = 0;
          else if (n == "lm_head" && part != 0) part = 1;
        }
        if (part == 0 && k.cls == KernelClass::attention) {
          attn_step += t;
          attn_fill_time += k.sm_fill * t;
          continue;
        }
        DecodeProfile::Part& dst = part == 0 ? L.layers : part == 1 ? L.head : L.rest;
        dst.time_s[static_cast<std::size_t>(k.cls)] += t;
        fill_time[part][static_cast<std::size_t>(k.cls)] += k.sm_fill * t;
      }
      attn_time += attn_step;
      attn_x.push_back(batch * ctx);
      attn_y.push_back(attn_step / shape.layers);
      ctx_sum += ctx;
      ++ctx_n;
    }
    const double steps = static_cast<double>(r.steps.size());
    for (int part = 0; part < 3; ++part) {
      DecodeProfile::Part& dst = part == 0 ? L.layers : part == 1 ? L.head : L.rest;
      for (std::size_t c = 0; c < dst.time_s.size(); ++c) {
        dst.fill[c] = dst.time_s[c] > 0 ? fill_time[part][c] / dst.time_s[c] : 1.0;
        dst.time_s[c] /= steps;
      }
    }
    for (int c = 0; c < kKernelClassCount; ++c) {
      DecodeProfile::ClassWork& w = L.work[static_cast<std::size_t>(c)];
      const auto ci = static_cast<std::size_t>(c);
      w.known = class_time[ci] > 0 && known_time[ci] >= 0.9 * class_time[ci];
      for (std::size_t j = 0; j < kRates; ++j) w.rates[j] = known_time[ci] > 0 ? work[ci][j] / known_time[ci] : 0.0;
      w.ramp = known_time[ci] > 0 ? work[ci][kRates] / known_time[ci] : 1.0;
      const auto& tp = tensor_by_precision[ci];
      w.precision = static_cast<TensorPrecision>(std::max_element(tp.begin(), tp.end()) - tp.begin());
    }
    loaded.push_back(L);
  }
  std::sort(loaded.begin(), loaded.end(), [](const Loaded& a, const Loaded& b) { return a.batch < b.batch; });
  for (const Loaded& L : loaded) {
    if (!p.batches.empty() && L.batch == p.batches.back())
      throw InputError(p.sources.front(), "batch", "expected decode recordings at different batch sizes");
    p.batches.push_back(L.batch);
    p.layers.push_back(L.layers);
    p.head.push_back(L.head);
    p.rest.push_back(L.rest);
    p.work.push_back(L.work);
  }
  // Least squares y = a0 + a1 x.
  const double n = static_cast<double>(attn_x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < attn_x.size(); ++i) sx += attn_x[i], sy += attn_y[i], sxx += attn_x[i] * attn_x[i], sxy += attn_x[i] * attn_y[i];
  const double den = n * sxx - sx * sx;
  p.attention_per_token_s = den > 0 ? std::max(0.0, (n * sxy - sx * sy) / den) : 0.0;
  p.attention_fixed_s = std::max(0.0, (sy - p.attention_per_token_s * sx) / n);
  double rss = 0;
  for (std::size_t i = 0; i < attn_x.size(); ++i) {
    const double e = (p.attention_fixed_s + p.attention_per_token_s * attn_x[i] - attn_y[i]) / attn_y[i];
    rss += e * e;
  }
  p.attention_fit_rms = std::sqrt(rss / n);
  p.attention_fill = attn_time > 0 ? attn_fill_time / attn_time : 1.0;
  p.reference_context = ctx_n ? ctx_sum / static_cast<double>(ctx_n) : 0.0;
  return p;
}

double interpolate_in_batch(const std::vector<double>& xs, const std::vector<double>& ys, double b) {
  if (xs.empty()) return 0;
  if (xs.size() == 1 || b <= xs.front()) return ys.front();
  std::size_t i = 1;
  while (i + 1 < xs.size() && b > xs[i]) ++i;
  const double slope = (ys[i] - ys[i - 1]) / (xs[i] - xs[i - 1]);
  const double v = ys[i - 1] + slope * (b - xs[i - 1]);
  // Beyond the largest recorded batch the work cannot shrink.
  return b > xs.back() ? std::max(v, ys.back()) : v;
}

DecodeStepModel::DecodeStepModel(const DecodeProfile& p, const TransformerSpec& t, int tp, double allreduce_s, double host_overhead_s)
    : batches_(p.batches), host_s_(host_overhead_s) {
  const TransformerSpec& r = p.reference;
  const double r_layers = static_cast<double>(t.layers) / r.layers;
  const double r_gemm = t.layers * layer_params(t) / tp / (r.layers * layer_params(r));
  const double r_head_gemm = static_cast<double>(t.vocab) * t.hidden / tp / (static_cast<double>(r.vocab) * r.hidden);
  const double r_head_other = static_cast<double>(t.vocab) / tp / r.vocab;
  const double kv_t = static_cast<double>(t.kv_heads) * head_dim(t) / tp, kv_r = static_cast<double>(r.kv_heads) * head_dim(r);
  for (int c = 0; c < kKernelClassCount; ++c) {
    Curve& cv = curves_[static_cast<std::size_t>(c)];
    const auto cls = static_cast<KernelClass>(c);
    for (std::size_t b = 0; b < p.batches.size(); ++b) {
      const auto ci = static_cast<std::size_t>(c);
      const double layer = p.layers[b].time_s[ci] * (cls == KernelClass::gemm ? r_gemm : r_layers);
      const double head = p.head[b].time_s[ci] * (cls == KernelClass::gemm ? r_head_gemm : r_head_other);
      const double rest = p.rest[b].time_s[ci];
      const double total = layer + head + rest;
      cv.time_s.push_back(total);
      cv.fill.push_back(total > 0 ? (layer * p.layers[b].fill[ci] + head * p.head[b].fill[ci] + rest * p.rest[b].fill[ci]) / total : 1.0);
      if (b < p.work.size()) {
        const DecodeProfile::ClassWork& w = p.work[b][ci];
        for (std::size_t j = 0; j < kRates; ++j) cv.rates[j].push_back(w.rates[j]);
        cv.ramp.push_back(w.ramp);
        cv.known = (b == 0 || cv.known) && w.known;
        cv.precision = w.precision;
      }
    }
  }
  attn_fixed_s_ = p.attention_fixed_s * t.layers;
  attn_per_token_s_ = p.attention_per_token_s * r.layers * (t.layers * kv_t) / (r.layers * kv_r);
  attn_fill_ = p.attention_fill;
  comm_s_ = tp > 1 ? 2.0 * t.layers * allreduce_s : 0.0;
  kv_bytes_per_token_ = 2.0 * t.layers * kv_t * 2.0;  // K and V, bf16
  weight_bytes_ = 2.0 * (t.layers * layer_params(t) + 2.0 * static_cast<double>(t.vocab) * t.hidden) / tp;
}

double DecodeStepModel::busy_s(int batch, double sum_context) const {
  double t = attn_fixed_s_ + attn_per_token_s_ * sum_context + comm_s_;
  for (const Curve& c : curves_) t += interpolate_in_batch(batches_, c.time_s, batch);
  return t;
}

void DecodeStepModel::step(int batch, double sum_context, float sm, float mem, std::vector<Kernel>& out) const {
  out.clear();
  for (KernelClass c : kStepOrder) {
    double d = 0, fill = 1;
    if (c == KernelClass::communication) {
      d = comm_s_;
      fill = 0.1;  // as the training synthesis' communication kernels
    } else {
      const Curve& cv = curves_[static_cast<std::size_t>(c)];
      d = interpolate_in_batch(batches_, cv.time_s, batch);
      fill = interpolate_in_batch(batches_, cv.fill, batch);
      if (c == KernelClass::attention) {
        const double ctx = attn_per_token_s_ * sum_context;
        fill = (d * fill + (attn_fixed_s_ + ctx) * attn_fill_) / std::max(1e-30, d + attn_fixed_s_ + ctx);
        d += attn_fixed_s_ + ctx;
      }
    }
    if (d <= 0) continue;
    out.push_back(activity(c, d, fill, grpo_name_id("decode", c), sm, mem));
    const Curve& cv = curves_[static_cast<std::size_t>(c)];
    if (c != KernelClass::communication && cv.known) {  // what the recorded decode kernels of this class do per second
      Kernel& k = out.back();
      const double ramp = interpolate_in_batch(batches_, cv.ramp, batch);
      k.work = WorkSource::shapes;
      k.tensor_precision = cv.precision;
      k.sm_fill = static_cast<float>(std::clamp(k.sm_fill * ramp, 0.001, 1.0));
      std::array<float, kRates> rates{};
      for (std::size_t j = 0; j < kRates; ++j) rates[j] = static_cast<float>(ramp * interpolate_in_batch(batches_, cv.rates[j], batch));
      // each rate extrapolates alone: the non-vectorised bytes stay a part of memory's
      rates[kUnvectorisedRate] = std::min(rates[kUnvectorisedRate], rates[kMemoryRate]);
      set_work_rates(k, rates);
    }
  }
  if (!out.empty()) out.front().gap_before_s = host_s_;
}

void DecodeStepModel::scale_classes(const std::array<double, kKernelClassCount>& f) {
  for (std::size_t c = 0; c < curves_.size(); ++c)
    for (double& t : curves_[c].time_s) t *= f[c];
  const auto attn = static_cast<std::size_t>(KernelClass::attention), comm = static_cast<std::size_t>(KernelClass::communication);
  attn_fixed_s_ *= f[attn];
  attn_per_token_s_ *= f[attn];
  comm_s_ *= f[comm];
}

std::vector<Kernel> coalesce_by_class(const std::vector<Kernel>& ks, const GpuModel& model, double span_s, const std::string& phase) {
  const int top_sm = static_cast<int>(model.sm_clocks_mhz().size()) - 1, top_mem = static_cast<int>(model.mem_clocks_mhz().size()) - 1;
  const auto sm = static_cast<float>(model.max_sm_mhz()), mem = static_cast<float>(model.max_mem_mhz());
  std::vector<Kernel> out;
  std::array<double, kKernelClassCount> time{}, fill_time{};
  std::vector<KernelClass> order;
  double gap = 0, span = 0;
  auto flush = [&] {
    bool first = true;
    for (KernelClass c : order) {
      const auto ci = static_cast<std::size_t>(c);
      Kernel k = activity(c, time[ci], time[ci] > 0 ? fill_time[ci] / time[ci] : 1.0, grpo_name_id(phase, c), sm, mem);
      // fill_time holds each kernel's ramp (unsized_prior_ramp); the merged kernel ramps once more, so divide it out
      const double merged_ramp = model.prior_ramp(k, top_sm, top_mem);
      if (merged_ramp > 0 && merged_ramp < 1) k.sm_fill = static_cast<float>(std::clamp(k.sm_fill / merged_ramp, 0.001, 1.0));
      if (first) k.gap_before_s = gap, first = false;
      out.push_back(k);
      time[ci] = fill_time[ci] = 0;
    }
    order.clear();
    span = 0;
    gap = 0;
  };
  for (const Kernel& k : ks) {
    if (k.collective) {
      flush();
      out.push_back(k);
      out.back().name_id = grpo_name_id(phase, KernelClass::communication);
      continue;
    }
    gap += k.gap_before_s;
    const double t = model.kernel_time_s(k, top_sm, top_mem);
    const auto ci = static_cast<std::size_t>(k.cls);
    if (time[ci] == 0 && std::find(order.begin(), order.end(), k.cls) == order.end()) order.push_back(k.cls);
    time[ci] += t;
    fill_time[ci] += k.sm_fill * t * (t > 0 ? model.ramp_weight(t) : 1.0);  // its busy share as its own kernel
    span += t;
    if (span >= span_s) flush();
  }
  flush();
  return out;
}

TrainingPrograms build_training_programs(const LayerTemplate& tpl, const GpuModel& recorded_on, const TrainingShape& sh,
                                         const std::string& source) {
  if (sh.micro_batch < 1 || sh.prompt_tokens < 1 || sh.sequence_tokens < sh.prompt_tokens)
    throw InputError(source, "train_micro_batch", "expected a micro-batch >= 1 and sequences at least as long as the prompt");
  SynthesisOptions so;
  so.distributed_optimizer = true;
  const ParallelLayout lay{sh.tp, 1, sh.dp, 1, 1};
  TrainingPrograms out;
  auto range = [](const SynthesizedPipeline& p, std::pair<std::size_t, std::size_t> r) {
    const auto& ks = p.stages.front().kernels;
    return std::vector<Kernel>(ks.begin() + static_cast<long>(r.first), ks.begin() + static_cast<long>(r.second));
  };
  {
    TransformerSpec s = sh.model;
    s.seq = sh.sequence_tokens;
    s.micro_batch = sh.micro_batch;
    s.global_batch = sh.micro_batch * sh.dp;
    const SynthesizedPipeline p = synthesize_pipeline(tpl, s, lay, so, source);
    const GpuModel bound = recorded_on.bound_to(p.names);
    const std::vector<Kernel> fwd = range(p, p.forward.front());
    out.forward = coalesce_by_class(fwd, bound, sh.coalesce_span_s, "train");
    out.reference_forward = out.forward;
    out.backward = coalesce_by_class(range(p, p.backward.front()), bound, sh.coalesce_span_s, "train");
    out.optimizer = coalesce_by_class(range(p, p.optimizer.front()), bound, sh.coalesce_span_s, "train");
    out.gradient_bytes = p.gradient_bytes.front();
    for (const auto& b : p.buckets.front()) out.param_bytes += b.param_bytes;
    out.weight_bytes = out.param_bytes;
  }
  {
    TransformerSpec s = sh.model;
    s.seq = sh.prompt_tokens;
    s.micro_batch = 1;
    s.global_batch = sh.dp;
    const SynthesizedPipeline p = synthesize_pipeline(tpl, s, lay, so, source);
    out.prefill_one = coalesce_by_class(range(p, p.forward.front()), recorded_on.bound_to(p.names), sh.coalesce_span_s, "prefill");
    for (Kernel& k : out.prefill_one) k.gap_before_s = 0;  // batched into the decode steps: no host gaps of its own
  }
  return out;
}

std::vector<int> draw_response_lengths(std::size_t n, double median, double sigma, int max_tokens, std::mt19937_64& rng) {
  std::vector<int> out(n);
  for (int& v : out) {
    const double x = median * std::exp(sigma * standard_normal(rng));
    v = static_cast<int>(std::clamp(std::lround(x), 1L, static_cast<long>(max_tokens)));
  }
  return out;
}

namespace {

// Loaded once per process: the decode profile and the training layer template (recordings on the H200).
struct SharedInputs {
  GpuModel h200 = load_gpu_model("h200");
  DecodeProfile decode = load_decode_profile(default_decode_recordings(), h200);
  Recording training = load_recording(data_dir() + "/traces/recordings/h200-gpt3xl", Classifier::load_default());
  LayerTemplate layer = extract_layer_template(training.workload, training.run.value("run", Json::object()),
                                               data_dir() + "/traces/recordings/h200-gpt3xl");
};

const SharedInputs& shared_inputs() {
  static const SharedInputs s;
  return s;
}

void retarget(std::vector<Kernel>& ks, const GpuModel& from, const GpuModel& to) {
  Workload wl;
  wl.names = grpo_activity_names();
  Rank r;
  r.kernels = std::move(ks);
  wl.ranks.push_back(std::move(r));
  retarget_workload(wl, from, to);
  ks = std::move(wl.ranks.front().kernels);
}

}  // namespace

PreparedGrpoJob prepare_grpo_job(const GrpoJobSpec& j, const GpuModel& target, const std::string& source, const std::string& pre) {
  auto fail = [&](const std::string& key, const std::string& problem) { throw InputError(source, pre + "." + key, problem); };
  auto range = [&](const char* key, int v, int lo, int hi) {
    if (v < lo || v > hi) fail(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
  };
  range("tp", j.tp, 1, 64);
  range("dp", j.dp, 1, 65536);
  range("prompts_per_step", j.prompts_per_step, 1, 1000000);
  range("group_size_min", j.group_size_min, 1, 1024);
  range("group_size_max", j.group_size_max, j.group_size_min, 1024);
  range("group_size", j.group_size, j.group_size_min, j.group_size_max);
  range("concurrency_min", j.concurrency_min, 1, 4096);
  range("concurrency_max", j.concurrency_max, j.concurrency_min, 4096);
  range("concurrency", j.concurrency, j.concurrency_min, j.concurrency_max);
  range("prompt_tokens", j.prompt_tokens, 1, 1 << 20);
  range("max_response_tokens", j.max_response_tokens, 1, 1 << 20);
  range("train_micro_batch", j.train_micro_batch, 1, 4096);
  if (!(j.response_median_tokens >= 1)) fail("response_median_tokens", "expected >= 1 token");
  if (!(j.response_sigma >= 0) || j.response_sigma > 5) fail("response_sigma", "expected a log-sd in [0, 5]");
  for (auto [key, v] : {std::pair<const char*, double>{"decode_host_overhead_s", j.decode_host_overhead_s},
                        {"decode_allreduce_s", j.decode_allreduce_s}, {"step_host_s", j.step_host_s}, {"start_offset_s", j.start_offset_s},
                        {"start_offset_spread_s", j.start_offset_spread_s}})
    if (!(v >= 0) || v > 1e6) fail(key, "expected seconds >= 0");
  if (!(j.coalesce_span_s > 0) || j.coalesce_span_s > 1) fail("coalesce_span_s", "expected a span in (0, 1] s");
  PreparedGrpoJob p;
  p.spec = j;
  p.shape = grpo_model_preset(j.model, source, pre + ".model");
  if (p.shape.heads % j.tp != 0 || p.shape.kv_heads % j.tp != 0)
    fail("tp", "TP " + std::to_string(j.tp) + " does not divide " + std::to_string(p.shape.heads) + " heads and " +
                   std::to_string(p.shape.kv_heads) + " KV heads of " + j.model);
  const SharedInputs& in = shared_inputs();
  p.decode = DecodeStepModel(in.decode, p.shape, j.tp, j.decode_allreduce_s, j.decode_host_overhead_s);
  TrainingShape ts;
  ts.model = p.shape;
  ts.tp = j.tp;
  ts.dp = j.dp;
  ts.prompt_tokens = j.prompt_tokens;
  ts.sequence_tokens = j.sequence_tokens();
  ts.micro_batch = j.train_micro_batch;
  ts.coalesce_span_s = j.coalesce_span_s;
  p.training = build_training_programs(in.layer, in.h200.bound_to(in.training.workload.names), ts, source);
  if (target.name() != in.h200.name()) {
    // Per class, how the target's time compares (one 1 s kernel of each class at the H200's top clocks).
    std::vector<Kernel> probe;
    for (int c = 0; c < kKernelClassCount; ++c) {
      Kernel k;
      k.cls = static_cast<KernelClass>(c);
      k.duration_s = 1;
      k.recorded_sm_mhz = static_cast<float>(in.h200.max_sm_mhz());
      k.recorded_mem_mhz = static_cast<float>(in.h200.max_mem_mhz());
      probe.push_back(k);
    }
    retarget(probe, in.h200, target);
    std::array<double, kKernelClassCount> f{};
    for (int c = 0; c < kKernelClassCount; ++c) f[static_cast<std::size_t>(c)] = probe[static_cast<std::size_t>(c)].duration_s;
    p.decode.scale_classes(f);
    for (auto* ks : {&p.training.prefill_one, &p.training.reference_forward, &p.training.forward, &p.training.backward, &p.training.optimizer})
      retarget(*ks, in.h200, target);
  }
  p.top_sm_mhz = static_cast<float>(target.max_sm_mhz());
  p.top_mem_mhz = static_cast<float>(target.max_mem_mhz());
  // Generation holds the weights and every decoding sequence's KV cache (the training state is offloaded
  // meanwhile, as colocated RL trainers do).
  const double memory_b = target.specs().memory_gb * 1e9;
  const double need = p.decode.weight_bytes() + static_cast<double>(j.concurrency_max) * j.sequence_tokens() * p.decode.kv_bytes_per_token();
  if (j.generation && memory_b > 0 && need > 0.9 * memory_b) {
    fail("concurrency_max",
         printf_text("%d sequences of %d tokens need %.0f GB of KV cache plus %.0f GB of weights per GPU; the %s holds %.0f GB "
                     "(90 %% usable): lower concurrency_max or raise tp",
                     j.concurrency_max, j.sequence_tokens(), (need - p.decode.weight_bytes()) / 1e9, p.decode.weight_bytes() / 1e9,
                     target.name().c_str(), memory_b / 1e9));
  }
  return p;
}

}  // namespace dvfs
