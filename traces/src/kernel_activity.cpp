#include "traces/src/kernel_activity.hpp"

#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <initializer_list>
#include <numeric>
#include <regex>
#include <string_view>

namespace dvfs {

namespace {

// PyTorch's C++ element type names as the profiler writes them (`Input type`), with their bytes per element.
constexpr std::pair<const char*, int> kElementTypes[] = {
    {"c10::BFloat16", 2}, {"c10::Half", 2}, {"float", 4}, {"double", 8}, {"long int", 8}, {"long", 8}, {"int", 4},
    {"bool", 1}, {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1}, {"c10::Float8_e4m3fnuz", 1},
    {"c10::Float8_e5m2fnuz", 1}, {"unsigned char", 1}, {"signed char", 1}, {"short", 2},
    {"c10::complex<float>", 8}, {"c10::complex<double>", 16}, {"c10::complex<c10::Half>", 4}};

// The unsigned integer at `at` in `s` (0 when none).
double integer_at(const std::string& s, std::size_t at) {
  double v = 0;
  for (; at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])) && v < 1e9; ++at) v = 10 * v + (s[at] - '0');
  return v;
}

// Estimated instructions per output element of elementwise operators beyond one load/operate/store
// [estimate: counted from the operators' math (erf, sin and tanh are polynomial/range-reduction code
// in CUDA's math library; norms and softmaxes do reductions and a rescale); not measured]. Unlisted: 1.
double alu_intensity(const std::string& base) {
  static const std::unordered_map<std::string, double> table = {
      {"gelu", 20}, {"gelu_backward", 25}, {"silu", 8}, {"silu_backward", 12}, {"sigmoid", 8},
      {"sigmoid_backward", 3}, {"tanh", 12}, {"tanh_backward", 3}, {"exp", 6}, {"log", 8}, {"sin", 16},
      {"cos", 16}, {"pow", 8}, {"sqrt", 4}, {"rsqrt", 4}, {"div", 4}, {"native_layer_norm", 16},
      {"native_layer_norm_backward", 16}, {"_fused_rms_norm", 5}, {"_fused_rms_norm_backward", 8},
      {"_softmax", 8}, {"_log_softmax", 8}, {"_log_softmax_backward_data", 6}, {"_softmax_backward_data", 4},
      {"addcmul", 2}, {"addcdiv", 4}, {"lerp", 3}, {"fused_optimizer", 12}, {"cumsum", 2}, {"erf", 12}, {"native_dropout", 6}};
  auto it = table.find(base);
  return it == table.end() ? 1.0 : it->second;
}

bool is_reduction(const std::string& base) {
  static const char* const names[] = {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "norm",
                                      "linalg_vector_norm", "nll_loss_forward", "var", "std", "var_mean",
                                      "logsumexp", "prod", "all", "any"};
  return std::any_of(std::begin(names), std::end(names), [&](const char* n) { return base == n; });
}


double numel(const std::vector<std::int64_t>& d) {
  return std::accumulate(d.begin(), d.end(), 1.0, [](double a, std::int64_t x) { return a * static_cast<double>(x); });
}

std::vector<std::int64_t> int_list(const std::string& s) {
  std::vector<std::int64_t> out;
  std::int64_t v = 0;
  bool in = false, neg = false;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      v = std::min<std::int64_t>(v * 10 + (c - '0'), kMaxOperandSize);  // saturates: no overflow in the arithmetic below
      in = true;
    } else {
      if (in) out.push_back(neg ? -v : v);
      neg = c == '-';
      v = 0;
      in = false;
    }
  }
  if (in) out.push_back(neg ? -v : v);
  return out;
}

std::string concrete_at(const OperatorCall& op, std::size_t i) { return i < op.concrete.size() ? op.concrete[i] : ""; }

std::vector<std::int64_t> list_or(const OperatorCall& op, std::size_t i, std::size_t n, std::int64_t fallback) {
  std::vector<std::int64_t> v = int_list(concrete_at(op, i));
  if (v.empty()) v.assign(n, fallback);
  while (v.size() < n) v.push_back(v.back());
  return v;
}

std::string lowercase(const std::string* name) {
  std::string l = name ? *name : std::string();
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return l;
}

bool name_has_any(const std::string* name, std::initializer_list<const char*> needles) {
  if (!name) return false;
  const std::string l = lowercase(name);
  for (const char* n : needles)
    if (l.find(n) != std::string::npos) return true;
  return false;
}

bool any_name_has(const std::vector<const std::string*>& names, const char* needle) {
  return std::any_of(names.begin(), names.end(), [&](const std::string* n) { return name_has_any(n, {needle}); });
}

// Library kernel names that do a GEMM, convolution or attention's arithmetic (cuBLAS, cuBLASLt nvjet, CUTLASS,
// cuDNN implicit GEMM / FFT / Winograd, flash attention).
bool is_matrix_kernel(const std::string* name) {
  if (name_has_any(name, {"gemm", "mma", "nvjet", "cutlass", "fprop", "dgrad", "wgrad", "fft", "winograd", "flash", "fmha",
                          "sdpa", "attention", "s16816", "s1688",
                          // Tensile / hipBLASLt GEMMs (ROCm): `Cijk_Ailk_Bljk_...`
                          "cijk_",
                          // cuBLAS / cuSOLVER's triangular and factorisation kernels (split linalg_work)
                          "trsm", "trsv", "trmm", "potrf", "getrf", "getrs", "syrk", "herk"}))
    return true;
  // "conv" names convolutions, "convert" does not (cuDNN attention's `convert_dq_to_16bits` is a dtype helper)
  const std::string l = lowercase(name);
  for (std::size_t p = l.find("conv"); p != std::string::npos; p = l.find("conv", p + 4))
    if (l.compare(p, 7, "convert") != 0) return true;
  return false;
}

// cuDNN's layout conversions around a convolution (NCHW <-> NHWC): each reads one of the operator's tensors and
// writes it back in the other layout.
bool is_layout_conversion(const std::string* name) { return name_has_any(name, {"nchwtonhwc", "nhwctonchw"}); }

// ATen's TensorIterator loop for operands it cannot vectorise (broadcasts, strided or transposed views, mixed
// layouts: scalar loads and stores, an offset per operand and element; split unvectorised_bytes). Its vectorised and
// unrolled siblings (`vectorized_elementwise_kernel`, `unrolled_elementwise_kernel`) and the indexing kernels
// (`index_elementwise_kernel`) are other names.
bool is_unvectorised_elementwise(const std::string* name) {
  return name && name->find("at::native::elementwise_kernel<") != std::string::npos;
}

// Names that say tensor cores: (x/w/h)mma instructions, CUTLASS tensorop, cuBLASLt's nvjet, flash attention.
// AMD matrix cores (a ROCm trace): Tensile / hipBLASLt name the matrix instruction a kernel issues (`..._MI16x16x1_...`,
// MFMA), Composable Kernel its `xdl` / `xdlops` or `wmma` pipeline.
bool names_amd_matrix_cores(const std::string* name) {
  if (!name) return false;
  if (name_has_any(name, {"xdl", "wmma", "mfma"})) return true;
  const std::string l = lowercase(name);
  const auto digits = [&](std::size_t p) {
    std::size_t e = p;
    while (e < l.size() && std::isdigit(static_cast<unsigned char>(l[e]))) ++e;
    return e;
  };
  for (std::size_t p = l.find("_mi"); p != std::string::npos; p = l.find("_mi", p + 3)) {
    const std::size_t m = digits(p + 3);
    if (m > p + 3 && m < l.size() && l[m] == 'x' && digits(m + 1) > m + 1) return true;  // _mi16x16
  }
  return false;
}

bool uses_tensor_cores(const std::string* name) {
  return name_has_any(name, {"mma", "tensorop", "nvjet", "s16816", "s1688", "flash", "fmha", "sdpa", "tf32"}) ||
         names_amd_matrix_cores(name);
}

