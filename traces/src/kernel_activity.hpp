#pragma once
// What each kernel of a Kineto trace does, estimated from the operator that launched it: PyTorch's profiler
// with record_shapes=True writes every operator's `Input Dims`, `Input type` and `Concrete Inputs`, and each
// kernel carries the `External id` of its (innermost) operator. From those:
//   - GEMMs (mm, addmm, bmm, baddbmm, _scaled_mm): 2 M N K FLOPs on tensor cores (bf16/fp16, fp8, or tf32
//     when the kernel name says so) or CUDA cores (plain fp32);
//   - convolutions (cudnn_convolution, convolution_backward): 2 N K Ho Wo C/g R S FLOPs per pass; transposed ones
//     (cudnn_convolution_transpose, transposed = True) 2 N C_in H W C_out/g R S, from the input's side (also where
//     cuDNN chose an FFT or Winograd algorithm, whose own arithmetic differs: the count stands in);
//   - attention (flash / efficient / cuDNN SDPA forward and backward): 4 B H Sq Sk D FLOPs forward, half when
//     causal, 2.5x that backward;
//   - everything else: bytes read (the tensor inputs) and written (an output the size of the largest input;
//     the first input for in-place ops; nothing for reductions), and elementwise operations = output elements
//     x an estimated per-element instruction count of the operator (kAluIntensity in the .cpp, [estimate]).
// An operator's work is shared among its kernels in proportion to their durations, so every kernel of one
// operator gets the same rates. Operators whose inputs are tensor lists (foreach and fused optimizers) have no
// sizes in the trace: their multi_tensor_apply kernels are sized from the launch instead (blocks x ATen's chunk
// of 65536 elements, lists and element type from the functor in the kernel's name: WorkSource::launch_shape).
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dvfs {

// The largest tensor size or operator argument taken from a trace (2^31); larger ones are garbage, and the
// integer arithmetic on them stays far from overflow.
constexpr std::int64_t kMaxOperandSize = std::int64_t{1} << 31;

// Bytes per element of a type name as the profiler writes it (`Input type`: "float", "c10::BFloat16"); 0 = not a
// tensor type.
int element_bytes(const std::string& type);

struct OperatorCall {
  std::string name;                               // e.g. "aten::mm"
  std::vector<std::vector<std::int64_t>> dims;    // per input; empty for non-tensors
  std::vector<std::string> types;                 // per input, e.g. "c10::BFloat16", "float", "Scalar"
  std::vector<std::string> concrete;              // per input: scalar values as text ("[2, 2]", "True", "0.")
  // The element shapes of a tensor-list input whose sizes the profiler wrote as a nested list (aten::cat's
  // `[[[4, 16, 275, 64], [4, 16, 1, 64]], []]`); that input's `dims` entry is empty. One such list at most.
  std::vector<std::vector<std::int64_t>> list_dims;
  // Per input, the elements an expanded view stores (a stride 0 along a dimension of size > 1, x.expand(...)), -1
  // for an input that is not one; empty when no input is one or the trace wrote no `Input Strides`. Such an operand
  // is read at its stored elements (split counting_fixes).
  std::vector<double> stored_elements;
};

// Notes input `input` of `op` as an expanded view when `strides` (its `Input Strides` entry, one per dimension) hold a
// 0 along a dimension of size > 1; strides of another rank are ignored.
void note_expanded_operand(OperatorCall& op, std::size_t input, const std::vector<std::int64_t>& strides);

// Where an operator event (one with `Input Dims` and an External id) ran on the host: its thread and span.
struct OperatorSpan {
  double t0_us, t1_us;
  long tid;  // -1 when the event's tid is no integer
  long external_id;
  std::int64_t parent = -1;  // the span it nests in on its thread (finish_spans), -1: none
};

// The cpu_op events of a trace that carry input shapes, by External id.
class OperatorIndex {
 public:
  // Keeps a cpu_op event's shapes (its args object); events without `Input Dims` are skipped. Malformed
  // shape fields lose only that operator (its kernels fall back to the class prior).
  void add(const std::string& name, const Json& args);
  // The same for an operator whose args were read already (the streaming reader): `op` holds its name, every
  // `Input Dims` entry (each within kMaxOperandSize), `Input type` and `Concrete Inputs`.
  void add_call(long external_id, OperatorCall op);
  // The calls `later` kept, each replacing one of the same External id here (as if added after this index's).
  void merge(OperatorIndex&& later);
  const OperatorCall* find(long external_id) const;
  std::size_t size() const { return ops_.size(); }

  // Operator spans, for kernels whose External id names no operator (traces that write the launch's correlation id
  // there): the operator that launched such a kernel is the innermost one around its launch on the launching thread.
  void add_span(const OperatorSpan& s) { spans_.push_back(s), spans_sorted_ = false; }
  void finish_spans();  // after the last add_span, before operator_around
  // The External id of the innermost span on thread `tid` holding host time `ts_us`, or -1 when none does (or the
  // thread is unknown: tid -1).
  long operator_around(long tid, double ts_us) const;
  std::size_t span_count() const { return spans_.size(); }

 private:
  std::unordered_map<long, OperatorCall> ops_;
  std::vector<OperatorSpan> spans_;
  bool spans_sorted_ = true;
};

struct OperatorWork {
  double tensor_flops = 0;
  TensorPrecision precision = TensorPrecision::none;
  double fma_flops = 0;   // CUDA-core fp32 GEMM/convolution arithmetic
  double alu_ops = 0;     // elementwise operations
  double bytes = 0;       // read + written
  double filled = 0;      // of which written with one repeated value (fill_, zero_)
  // Operand loads of a depthwise convolution's direct kernel on CUDA cores: one per multiply-add, counted as ALU
  // operations of its matrix kernels [estimate: a depthwise filter reuses no input across output channels, so
  // nothing amortises the loads as a GEMM's register tiles do]
  double direct_loads = 0;
};

// The work of one operator call, or nullopt when its inputs say nothing (tensor lists, no tensors).
// `kernel_names`: the names of the kernels it launched (the tf32 tell).
std::optional<OperatorWork> operator_work(const OperatorCall& op, const std::vector<const std::string*>& kernel_names);

// One device activity as the importer read it.
struct ActivityRef {
  long external_id = -1;
  double duration_us = 0;
  ActivityKind kind = ActivityKind::kernel;
  const std::string* name = nullptr;
  std::uint64_t bytes = 0;  // memcpy / memset size
  std::uint64_t blocks = 0;  // a kernel's grid size (x y z), 0 when not recorded
};

struct KernelRates {
  float tensor_tflops = 0, fma_tflops = 0, alu_tops = 0, memory_tbps = 0, memory_fill_tbps = 0, unvectorised_tbps = 0;
  TensorPrecision precision = TensorPrecision::none;
  WorkSource source = WorkSource::unknown;
  TensorIssue tensor_issue = TensorIssue::warpgroup;
};

// How a tensor-core kernel issues its MMAs, from its name: mma.sync for SM80-style kernels (CUTLASS 2.x `s16816` /
// `s1688` tensorop, cuDNN / cuBLAS `sm80_` / `ampere_` kernels, FlashAttention-2's `pytorch_flash::`), warpgroup MMA
// for the rest (a name saying sm90 / nvjet / wgmma wins).
TensorIssue tensor_issue_of(const std::string& kernel_name);

// Rates of every activity (same order as `acts`).
std::vector<KernelRates> estimate_kernel_rates(const std::vector<ActivityRef>& acts, const OperatorIndex& ops);

// Copies the rates into the kernel's fields.
void apply_rates(const KernelRates& r, Kernel& k);

// Sizes every ATen elementwise kernel without work (no operator shapes: record_shapes off, CUDA-graph replays) from
// its launch: elements = grid blocks x block threads x elements per thread (8 for vectorized_elementwise_kernel at any
// vector width [measured, torch 2.11: split elementwise_launch_sizing]; unrolled_elementwise_kernel and
// elementwise_kernel<nt, vt> name theirs), bytes from the operands and element types the name gives, operations from
// the operator it names. Marks them WorkSource::launch_elementwise, which only a model whose class_prior_regime
// prices them below the cap reads (split shapeless_sized_regime); run by the Kineto importer after the operator-based
// estimate. Returns how many kernels it sized.
std::size_t size_elementwise_from_launch(Workload& wl);

// The workload as a trace recorded without operator shapes would import (record_shapes off): every kernel whose work
// came from its operator's shapes loses it (class prior: WorkSource::unknown, no rates); memsets and copy-engine
// copies keep their bytes and multi_tensor_apply kernels their launch sizing, which such a trace still has, and ATen
// elementwise kernels are sized from their launch (size_elementwise_from_launch), as such a trace imports.
// Returns how many kernels lost their work (split shapes_withheld: validate --models reports the error it costs).
std::size_t withhold_operator_work(Workload& wl);

}  // namespace dvfs
