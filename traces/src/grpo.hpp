#pragma once
// GRPO-style RL post-training workloads (group relative policy optimisation, Shao et al. 2024): every
// step generates G completions for each of P prompts (the generation phase: autoregressive decode with a
// KV cache, memory-bound), then trains the policy on the generated sequences (forward and backward
// passes, compute-bound). The knobs a controller may turn are the group size G (more sequences per step)
// and the concurrency C (sequences a GPU decodes at once: the decode batch).
//
// Generation is built from the real decode recordings (traces/recordings/h200-decode/: Qwen2.5-7B shape,
// H200, batch 16, 64 and 256, one profiled step per decode step):
//  - per decode step, each kernel class's time at the GPU's top clocks (every kernel normalised from the
//    clock the telemetry reported at its start) and its time-weighted SM fill, for the layers, the LM head
//    and the rest (embedding gather, sampling). The recordings' host gaps are not used: eager PyTorch is
//    host-bound there (the GPU is busy 5-9 ms of 60-90 ms steps); a generation engine's host time per
//    step is a parameter (decode_host_overhead_s) instead.
//  - attention over the KV cache is a0 + a1 x (sum of the active sequences' contexts) per layer, least
//    squares over the recorded steps (3 batches x 20 contexts); the other classes are interpolated piecewise
//    linearly in the batch between the recorded batches (held below the smallest, extrapolated above the
//    largest with the slope of the last two).
//  - another model shape is reached per GPU by work ratios, as the training synthesis does: layer GEMMs by
//    parameters per layer x layers / TP (a decode step reads every weight once; its FLOPs scale alike),
//    attention's context part by layers x KV heads x head dim / TP (KV-cache bytes), the LM head by
//    vocabulary x hidden / TP, the small launch-bound kernels (norms, elementwise) by layers; with TP > 1
//    two all-reduces per layer of decode_allreduce_s each [estimate: latency-bound NVLink all-reduce].
//  Kernels of one class within a decode step are replayed as one activity (coalesced): exact in time and
//  energy at constant clocks; the order of classes inside a 5-10 ms step is lost, below the 10 ms period
//  of the power-limit loop and the 25 ms bins of the telemetry.
//
// Prefill and training come from the training synthesis (traces/src/synthesis.hpp, layers of the recorded
// H200 GPT-3 XL trace scaled to the target shape): prefill = the forward pass of one prompt (a joining
// sequence's prefill, scaled by the sequences joining); training = per micro-batch the reference model's
// forward (GRPO's KL term), the policy's forward and backward over padded sequences (prompt + maximum
// response), then the distributed optimizer (gradient reduce-scatter, optimizer on a 1/DP shard, parameter
// all-gather; sim/control runs the collectives). Training programs are coalesced by class over spans of
// `coalesce_span_s` of work.
#include "models/src/gpu_model.hpp"
#include "sim/core/workload.hpp"
#include "traces/src/synthesis.hpp"

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace dvfs {

// Model shapes for post-training studies: qwen2.5-7b, qwen2.5-14b, qwen2.5-72b (Qwen2.5 config.json), and
// every training preset of synthesis.hpp.
TransformerSpec grpo_model_preset(const std::string& name, const std::string& file = "", const std::string& field = "model");

// Work rates carried per kernel class: a kernel's work rates (sim/core/workload.hpp, kWorkRates).
constexpr std::size_t kRates = kWorkRates;

// What the decode recordings say, per recorded batch (ascending), at the recording GPU's top clocks.
struct DecodeProfile {
  struct Part {
    std::array<double, kKernelClassCount> time_s{};  // per decode step
    std::array<double, kKernelClassCount> fill{};    // time-weighted SM fill
  };
  TransformerSpec reference;           // the recorded model's shape (generation.json)
  std::vector<double> batches;
  std::vector<Part> layers, head, rest;  // layers: attention excluded (see below)
  // What each class's kernels do per second at the top clocks (time-weighted over the recorded steps and parts,
  // attention included), per batch: the activity power model's inputs (sim/core/workload.hpp). A class whose
  // recorded time is < 90 % priced by operator shapes keeps WorkSource::unknown (its class prior).
  struct ClassWork {
    std::array<double, kRates> rates{};  // in work_rates' order (sim/core/workload.hpp)
    TensorPrecision precision = TensorPrecision::none;
    bool known = false;
    // time-weighted t / (t + ramp_s) of the class's kernels (GpuModel::activity_power_w): one coalesced activity
    // stands for many kernels of a few microseconds, so it carries their ramp in its fill and rates
    double ramp = 1.0;
  };
  std::vector<std::array<ClassWork, kKernelClassCount>> work;  // per batch
  double attention_fixed_s = 0;        // per layer and decode step
  double attention_per_token_s = 0;    // per layer and cached token of an active sequence
  double attention_fill = 1;
  double attention_fit_rms = 0;        // relative rms error of the attention fit over the recorded steps
  double reference_context = 0;        // mean context over the recorded steps
  std::vector<std::string> sources;
};

// Recording directories of one model shape at several batch sizes (each with generation.json).
DecodeProfile load_decode_profile(const std::vector<std::string>& dirs, const GpuModel& recorded_on);
std::vector<std::string> default_decode_recordings();  // the three shipped H200 recordings

// Piecewise-linear interpolation in the batch (see above).
double interpolate_in_batch(const std::vector<double>& batches, const std::vector<double>& values, double batch);

// Names the synthetic activities use (Kernel::name_id indexes it).
std::vector<std::string> grpo_activity_names();
// The name id of "<phase> <class>", phase in {decode, prefill, train}.
std::uint32_t grpo_name_id(const std::string& phase, KernelClass c);

class DecodeStepModel {
 public:
  DecodeStepModel() = default;
  DecodeStepModel(const DecodeProfile& p, const TransformerSpec& target, int tp, double allreduce_s, double host_overhead_s);
  // One decode step of `batch` active sequences whose KV caches hold `sum_context` tokens in all: at most one
  // activity per class (normalization, gemm, attention, elementwise, reduction, copy, other, communication),
  // at the top clocks, the first preceded by the host overhead. Replaces `out`'s content.
  void step(int batch, double sum_context, float top_sm_mhz, float top_mem_mhz, std::vector<Kernel>& out) const;
  // Busy time of such a step at the top clocks (no host overhead).
  double busy_s(int batch, double sum_context) const;
  // Multiplies every class's time (another GPU: retargeting factors per class).
  void scale_classes(const std::array<double, kKernelClassCount>& factors);
  // KV cache per token of one sequence on one GPU (bf16 K and V of every layer held by it).
  double kv_bytes_per_token() const { return kv_bytes_per_token_; }
  double weight_bytes() const { return weight_bytes_; }

 private:
  struct Curve {
    std::vector<double> time_s, fill;
    std::array<std::vector<double>, kRates> rates;  // per batch, as DecodeProfile::ClassWork
    std::vector<double> ramp;                  // per batch, as DecodeProfile::ClassWork
    TensorPrecision precision = TensorPrecision::none;
    bool known = false;
  };
  std::vector<double> batches_;
  std::array<Curve, kKernelClassCount> curves_;  // layers + head + rest, attention excluded
  double attn_fixed_s_ = 0, attn_per_token_s_ = 0, attn_fill_ = 1;
  double comm_s_ = 0, host_s_ = 0, kv_bytes_per_token_ = 0, weight_bytes_ = 0;
};

// Replays `ks` as fewer activities: consecutive kernels gather into spans of at least `span_s` of work at the
// top clocks, and each span becomes one activity per kernel class present (in the order the classes first
// appear) with the class's summed time at the top clocks (as `model` predicts: bind it to the names `ks`
// refer to) and its time-weighted SM fill; the span's host gaps precede its first activity. Kernels that
// stand for a collective call stay as they are. Time and energy at any constant clocks are unchanged when
// `model` has no per-kernel time shares for these kernels (class coefficients apply to the result).
std::vector<Kernel> coalesce_by_class(const std::vector<Kernel>& ks, const GpuModel& model, double span_s,
                                      const std::string& phase);

struct TrainingPrograms {
  std::vector<Kernel> prefill_one;          // forward pass of one prompt
  std::vector<Kernel> reference_forward;    // one micro-batch, no backward (reference log-probs)
  std::vector<Kernel> forward, backward;    // one micro-batch
  std::vector<Kernel> optimizer;            // the 1/DP shard (distributed optimizer)
  double gradient_bytes = 0;                // per GPU (fp32, reduce-scattered)
  double param_bytes = 0;                   // per GPU (bf16, all-gathered)
  double weight_bytes = 0;                  // bf16 weights per GPU (TP shard)
};

struct TrainingShape {
  TransformerSpec model;
  int tp = 1, dp = 1;
  int prompt_tokens = 512, sequence_tokens = 1536, micro_batch = 4;
  double coalesce_span_s = 0.002;
};
// `tpl` from the recorded training layer (extract_layer_template); `recorded_on` is the GPU model of that
// recording bound to its names (normalises kernels to the top clocks).
TrainingPrograms build_training_programs(const LayerTemplate& tpl, const GpuModel& recorded_on, const TrainingShape& shape,
                                         const std::string& source);

// Response lengths of a step's sequences: lognormal around `median` with log-sd `sigma`, clipped to
// [1, max_tokens], drawn from `rng` (the project's Box-Muller, same on every standard library).
std::vector<int> draw_response_lengths(std::size_t n, double median, double sigma, int max_tokens, std::mt19937_64& rng);

// One post-training job: GRPO steps on tp x dp GPUs (a TP group is simulated as one GPU: its GPUs run the
// same stream), or, with generation off, a training job of the same shape (steps of training only).
struct GrpoJobSpec {
  std::string name = "grpo";
  std::string json_path;  // where a scenario file holds it ("control.jobs[0]", "fleet.mix[2].job"), for error messages
  std::string model = "qwen2.5-7b";
  int tp = 1, dp = 1;
  bool generation = true;
  int prompts_per_step = 128;                 // P, over the whole job
  int group_size = 8, group_size_min = 1, group_size_max = 16;        // G (knob)
  int concurrency = 64, concurrency_min = 8, concurrency_max = 256;   // C per DP rank (knob)
  int prompt_tokens = 512, max_response_tokens = 1024;  // a training job: prompt_tokens is the sequence length
  double response_median_tokens = 300, response_sigma = 0.7;          // lognormal response lengths
  int train_micro_batch = 4;                  // sequences per micro-batch, padded to prompt + max response
  bool reference_forward = true;              // the reference model's log-probs (GRPO's KL term)
  double decode_host_overhead_s = 0.002;      // a generation engine's host time per decode step [estimate]
  double decode_allreduce_s = 15e-6;          // one TP all-reduce of a decode step (TP > 1) [estimate]
  double step_host_s = 1.0;                   // per step: reward scoring, weight sync to the generator [estimate]
  double start_offset_s = 0;                  // the job's GPUs idle this long before its first step
  double start_offset_spread_s = 0;           // ... plus a uniform draw in [0, spread) from the session's seed
  double coalesce_span_s = 0.002;
  std::uint64_t seed = 0;
  int gpus() const { return tp * dp; }
  int sequences_per_step(int group) const { return prompts_per_step * group; }
  int sequence_tokens() const { return prompt_tokens + (generation ? max_response_tokens : 0); }
};

struct PreparedGrpoJob {
  GrpoJobSpec spec;
  TransformerSpec shape;
  DecodeStepModel decode;
  TrainingPrograms training;
  float top_sm_mhz = 0, top_mem_mhz = 0;
};

// Builds a job's programs for `target` (kernels retargeted from the H200 recordings when it is another GPU).
// The recordings are loaded once per process. Errors name `source` and the job's field (`field_prefix`.key).
PreparedGrpoJob prepare_grpo_job(const GrpoJobSpec& spec, const GpuModel& target, const std::string& source,
                                 const std::string& field_prefix);

}  // namespace dvfs