// Above any GPU's CUDA-core (vector) rate: H100 SXM's fp32 FMA peak is 67 TFLOP/s, MI300X's fp32 vector 163.4 (the
// vendors' datasheets). A matrix kernel of a precision matrix units run (TF32, bf16 / fp16, fp8) counted faster than
// this ran on them, whatever its name says (a Triton kernel, a library's new naming).
constexpr double kCudaCoreCeilingTflops = 200.0;

}  // namespace

int element_bytes(const std::string& t) {
  static const std::unordered_map<std::string, int> sizes(std::begin(kElementTypes), std::end(kElementTypes));
  auto it = sizes.find(t);
  return it == sizes.end() ? 0 : it->second;
}

TensorIssue tensor_issue_of(const std::string& kernel_name) {
  if (name_has_any(&kernel_name, {"sm90", "sm100", "nvjet", "wgmma"})) return TensorIssue::warpgroup;
  return name_has_any(&kernel_name, {"s16816", "s1688", "i16832", "i8816", "sm80", "sm86", "sm75", "ampere", "turing", "volta", "pytorch_flash",
                                     "flash_fwd", "flash_bwd"})
             ? TensorIssue::warp
             : TensorIssue::warpgroup;
}

namespace {

struct Tensor {
  const std::vector<std::int64_t>* dims;
  int bytes;      // per element
  double stored;  // elements in memory: numel(*dims), fewer for an expanded view (stride 0)
};

// The elements of one row of a table (its last dimension): what a gather of one index moves.
double row_length(const Tensor& table) { return table.dims->empty() ? 1.0 : static_cast<double>(table.dims->back()); }

std::vector<Tensor> tensor_inputs(const OperatorCall& op) {
  std::vector<Tensor> out;
  for (std::size_t i = 0; i < op.dims.size() && i < op.types.size(); ++i)
    if (int b = element_bytes(op.types[i])) {
      const bool expanded = i < op.stored_elements.size() && op.stored_elements[i] >= 0;
      out.push_back({&op.dims[i], b, expanded ? op.stored_elements[i] : numel(op.dims[i])});
    }
  return out;
}

TensorPrecision precision_of(int element_bytes_, bool tf32, bool fp64) {
  if (element_bytes_ == 1) return TensorPrecision::fp8;
  if (element_bytes_ == 2) return TensorPrecision::bf16;
  if (fp64) return TensorPrecision::fp64;  // on tensor cores only where a kernel's name says so (8-byte complex: none)
  // only fp32 operands run TF32: an fp64 product on CUTLASS's `tensorop_d884gemm` is fp64 (split linalg_work)
  return tf32 && element_bytes_ == 4 ? TensorPrecision::tf32 : TensorPrecision::none;
}

// fp32 operands run TF32 on tensor cores when a kernel says so: cuBLASLt names say "tf32", CUTLASS 2.x names say
// "tensorop" (`cutlass_80_tensorop_s1688gemm`; tensor cores have no fp32 path). Not "mma": cuBLAS's SIMT fp32
// kernels are named `sm80_xmma_gemm_f32f32_..._ffma`.
bool runs_tf32(const std::vector<const std::string*>& kn) { return any_name_has(kn, "tf32") || any_name_has(kn, "tensorop"); }

// Tensor-core work, or CUDA-core fp32 work when the precision is none. `fp64`: the operands are doubles.
void add_matrix_work(OperatorWork& w, double flops, int es, bool tf32, bool fp64 = false) {
  w.precision = precision_of(es, tf32, fp64);
  (w.precision == TensorPrecision::none ? w.fma_flops : w.tensor_flops) += flops;
}

std::optional<OperatorWork> gemm_work(const OperatorCall& op, const std::string& base, const std::vector<const std::string*>& kn) {
  std::size_t a = 0, b = 1;
  if (base == "addmm" || base == "baddbmm" || base == "_addmm_activation") a = 1, b = 2;
  if (op.dims.size() <= b || element_bytes(op.types[a]) == 0) return std::nullopt;
  const auto &A = op.dims[a], &B = op.dims[b];
  if (A.size() < 2 || B.size() < 2) return std::nullopt;
  const double M = static_cast<double>(A[A.size() - 2]), K = static_cast<double>(A.back()), N = static_cast<double>(B.back());
  const double batch = numel(std::vector<std::int64_t>(A.begin(), A.end() - 2));
  const int es = element_bytes(op.types[a]);
  OperatorWork w;
  add_matrix_work(w, 2.0 * batch * M * N * K, es, runs_tf32(kn), op.types[a] == "double");
  // fp8 products write bf16/fp16; torch._int_mm's int8 product writes int32
  w.bytes = es * (numel(A) + numel(B)) + (base == "_int_mm" ? 4 : es == 1 ? 2 : es) * batch * M * N;
  if (a == 1 && element_bytes(op.types[0])) w.bytes += element_bytes(op.types[0]) * numel(op.dims[0]);
  return w;
}

// The FFT tile size T of cuDNN's FFT convolution kernels (`fft2d_r2c_32x32`), 0 when none of the kernels is one.
int fft_tile(const std::vector<const std::string*>& kn) {
  for (const std::string* n : kn) {
    const std::size_t p = n ? n->find("fft2d_r2c_") : std::string::npos;
    if (p == std::string::npos) continue;
    int t = 0;
    for (std::size_t i = p + 10; i < n->size() && std::isdigit(static_cast<unsigned char>((*n)[i])) && t < 4096; ++i) t = 10 * t + ((*n)[i] - '0');
    if (t >= 4) return t;
  }
  return 0;
}

// A 2-D convolution done by FFT (overlap-save tiles of T x T, each giving (T - R + 1) x (T - S + 1) outputs): the
// complex products summed over input channels at T (T/2 + 1) frequencies per tile (8 real FLOPs each) and the real
// 2-D FFTs of input tiles, filters and output tiles (2.5 T^2 log2 T^2 each) [estimate: textbook operation counts;
// the direct count would be 2-3x more arithmetic than the kernels do].
double fft_convolution_flops(double batch, double in_ch, double out_ch, const std::int64_t out_hw[2], const std::int64_t rs[2], int t) {
  double tiles = 1;
  for (int d = 0; d < 2; ++d) {
    const double per_tile = static_cast<double>(std::max<std::int64_t>(1, t - rs[d] + 1));
    tiles *= std::ceil(static_cast<double>(out_hw[d]) / per_tile);
  }
  const double freqs = t * (t / 2.0 + 1.0), fft = 2.5 * t * t * std::log2(static_cast<double>(t) * t);
  return 8.0 * batch * out_ch * in_ch * tiles * freqs + fft * (batch * in_ch * tiles + out_ch * in_ch + batch * out_ch * tiles);
}

std::optional<OperatorWork> convolution_work(const OperatorCall& op, const std::string& base, const std::vector<const std::string*>& kn) {
  OperatorWork w;
  const bool backward = base == "convolution_backward";
  // A transposed convolution's weight is [C_in, C_out/g, taps...]: each input element meets C_out/g x taps weights
  // (split transposed_convolutions). cudnn_convolution_transpose is one; the generic entry points say so in an argument.
  // (cudnn_convolution's seventh argument is `benchmark`, not `transposed`: only the generic ones are read.)
  const bool cudnn_transpose = base == "cudnn_convolution_transpose";
  const bool generic = base == "convolution" || base == "_convolution";
  const bool transposed = cudnn_transpose || (generic && concrete_at(op, 6) == "True") || (backward && concrete_at(op, 7) == "True");
  const std::size_t x_i = backward ? 1 : 0, w_i = backward ? 2 : 1;
  if (op.dims.size() <= w_i) return std::nullopt;
  const auto &x = op.dims[x_i], &wt = op.dims[w_i];
  const int es = element_bytes(op.types[x_i]);
  if (es == 0 || x.size() < 3 || wt.size() != x.size()) return std::nullopt;
  const std::size_t spatial = x.size() - 2;
  // cuDNN's tensor-core kernels need the channels in multiples of 8: for fewer (an RGB stem's 3) it pads the input
  // first (nhwcAddPaddingKernel) and the convolution does the padded channels' arithmetic.
  const bool padded = any_name_has(kn, "addpadding");
  const double channels = padded ? 8.0 * std::ceil(static_cast<double>(wt[1]) / 8.0) : static_cast<double>(wt[1]);
  const double per_output = channels * numel(std::vector<std::int64_t>(wt.begin() + 2, wt.end()));
  double out_numel = 0, passes = 1, fft_flops = 0;
  if (backward) {
    out_numel = numel(op.dims[0]);  // grad_output
    const std::string mask = concrete_at(op, 10);
    passes = mask.empty() ? 2 : 0;
    for (std::size_t p = 0, k = 0; k < 2 && (p = mask.find_first_of("TF", p)) != std::string::npos; ++k, ++p)
      passes += mask[p] == 'T';
  } else if (transposed) {
    // cudnn_convolution_transpose(input, weight, padding, output_padding, stride, dilation, groups, ...);
    // convolution/_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
    const auto pad = list_or(op, cudnn_transpose ? 2 : 4, spatial, 0), out_pad = list_or(op, cudnn_transpose ? 3 : 7, spatial, 0);
    const auto st = list_or(op, cudnn_transpose ? 4 : 3, spatial, 1), dil = list_or(op, 5, spatial, 1);
    const std::int64_t groups = std::max<std::int64_t>(1, list_or(op, cudnn_transpose ? 6 : 8, 1, 1).front());
    out_numel = static_cast<double>(x[0]) * static_cast<double>(wt[1]) * static_cast<double>(groups);
    // in doubles: two products of saturated (2^31) operands and a negative padding's 2^32 would overflow an int64
    for (std::size_t s = 0; s < spatial; ++s)
      out_numel *= std::max(1.0, static_cast<double>(x[2 + s] - 1) * static_cast<double>(st[s]) - 2.0 * static_cast<double>(pad[s]) +
                                     static_cast<double>(dil[s]) * static_cast<double>(wt[2 + s] - 1) + static_cast<double>(out_pad[s]) + 1.0);
  } else {
    // cudnn_convolution(input, weight, padding, stride, dilation, groups, ...);
    // convolution/_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
    const bool cudnn = base == "cudnn_convolution";
    const auto pad = list_or(op, cudnn ? 2 : 4, spatial, 0), st = list_or(op, 3, spatial, 1);
    const auto dil = list_or(op, cudnn ? 4 : 5, spatial, 1);
    out_numel = static_cast<double>(x[0]) * static_cast<double>(wt[0]);
    std::int64_t out_hw[2] = {1, 1};
    for (std::size_t s = 0; s < spatial; ++s) {
      const std::int64_t o = (x[2 + s] + 2 * pad[s] - dil[s] * (wt[2 + s] - 1) - 1) / std::max<std::int64_t>(1, st[s]) + 1;
      out_numel *= static_cast<double>(std::max<std::int64_t>(o, 1));
      if (s < 2) out_hw[s] = std::max<std::int64_t>(o, 1);
    }
    const int t = fft_tile(kn);
    if (t > 0 && spatial == 2 && st[0] == 1 && st[1] == 1) {
      const std::int64_t rs[2] = {wt[2], wt[3]};
      fft_flops = fft_convolution_flops(static_cast<double>(x[0]), channels, static_cast<double>(wt[0]), out_hw, rs, t);
    }
  }
  // Winograd algorithms do other arithmetic than the direct convolution's count: the count stands in. A transposed
  // convolution's products are counted from its input's side (the smaller one).
  const double products = (transposed ? numel(x) : out_numel) * per_output * passes;
  add_matrix_work(w, fft_flops > 0 ? fft_flops : 2.0 * products, es, runs_tf32(kn), op.types[x_i] == "double");
  if (wt[1] == 1 && x[1] > 1) w.direct_loads = products;  // depthwise: one input channel per filter
  w.bytes = es * (numel(x) + numel(wt) + out_numel) + (backward ? es * (numel(x) + numel(wt)) : 0.0);
  return w;
}

// Causal masking, read from the concrete inputs: the value after the dropout probability (the first
// floating-point scalar) is is_causal (or, for the efficient kernel, a mask type: 1 and 2 are causal).
bool attention_is_causal(const OperatorCall& op) {
  static const std::regex float_text(R"(-?\d*\.\d*(e-?\d+)?|-?\d+e-?\d+)");
  bool after_dropout = false;
  for (const std::string& v : op.concrete) {
    if (!after_dropout) {
      after_dropout = !v.empty() && std::regex_match(v, float_text);
      continue;
    }
    if (!v.empty()) return v == "True" || v == "1" || v == "2";
  }
  return false;
}

std::optional<OperatorWork> attention_work(const OperatorCall& op, const std::string& base) {
  std::vector<Tensor> four_d;
  for (const Tensor& t : tensor_inputs(op))
    if (t.dims->size() == 4) four_d.push_back(t);
  const bool backward = base.find("backward") != std::string::npos;
  const std::size_t q_i = backward ? 1 : 0;
  if (four_d.size() < q_i + 2) return std::nullopt;
  const auto &q = *four_d[q_i].dims, &k = *four_d[q_i + 1].dims;
  // flash/efficient kernels take [batch, seq, heads, dim]; the SDPA entry points [batch, heads, seq, dim]
  const bool seq_first = base.rfind("_flash_attention", 0) == 0 || base.rfind("_efficient_attention", 0) == 0;
  const double sq = static_cast<double>(seq_first ? q[1] : q[2]), sk = static_cast<double>(seq_first ? k[1] : k[2]);
  const double causal = attention_is_causal(op) && sq == sk ? 0.5 : 1.0;
  OperatorWork w;
  const int es = four_d[q_i].bytes;
  w.precision = es == 1 ? TensorPrecision::fp8 : es == 2 ? TensorPrecision::bf16 : TensorPrecision::tf32;
  w.tensor_flops = 4.0 * numel(q) * sk * causal * (backward ? 2.5 : 1.0);
  double in_bytes = 0;
  for (const Tensor& t : four_d) in_bytes += t.bytes * numel(*t.dims);
  w.bytes = in_bytes + es * numel(q) * (backward ? 3 : 1);
  return w;
}

// ATen's elementwise kernels name their operand count, outputs included: `std::array<char*, N>`; 0 when the
// operator's kernels do not (one kernel per operator, as every elementwise operator launches).
std::size_t elementwise_operands(const std::vector<const std::string*>& kernel_names) {
  if (kernel_names.size() != 1) return 0;
  static const std::string key = "std::array<char*, ";
  const std::string& name = *kernel_names.front();
  const std::size_t at = name.find(key);
  if (at == std::string::npos) return 0;
  return static_cast<std::size_t>(integer_at(name, at + key.size()));
}

// The elements of the shape tensors broadcast to under NumPy's rules (aligned from the right, each dimension equal or
// 1), or 0 when they do not broadcast (split counting_fixes: an outer sum writes the broadcast shape).
double broadcast_elements(const std::vector<Tensor>& ts) {
  std::size_t rank = 0;
  for (const Tensor& t : ts) rank = std::max(rank, t.dims->size());
  double n = 1;
  for (std::size_t i = 0; i < rank; ++i) {  // the i-th dimension from the right
    std::int64_t d = 1;
    for (const Tensor& t : ts) {
      if (i >= t.dims->size()) continue;
      const std::int64_t e = (*t.dims)[t.dims->size() - 1 - i];
      if (e == d || e == 1) continue;
      if (d != 1) return 0;
      d = e;
    }
    n *= static_cast<double>(d);
  }
  return n;
}

std::optional<OperatorWork> streaming_work(const OperatorCall& op, const std::string& base, const std::vector<const std::string*>& kernel_names) {
  const std::vector<Tensor> ts = tensor_inputs(op);
  if (ts.empty()) return std::nullopt;
  std::vector<double> sizes, elems;  // bytes in memory (an expanded view's stored ones), logical elements
  for (const Tensor& t : ts) {
    elems.push_back(numel(*t.dims));
    sizes.push_back(t.stored * t.bytes);
  }
  const double all = std::accumulate(sizes.begin(), sizes.end(), 0.0);
  const std::size_t largest = static_cast<std::size_t>(std::max_element(elems.begin(), elems.end()) - elems.begin());
  double read = all, written = 0, filled = 0, out_elems = elems[largest];
  const bool in_place = !base.empty() && base.back() == '_' && base.front() != '_';
  auto backward_of = [](const std::string& b) { return b.size() > 9 && ends_with(b, "_backward"); };
  if (base == "fill_" || base == "zero_") {
    read = 0, written = filled = sizes[0], out_elems = elems[0];
  } else if (base == "copy_") {
    read = sizes.size() > 1 ? sizes[1] : sizes[0], written = sizes[0], out_elems = elems[0];
  } else if (base == "nll_loss_forward" || base == "nll_loss2d_forward" || base == "nll_loss_backward" ||
             base == "nll_loss2d_backward") {
    // one element of the [N, C] log-probabilities per target, gathered (forward) or scattered into the gradient a
    // fill zeroed (backward): the classes are not streamed (counted whole, a 50k-vocabulary loss ran at 43-183 TB/s)
    const std::size_t self = largest, target = self + 1 < ts.size() ? self + 1 : self;
    out_elems = elems[target];
    read = elems[target] * (ts[self].bytes + ts[target].bytes);
    written = backward_of(base) ? elems[target] * ts[self].bytes : static_cast<double>(ts[self].bytes);
  } else if ((base == "gather" || base == "take_along_dim") && ts.size() >= 2) {
    // reads one element of self per index (self is not streamed), writes an output the index's size
    out_elems = elems[1];
    read = elems[1] * (ts[0].bytes + ts[1].bytes), written = elems[1] * ts[0].bytes;
  } else if ((base == "scatter_add_" || base == "scatter_add" || base == "index_add_" || base == "index_add") && ts.size() >= 3) {
    // adds each source element into self at its index: source and index read, the touched part of self read and
    // written; the out-of-place forms copy self first
    const double touched = elems[2] * ts[0].bytes;
    out_elems = elems[2];
    read = sizes[2] + sizes[1] + touched, written = touched;
    if (!in_place) read += sizes[0], written += sizes[0];
  } else if (base == "_embedding_bag" || base == "_embedding_bag_forward_only") {
    // (weight, indices, offsets, ...): one table row gathered per index and summed into its bag; the table is not
    // streamed (counted whole, a 1M-row table's bag kernel ran at 37 TB/s)
    if (ts.size() < 3) return std::nullopt;
    const double row = row_length(ts[0]);
    out_elems = elems[1] * row;
    read = out_elems * ts[0].bytes + sizes[1] + sizes[2], written = elems[2] * row * ts[0].bytes;
  } else if (base == "index" && ts.size() == 1) {
    // advanced indexing whose index tensors the profiler did not size (a list): how much it gathers is unknown
    return std::nullopt;
  } else if (base == "embedding" || base == "index_select" || base == "embedding_dense_backward") {
    // a gather: rows of the table, as many as there are indices
    out_elems = (ts.size() > 1 ? elems[1] : 1.0) * row_length(ts[0]);
    read = written = out_elems * ts[0].bytes;
  } else if (in_place) {
    written = sizes[0], out_elems = elems[0];
  } else if (!is_reduction(base) && ts.size() >= 2 && ts.size() == elementwise_operands(kernel_names)) {
    // as many tensors as the kernel has operands, output included: the last is the `out=` tensor the profiler
    // lists after the inputs (torch.add(a, b, out=c)); it is written, not read. (A 0-d CPU scalar, x *
    // torch.tensor(2), also passes for one, its output then counted at 1 element: split counting_fixes (a), reverted
    // by that rule's loop-level counter test)
    read = all - sizes.back(), written = sizes.back(), out_elems = elems.back();
  } else if (!is_reduction(base)) {
    // an outer sum or difference writes (and computes) the broadcast shape, larger than any input; only on ATen's
    // elementwise kernels: a normalisation's [C] parameters line up with dimension 1, not the last (counting_fixes)
    if (any_name_has(kernel_names, "elementwise_kernel")) out_elems = std::max(out_elems, broadcast_elements(ts));
    written = out_elems * ts[0].bytes;
  }
  OperatorWork w;
  w.bytes = read + written;
  w.filled = filled;
  std::string stem = base;
  if (in_place) stem.pop_back();
  w.alu_ops = out_elems * alu_intensity(stem);
  return w;
}

// cuFFT operators (aten::_fft_r2c / _fft_c2r / _fft_c2c; split rule fft_work). Arithmetic by textbook radix-2
// counts, 5 N log2 N per complex transform of N points and 2.5 N log2 N per real one [estimate: cuFFT's mixed-radix
// kernels may do fewer], on CUDA cores for fp32 data; each of the operator's cuFFT kernels is one pass over the data
// (reads the transform's input side and writes its output side once). N is the product of the transformed dims'
// lengths on the real side; c2r's last transformed dim is its real output's length (last_dim_size).
std::optional<OperatorWork> fft_work(const OperatorCall& op, const std::string& base, const std::vector<const std::string*>& kernel_names) {
  if (op.dims.empty() || op.types.empty()) return std::nullopt;
  const int in_es = element_bytes(op.types[0]);
  const std::vector<std::int64_t>& in_shape = op.dims[0];
  std::vector<std::int64_t> dims = int_list(concrete_at(op, 1));
  if (in_es == 0 || in_shape.empty() || dims.empty()) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(in_shape.size());
  for (std::int64_t& d : dims) {
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return std::nullopt;
  }
  const bool r2c = base == "_fft_r2c", c2r = base == "_fft_c2r";
  std::vector<std::int64_t> real_shape = in_shape;  // the transform's full (real-side) extent
  std::vector<std::int64_t> complex_shape = in_shape;
  if (r2c) complex_shape[dims.back()] = in_shape[dims.back()] / 2 + 1;
  if (c2r) {
    const std::vector<std::int64_t> last = int_list(concrete_at(op, 3));
    if (last.empty() || last.front() <= 0) return std::nullopt;
    real_shape[dims.back()] = last.front();
  }
  double n = 1;
  for (std::int64_t d : dims) n *= static_cast<double>(real_shape[d]);
  if (n <= 0) return std::nullopt;
  const double real_elems = numel(real_shape), complex_elems = numel(complex_shape);
  // element sizes: a complex element is two of the real type
  const int real_es = r2c ? in_es : in_es / 2, complex_es = r2c ? 2 * in_es : in_es;
  const double in_bytes = r2c ? real_elems * real_es : complex_elems * complex_es;
  const double out_bytes = r2c ? complex_elems * complex_es : c2r ? real_elems * real_es : complex_elems * complex_es;
  double passes = 0;
  for (const std::string* k : kernel_names) passes += name_has_any(k, {"fft"});
  OperatorWork w;
  w.bytes = std::max(1.0, passes) * (in_bytes + out_bytes);
  if (real_es == 4 && n > 1) w.fma_flops = real_elems / n * ((r2c || c2r) ? 2.5 : 5.0) * n * std::log2(n);
  return w;
}

// Dense factorisations and triangular solves (split linalg_work): textbook FLOP counts [estimate: the libraries'
// blocked algorithms do the same arithmetic up to lower-order terms], batch x, N the matrix order, K the right-hand
// sides: Cholesky N^3/3, LU 2N^3/3, a triangular solve N^2 K, a solve from a Cholesky or LU factor 2 N^2 K, the
// inverse from a Cholesky factor 2N^3/3. Each tensor input is read once and the result (the shape of the factored
// matrix or of B) written once. Precision as for a GEMM of the element type (fp64 on the CUDA-core FMA energy, as an
// fp64 aten::mm).
bool is_linalg(const std::string& base) {
  return base == "linalg_cholesky_ex" || base == "linalg_solve_triangular" || base == "triangular_solve" ||
         base == "_cholesky_solve_helper" || base == "cholesky_inverse" || base == "linalg_lu_factor_ex" ||
         base == "linalg_lu_solve";
}

std::optional<OperatorWork> linalg_work(const OperatorCall& op, const std::string& base, const std::vector<const std::string*>& kn) {
  // which input is the square matrix, which the right-hand sides (none: a factorisation), and where `left` is
  std::size_t a = 0, b = std::string::npos, left_at = std::string::npos;
  if (base == "linalg_solve_triangular") b = 1, left_at = 3;
  if (base == "triangular_solve" || base == "_cholesky_solve_helper") a = 1, b = 0;
  if (base == "linalg_lu_solve") b = 2, left_at = 3;
  if (op.dims.size() <= a || (b != std::string::npos && op.dims.size() <= b)) return std::nullopt;
  const std::vector<std::int64_t>& A = op.dims[a];
  const int es = element_bytes(op.types[a]);
  if (A.size() < 2 || es == 0) return std::nullopt;
  const double n = static_cast<double>(A.back());
  double batch = numel(std::vector<std::int64_t>(A.begin(), A.end() - 2)), flops = 0, out = numel(A);
  if (b == std::string::npos) {
    flops = batch * n * n * n * (base == "linalg_cholesky_ex" ? 1.0 / 3.0 : 2.0 / 3.0);
  } else {
    const std::vector<std::int64_t>& B = op.dims[b];
    if (B.size() < 2) return std::nullopt;
    const bool left = left_at == std::string::npos || concrete_at(op, left_at) != "False";
    const double k = static_cast<double>(left ? B.back() : B[B.size() - 2]);
    batch = std::max(batch, numel(std::vector<std::int64_t>(B.begin(), B.end() - 2)));
    flops = batch * n * n * k * (base == "linalg_solve_triangular" || base == "triangular_solve" ? 1.0 : 2.0);
    out = numel(B);
  }
  OperatorWork w;
  add_matrix_work(w, flops, es, runs_tf32(kn), op.types[a] == "double");
  for (std::size_t i = 0; i < op.dims.size(); ++i)
    if (const int e = element_bytes(op.types[i]); e > 0 && !op.dims[i].empty()) w.bytes += e * numel(op.dims[i]);
  w.bytes += es * out;
  return w;
}

bool is_concatenation(const std::string& op_name) {
  return op_name == "aten::cat" || op_name == "aten::_cat" || op_name == "aten::stack";
}

// torch.cat / stack: every element of the list read once and written into the output. The list's dtype is not
// in the trace (its type is "TensorList"); ATen's concatenation kernels name their element size
// (`CatArrayBatchedCopy<OpaqueType<2u>, ...>`); other kernels (a copy per input) leave the operator unpriced.
std::optional<OperatorWork> concatenation_work(const OperatorCall& op, const std::vector<const std::string*>& kernel_names) {
  static const std::string key = "OpaqueType<";
  int es = 0;
  for (const std::string* n : kernel_names) {
    const std::size_t at = n ? n->find(key) : std::string::npos;
    if (at == std::string::npos || at + key.size() >= n->size()) return std::nullopt;
    const int b = n->at(at + key.size()) - '0';
    if (b < 1 || b > 8 || (es != 0 && b != es)) return std::nullopt;
    es = b;
  }
  if (es == 0) return std::nullopt;
  double elements = 0;
  for (const auto& shape : op.list_dims) elements += numel(shape);
  OperatorWork w;
  w.bytes = 2.0 * elements * es;
  w.alu_ops = elements * alu_intensity("cat");
  return w;
}

// PyTorch's foreach and fused-optimizer kernels (multi_tensor_apply_kernel): their operators take tensor lists,
// whose sizes the profiler does not record, but each block of the launch works through one chunk of
// kMultiTensorChunk elements (ATen's kChunkSize in MultiTensorApply.cuh), and the kernel's name names the
// element type and the functor: `...Functor<float, depth, r_args_depth, res_arg_index>` reads r_args_depth
// lists and writes one; the fused optimizers' `Fused...MathFunctor<float, depth, ...>` read all `depth` lists
// (parameters, gradients, moments) and write all but the gradients. Elements = blocks x chunk, an upper bound
// where tensors end in partial chunks (small tensors); large parameter lists are dominated by full chunks.
constexpr double kMultiTensorChunk = 65536;

struct MultiTensorTraffic {
  int element_bytes = 0;
  double lists_per_element = 0;  // lists read + written
  double alu_per_element = 1;
};

std::optional<MultiTensorTraffic> multi_tensor_traffic(const std::string& name) {
  if (name.find("multi_tensor_apply_kernel") == std::string::npos) return std::nullopt;
  static const std::regex functor(R"((\w+)Functor<([\w:]+), (\d+)(?:, (\d+))?)");
  std::smatch m;
  if (!std::regex_search(name, m, functor)) return std::nullopt;
  MultiTensorTraffic t;
  t.element_bytes = element_bytes(m[2].str());
  if (t.element_bytes == 0) return std::nullopt;
  const std::string kind = m[1].str();
  const double depth = std::stod(m[3].str());
  if (kind.rfind("Fused", 0) == 0) {
    t.lists_per_element = depth + (depth - 1);
    t.alu_per_element = alu_intensity("fused_optimizer");
  } else {
    t.lists_per_element = (m[4].matched ? std::stod(m[4].str()) : depth) + 1;
    for (const char* op : {"Lerp", "Sqrt", "divides", "Exp", "Log", "Pow", "Addcdiv", "Sigmoid", "Tanh"})
      if (name.find(op) != std::string::npos) {
        std::string stem = op;
        std::transform(stem.begin(), stem.end(), stem.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        t.alu_per_element = alu_intensity(stem == "divides" ? "div" : stem);
        break;
      }
  }
  return t;
}

// Work sized from an ATen elementwise kernel's launch where the trace has no operator shapes (split
// elementwise_launch_sizing, kept only as shapeless_sized_regime uses it): elements = grid blocks x block threads x
// elements_per_thread, each moving bytes_per_element and costing alu_per_element.
struct ElementwiseTraffic {
  double elements_per_thread = 0;
  double bytes_per_element = 0;
  double alu_per_element = 1;
  bool filled = false;  // written with one repeated value (FillFunctor)
};

// The largest element type named in a piece of a kernel name (whole words only: `float` in `bfloat16_copy` is not
// one), in bytes; 0 when none. Kernel names spell int64 `long` where the profiler's type strings say `long int`.
int largest_named_type(const std::string& s) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto named = [&](const char* type) {
    const std::size_t n = std::char_traits<char>::length(type);
    for (std::size_t p = s.find(type); p != std::string::npos; p = s.find(type, p + 1))
      if ((p == 0 || (!word(s[p - 1]) && s[p - 1] != ':')) && (p + n >= s.size() || !word(s[p + n]))) return true;
    return false;
  };
  int largest = named("long") ? 8 : 0;
  for (const auto& [type, bytes] : kElementTypes)
    if (bytes > largest && named(type)) largest = bytes;
  return largest;
}

// The operator an ATen elementwise kernel computes, as alu_intensity's stem, from the functor or kernel function in
// its name (backward forms first); "" when the name says none the table lists.
std::string elementwise_stem(const std::string& name) {
  static const std::pair<const char*, const char*> needles[] = {
      {"gelubackward", "gelu_backward"}, {"gelucudakernelimpl", "gelu"}, {"silu_backward", "silu_backward"}, {"silu_kernel", "silu"},
      {"sigmoid_backward", "sigmoid_backward"}, {"sigmoid_kernel", "sigmoid"}, {"tanh_backward", "tanh_backward"},
      {"tanh_kernel", "tanh"}, {"exp_kernel", "exp"}, {"log_kernel", "log"}, {"sin_kernel", "sin"}, {"cos_kernel", "cos"},
      {"pow_tensor", "pow"}, {"pow_kernel", "pow"}, {"rsqrt_kernel", "rsqrt"}, {"sqrt_kernel", "sqrt"}, {"divfunctor", "div"},
      {"div_true", "div"}, {"div_floor", "div"}, {"div_trunc", "div"}, {"erf_kernel", "erf"}, {"addcmul", "addcmul"},
      {"addcdiv", "addcdiv"}, {"lerp", "lerp"}, {"dropout", "native_dropout"}};
  const std::string l = lowercase(&name);
  for (const auto& [needle, stem] : needles)
    for (std::size_t p = l.find(needle); p != std::string::npos; p = l.find(needle, p + 1))
      if (p == 0 || !std::isalpha(static_cast<unsigned char>(l[p - 1]))) return stem;  // `sin_kernel`, not `asin_kernel`
  return "";
}

// ATen's elementwise loops (CUDALoops.cuh), sized from the launch: every thread of the grid handles a fixed number
// of elements. vectorized_elementwise_kernel<vec, F, std::array<char*, N>>: 8 per thread at any vector width
// [measured: torch 2.11, output elements over grid x block threads was 8.00 at p10, median and p90 over 1.06 million
// launches with operator shapes in traces/recordings; split elementwise_launch_sizing]; unrolled_elementwise_kernel<F,
// std::array<char*, N>, per_thread, ...> and elementwise_kernel<threads, per_thread, F> name theirs. N operands
// (inputs and outputs) each move one element of the largest type the functor names [estimate: mixed-type operands
// are rare outside casts; bfloat16_copy / float16_copy kernels write 2 bytes], or, where the functor is a lambda
// whose parameters name every input (`{lambda(float, bool)#1}`), each input its own type and the output the first's;
// without `std::array` (elementwise_kernel) the functor says how many: Binary 3, AUnary / BUnary 2, Fill 1, else the
// lambda's parameters plus one output.
std::optional<ElementwiseTraffic> elementwise_traffic(const std::string& name) {
  static const std::string vectorized = "at::native::vectorized_elementwise_kernel<", unrolled = "at::native::unrolled_elementwise_kernel<",
                           plain = "at::native::elementwise_kernel<", operands_key = "std::array<char*, ";
  std::size_t at = std::string::npos;
  ElementwiseTraffic t;
  if ((at = name.find(vectorized)) != std::string::npos) {
    at += vectorized.size();
    t.elements_per_thread = 8;
  } else if ((at = name.find(unrolled)) != std::string::npos) {
    at += unrolled.size();
  } else if ((at = name.find(plain)) != std::string::npos) {
    at += plain.size();
    const std::size_t comma = name.find(", ", at);
    if (comma == std::string::npos) return std::nullopt;
    t.elements_per_thread = integer_at(name, comma + 2);
  } else {
    return std::nullopt;
  }
  // the functor part: up to the operand array, or up to the loop's own index lambda (elementwise_kernel)
  const std::size_t array_at = name.find(operands_key, at);
  std::size_t functor_end = std::min(array_at, name.find("{lambda(int)#", at));
  if (functor_end == std::string::npos) functor_end = name.size();
  const std::string functor = name.substr(at, functor_end - at);
  double operands = 0;
  if (array_at != std::string::npos) {
    operands = integer_at(name, array_at + operands_key.size());
    if (t.elements_per_thread == 0) {  // unrolled: `std::array<char*, 3ul>, 4, ...`
      const std::size_t comma = name.find(">, ", array_at);
      if (comma != std::string::npos) t.elements_per_thread = integer_at(name, comma + 3);
    }
  } else if (functor.find("FillFunctor<") != std::string::npos) {
    operands = 1;
  } else if (functor.find("AUnaryFunctor<") != std::string::npos || functor.find("BUnaryFunctor<") != std::string::npos) {
    operands = 2;
  } else if (functor.find("BinaryFunctor<") != std::string::npos || functor.find("CUDAFunctor_") != std::string::npos) {
    operands = 3;
  }
  // the functor lambda's parameters, one input operand each: `{lambda(float, bool)#1}`
  std::vector<int> inputs;
  if (const std::size_t l = functor.rfind("{lambda("); l != std::string::npos && functor.compare(l, 9, "{lambda()") != 0) {
    const std::size_t close = std::min(functor.find(')', l), functor.size());
    for (std::size_t p = l + 8; p < close;) {
      const std::size_t comma = std::min(functor.find(',', p), close);
      inputs.push_back(largest_named_type(functor.substr(p, comma - p)));
      p = comma + 1;
    }
  }
  if (operands == 0 && !inputs.empty()) operands = static_cast<double>(inputs.size()) + 1;
  const int element_bytes_ = largest_named_type(functor);
  if (operands < 1 || t.elements_per_thread <= 0 || element_bytes_ == 0) return std::nullopt;
  t.filled = operands == 1 && functor.find("FillFunctor<") != std::string::npos;
  // the output: the first input's type, 2 bytes for the conversions to 16-bit floats
  const bool to_16_bit = functor.find("bfloat16_copy_kernel") != std::string::npos || functor.find("float16_copy_kernel") != std::string::npos;
  const bool typed_inputs = !inputs.empty() && inputs.size() + 1 == static_cast<std::size_t>(operands) &&
                            std::all_of(inputs.begin(), inputs.end(), [](int b) { return b > 0; });
  if (typed_inputs)
    t.bytes_per_element = std::accumulate(inputs.begin(), inputs.end(), 0.0) + (to_16_bit ? 2 : inputs.front());
  else
    t.bytes_per_element = to_16_bit && operands >= 2 ? (operands - 1) * element_bytes_ + 2.0 : operands * element_bytes_;
  if (const std::string stem = elementwise_stem(functor); !stem.empty()) t.alu_per_element = alu_intensity(stem);
  return t;
}

}  // namespace

void OperatorIndex::add(const std::string& name, const Json& args) {
  auto dims_it = args.find("Input Dims");
  auto id_it = args.find("External id");
  if (dims_it == args.end() || !dims_it->is_array() || id_it == args.end() || !id_it->is_number_integer()) return;
  OperatorCall op;
  op.name = name;
  auto sized = [](const Json& x) {  // an integer within any tensor's size
    return x.is_number_integer() && (x.is_number_unsigned() ? x.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxOperandSize)
                                                            : x.get<std::int64_t>() >= -kMaxOperandSize && x.get<std::int64_t>() <= kMaxOperandSize);
  };
  for (const Json& d : *dims_it) {
    std::vector<std::int64_t> v;
    if (d.is_array() && !d.empty() && d.front().is_array()) {  // a tensor list's element shapes
      if (!op.list_dims.empty()) return;                       // a second one: no sizes
      for (const Json& e : d) {
        if (!e.is_array()) return;
        std::vector<std::int64_t> shape;
        for (const Json& x : e) {
          if (!sized(x)) return;
          shape.push_back(x.get<std::int64_t>());
        }
        op.list_dims.push_back(std::move(shape));
      }
    } else if (d.is_array()) {
      for (const Json& x : d) {
        if (!sized(x)) return;  // garbage or beyond any tensor: no sizes
        v.push_back(x.get<std::int64_t>());
      }
    }
    op.dims.push_back(std::move(v));
  }
  auto strings = [&](const char* key, std::vector<std::string>& out) {
    auto it = args.find(key);
    if (it == args.end() || !it->is_array()) return;
    for (const Json& x : *it) out.push_back(x.is_string() ? x.get<std::string>() : "");
  };
  // A sparse (CSR/COO) operand: the profiler writes its dense shape and no strides; its nonzeros are not in the
  // trace, so the operator is not priced from shapes (split sparse_and_int8). Traces without strides: as before.
  auto strides_it = args.find("Input Strides");
  if (strides_it != args.end() && strides_it->is_array())
    for (std::size_t i = 0; i < strides_it->size() && i < op.dims.size(); ++i) {
      const Json& st = (*strides_it)[i];
      if (!op.dims[i].empty() && st.is_array() && st.empty()) return;
      if (!st.is_array()) continue;  // its rank is note_expanded_operand's check
      std::vector<std::int64_t> strides;  // every element an integer, or none noted (as the streaming reader)
      for (const Json& x : st)
        if (x.is_number_integer())  // a stride past int64 is no 0
          strides.push_back(x.is_number_unsigned() ? static_cast<std::int64_t>(std::min<std::uint64_t>(x.get<std::uint64_t>(), 1u << 30))
                                                   : x.get<std::int64_t>());
      if (strides.size() == st.size()) note_expanded_operand(op, i, strides);
    }
  strings("Input type", op.types);
  strings("Concrete Inputs", op.concrete);
  add_call(id_it->get<long>(), std::move(op));
}

void note_expanded_operand(OperatorCall& op, std::size_t input, const std::vector<std::int64_t>& strides) {
  if (input >= op.dims.size() || strides.size() != op.dims[input].size()) return;
  double stored = 1;
  bool expanded = false;
  for (std::size_t d = 0; d < strides.size(); ++d) {
    const std::int64_t n = op.dims[input][d];
    if (strides[d] == 0 && n > 1)
      expanded = true;
    else
      stored *= static_cast<double>(std::max<std::int64_t>(n, 0));
  }
  if (!expanded) return;
  if (op.stored_elements.size() < op.dims.size()) op.stored_elements.resize(op.dims.size(), -1.0);
  op.stored_elements[input] = stored;
}

void OperatorIndex::add_call(long external_id, OperatorCall op) {
  std::size_t lists = 0;
  for (const std::string& t : op.types) lists += t == "TensorList" || t == "GenericList";
  if (lists > (op.list_dims.empty() ? 0u : 1u)) return;  // a list whose elements' sizes were not recorded
  // of the operators over a sized list only concatenations are counted; the others (foreach) keep their
  // kernels' launch-shape estimate, which needs them absent here
  if (!op.list_dims.empty() && !is_concatenation(op.name)) return;
  if (op.types.size() != op.dims.size()) return;
  ops_[external_id] = std::move(op);
}

void OperatorIndex::merge(OperatorIndex&& later) {
  spans_.insert(spans_.end(), later.spans_.begin(), later.spans_.end());
  spans_sorted_ = spans_sorted_ && later.spans_.empty();
  if (ops_.empty()) {
    ops_ = std::move(later.ops_);
    return;
  }
  for (auto& [id, op] : later.ops_) ops_[id] = std::move(op);
}

void OperatorIndex::finish_spans() {
  if (spans_sorted_) return;
  // By thread, then start; of two starting together the outer (longer) first, so the inner one comes later.
  std::stable_sort(spans_.begin(), spans_.end(), [](const OperatorSpan& a, const OperatorSpan& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.t0_us != b.t0_us ? a.t0_us < b.t0_us : a.t1_us > b.t1_us;
  });
  // Each span's parent: the innermost earlier span on its thread that still holds it (operators nest on a thread).
  std::vector<std::int64_t> open;
  for (std::size_t i = 0; i < spans_.size(); ++i) {
    if (i > 0 && spans_[i].tid != spans_[i - 1].tid) open.clear();
    while (!open.empty() && spans_[static_cast<std::size_t>(open.back())].t1_us < spans_[i].t1_us) open.pop_back();
    spans_[i].parent = open.empty() ? -1 : open.back();
    open.push_back(static_cast<std::int64_t>(i));
  }
  spans_sorted_ = true;
}

long OperatorIndex::operator_around(long tid, double ts_us) const {
  if (tid < 0) return -1;  // an unknown thread would match spans of other threads
  // The last span starting at or before ts on that thread; the innermost span holding ts is that one or one of its
  // ancestors (a span holding ts that started earlier holds that span too).
  auto it = std::upper_bound(spans_.begin(), spans_.end(), std::make_pair(tid, ts_us), [](const std::pair<long, double>& key, const OperatorSpan& s) {
    return key.first != s.tid ? key.first < s.tid : key.second < s.t0_us;
  });
  if (it == spans_.begin() || std::prev(it)->tid != tid) return -1;
  for (std::int64_t i = std::prev(it) - spans_.begin(); i >= 0; i = spans_[static_cast<std::size_t>(i)].parent)
    if (spans_[static_cast<std::size_t>(i)].t1_us >= ts_us) return spans_[static_cast<std::size_t>(i)].external_id;
  return -1;
}

const OperatorCall* OperatorIndex::find(long external_id) const {
  auto it = ops_.find(external_id);
  return it == ops_.end() ? nullptr : &it->second;
}

std::optional<OperatorWork> operator_work(const OperatorCall& op, const std::vector<const std::string*>& kernel_names) {
  const std::size_t colon = op.name.rfind("::");
  const std::string base = colon == std::string::npos ? op.name : op.name.substr(colon + 2);
  if (base == "mm" || base == "addmm" || base == "bmm" || base == "baddbmm" || base == "_scaled_mm" || base == "_addmm_activation" ||
      base == "_int_mm")
    return gemm_work(op, base, kernel_names);
  if (base == "cudnn_convolution" || base == "convolution" || base == "_convolution" || base == "convolution_backward" ||
      base == "cudnn_convolution_transpose")
    return convolution_work(op, base, kernel_names);
  if (!op.list_dims.empty()) return is_concatenation(op.name) ? concatenation_work(op, kernel_names) : std::nullopt;
  if (base.find("attention") != std::string::npos && base.front() == '_') return attention_work(op, base);
  if (is_linalg(base)) return linalg_work(op, base, kernel_names);
  if (base == "_fft_r2c" || base == "_fft_c2r" || base == "_fft_c2c")
    if (auto w = fft_work(op, base, kernel_names)) return w;
  return streaming_work(op, base, kernel_names);
}

std::size_t size_elementwise_from_launch(Workload& wl) {
  std::size_t sized = 0;
  // elementwise_traffic once per distinct name (scans over names hundreds of characters long)
  std::vector<std::optional<ElementwiseTraffic>> traffic_of(wl.names.size());
  std::vector<char> looked_up(wl.names.size(), 0);
  auto extent = [](const std::uint32_t(&d)[3]) { return double(d[0]) * std::max(1u, d[1]) * std::max(1u, d[2]); };
  for (Rank& r : wl.ranks) {
    if (r.shapes.size() != r.kernels.size()) continue;
    auto clipped = r.clipped.begin();
    for (std::size_t i = 0; i < r.kernels.size(); ++i) {
      Kernel& k = r.kernels[i];
      // a clipped activity did its work over its recorded duration, not over the part the busy union kept
      while (clipped != r.clipped.end() && clipped->kernel < i) ++clipped;
      const double duration_s = clipped != r.clipped.end() && clipped->kernel == i ? clipped->duration_s : k.duration_s;
      const LaunchShape& shape = r.shapes[i];
      if (k.kind != ActivityKind::kernel || k.work != WorkSource::unknown || !(duration_s > 0) || shape.grid[0] == 0 ||
          k.name_id >= wl.names.size())
        continue;
      if (!looked_up[k.name_id]) traffic_of[k.name_id] = elementwise_traffic(wl.names[k.name_id]), looked_up[k.name_id] = 1;
      if (!traffic_of[k.name_id]) continue;
      const ElementwiseTraffic& t = *traffic_of[k.name_id];
      const double elements = extent(shape.grid) * extent(shape.block) * t.elements_per_thread;
      if (!(elements > 0)) continue;
      const double per_second = 1.0 / (duration_s * 1e12);
      KernelRates rates;
      rates.memory_tbps = static_cast<float>(elements * t.bytes_per_element * per_second);
      if (t.filled) rates.memory_fill_tbps = rates.memory_tbps;
      if (is_unvectorised_elementwise(&wl.names[k.name_id])) rates.unvectorised_tbps = rates.memory_tbps;
      rates.alu_tops = static_cast<float>(elements * t.alu_per_element * per_second);
      rates.source = WorkSource::launch_elementwise;
      apply_rates(rates, k);
      ++sized;
    }
  }
  return sized;
}

std::size_t withhold_operator_work(Workload& wl) {
  std::size_t withheld = 0;
  for (Rank& r : wl.ranks)
    for (Kernel& k : r.kernels) {
      if (k.kind != ActivityKind::kernel || k.work != WorkSource::shapes) continue;
      set_work_rates(k, {});
      k.tensor_precision = TensorPrecision::none;
      k.work = WorkSource::unknown;
      ++withheld;
    }
  size_elementwise_from_launch(wl);  // as such a trace imports
  return withheld;
}

std::vector<KernelRates> estimate_kernel_rates(const std::vector<ActivityRef>& acts, const OperatorIndex& ops) {
  std::vector<KernelRates> out(acts.size());
  struct Group {
    double duration_us = 0;
    std::vector<std::size_t> members;
  };
  std::unordered_map<long, Group> groups;
  // multi_tensor_traffic once per kernel name (a regular expression over names hundreds of characters long).
  std::unordered_map<std::string_view, std::optional<MultiTensorTraffic>> traffic_of;
  auto multi_tensor_memo = [&](const std::string& name) -> const std::optional<MultiTensorTraffic>& {
    auto it = traffic_of.find(name);
    if (it == traffic_of.end()) it = traffic_of.emplace(name, multi_tensor_traffic(name)).first;
    return it->second;
  };
  for (std::size_t i = 0; i < acts.size(); ++i) {
    const ActivityRef& a = acts[i];
    if (a.kind == ActivityKind::memcpy) {
      // the copy engine moves the bytes: a device-to-device copy reads and writes them
      const bool d2d = a.name && a.name->find("DtoD") != std::string::npos;
      out[i].source = WorkSource::copy_engine;
      if (a.duration_us > 0) {
        out[i].memory_tbps = static_cast<float>((d2d ? 2.0 : 1.0) * static_cast<double>(a.bytes) / (a.duration_us * 1e6));
      }
      continue;
    }
    if (a.kind == ActivityKind::memset) {
      out[i].source = WorkSource::shapes;
      if (a.duration_us > 0) out[i].memory_tbps = out[i].memory_fill_tbps = static_cast<float>(static_cast<double>(a.bytes) / (a.duration_us * 1e6));
      continue;
    }
    if (a.external_id < 0 || !ops.find(a.external_id)) {
      if (a.kind == ActivityKind::kernel && a.name && a.blocks > 0 && a.duration_us > 0)
        if (const auto t = multi_tensor_memo(*a.name)) {
          const double elements = static_cast<double>(a.blocks) * kMultiTensorChunk;
          out[i].source = WorkSource::launch_shape;
          out[i].memory_tbps = static_cast<float>(elements * t->lists_per_element * t->element_bytes / (a.duration_us * 1e6));
          out[i].alu_tops = static_cast<float>(elements * t->alu_per_element / (a.duration_us * 1e6));
        }
      continue;
    }
    Group& g = groups[a.external_id];
    g.duration_us += a.duration_us;
    g.members.push_back(i);
  }
  for (const auto& [id, g] : groups) {
    std::vector<const std::string*> names;
    for (std::size_t i : g.members) names.push_back(acts[i].name);
    const std::optional<OperatorWork> w = operator_work(*ops.find(id), names);
    if (!w || g.duration_us <= 0) continue;
    // The arithmetic runs in the operator's matrix kernels (GEMM, convolution, attention names); helper
    // kernels beside them (padding, layout conversion) only move bytes. Tensor cores only where the kernel's
    // name says so: a depthwise or fp32 kernel of a bf16 operator runs on CUDA cores.
    // Layout conversions move their tensors on top of the operator's own traffic: together twice the operator's
    // bytes, shared among them by duration; the other kernels share the operator's work by theirs.
    // Each kernel's role is read from its name once.
    std::vector<char> matrix(names.size()), conversion(names.size());
    double matrix_us = 0, conversion_us = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
      const double us = acts[g.members[k]].duration_us;
      if ((matrix[k] = is_matrix_kernel(names[k]))) matrix_us += us;
      if ((conversion[k] = is_layout_conversion(names[k]))) conversion_us += us;
    }
    const bool all_matrix = matrix_us <= 0;
    if (all_matrix) matrix_us = g.duration_us;
    const double own_us = g.duration_us - conversion_us;
    const bool split_conversions = conversion_us > 0 && own_us > 0;
    const double flops = w->tensor_flops + w->fma_flops;
    for (std::size_t k = 0; k < names.size(); ++k) {
      const std::size_t i = g.members[k];
      KernelRates& r = out[i];
      r.source = WorkSource::shapes;
      if (split_conversions && conversion[k]) {
        r.memory_tbps = static_cast<float>(2 * w->bytes / (conversion_us * 1e6));
        continue;
      }
      const double us = split_conversions ? own_us : g.duration_us;
      r.alu_tops = static_cast<float>(w->alu_ops / (us * 1e6));
      r.memory_tbps = static_cast<float>(w->bytes / (us * 1e6));
      r.memory_fill_tbps = static_cast<float>(w->filled / (us * 1e6));
      if (is_unvectorised_elementwise(names[k])) r.unvectorised_tbps = r.memory_tbps;
      if (flops <= 0 || !(all_matrix || matrix[k])) continue;
      const auto rate = static_cast<float>(flops / (matrix_us * 1e6));
      // fp64 runs on tensor cores (DMMA) where the name says so: cuBLAS's `..._tensor16x8x8`, CUTLASS's `tensorop_d884`
      const bool on_tensor_cores = w->precision == TensorPrecision::fp64
                                       ? name_has_any(acts[i].name, {"tensor", "dmma"})
                                       : uses_tensor_cores(acts[i].name) || (w->precision != TensorPrecision::none && rate > kCudaCoreCeilingTflops);
      if (w->precision != TensorPrecision::none && on_tensor_cores) {
        r.precision = w->precision;
        r.tensor_issue = tensor_issue_of(*acts[i].name);
        r.tensor_tflops = rate;
      } else {
        r.fma_tflops = rate;
        r.alu_tops += static_cast<float>(w->direct_loads / (matrix_us * 1e6));
      }
    }
  }
  return out;
}

void apply_rates(const KernelRates& r, Kernel& k) {
  k.tensor_tflops = r.tensor_tflops;
  k.fma_tflops = r.fma_tflops;
  k.alu_tops = r.alu_tops;
  k.memory_tbps = r.memory_tbps;
  k.memory_fill_tbps = r.memory_fill_tbps;
  k.unvectorised_tbps = r.unvectorised_tbps;
  k.tensor_precision = r.precision;
  k.tensor_issue = r.tensor_issue;
  k.work = r.source;
}

}  // namespace dvfs
