#include "sim/calibrate/power_fit.hpp"

#include "models/src/gpu_model.hpp"
#include "models/src/model_registry.hpp"
#include "sim/calibrate/calibration_date.hpp"
#include "sim/calibrate/rounding.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/progress.hpp"
#include "traces/src/kernel_loop.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

namespace dvfs {

namespace {

constexpr int kCoefficients = 11;
const char* const kCoefficientNames[kCoefficients] = {"busy_w", "tensor_bf16",   "tensor_fp8",  "tensor_tf32",    "fma",
                                                      "alu",    "memory",        "copy_engine_w", "memory_fill", "mma_sync_extra",
                                                      "copy_engine_memory"};
constexpr double kMinKnownShare = 0.9;

// One loop reduced to what the fit needs: per kernel its recorded clock, fill and rates, plus the loop's
// time, idle energy and the energy of kernels priced by the class prior.
struct LoopData {
  std::string name;
  double measured_w = 0, time_s = 0, idle_j = 0, prior_j = 0, known_share = 0;
  struct K {
    double d, f, fill, tensor, fma, alu, memory, memory_filled, unvectorised;
    TensorPrecision p;
    bool copy_engine, mma_sync;
  };
  std::vector<K> kernels;
};

LoopData reduce_loop(const KernelLoop& loop, const GpuModel& base) {
  LoopData out;
  out.name = loop.name;
  out.measured_w = loop.measured_power_w;
  const Workload wl = steady_workload(loop);
  const Rank& rank = wl.ranks.front();
  double known = 0, all = 0;
  for (const Step& st : rank.steps) {
    if (st.first_kernel < 0) continue;
    out.time_s += st.lead_s + st.tail_s;
    for (int i = st.first_kernel; i <= st.last_kernel; ++i) {
      const Kernel& k = rank.kernels[static_cast<std::size_t>(i)];
      const double f = k.recorded_sm_mhz > 0 ? k.recorded_sm_mhz : base.default_clocks().sm_mhz;
      const double gap = i > st.first_kernel ? k.gap_before_s : 0.0;
      out.time_s += gap + k.duration_s;
      // idle power during the kernel and the gaps of the step at this kernel's clock
      out.idle_j += base.idle_power_at(f) * (gap + k.duration_s + (i == st.first_kernel ? st.lead_s : 0.0) +
                                             (i == st.last_kernel ? st.tail_s : 0.0));
      all += k.duration_s;
      if (!counted_work(k)) {
        const int si = base.sm_index(f), mi = base.mem_index(k.recorded_mem_mhz > 0 ? k.recorded_mem_mhz : base.max_mem_mhz());
        if (si >= 0 && mi >= 0) out.prior_j += (base.kernel_power_w(k, si, mi) - base.idle_power_w(si)) * k.duration_s;
        continue;
      }
      known += k.duration_s;
      const double dram = base.dram_share(k.memory_tbps);  // as GpuModel::activity_power_w prices them
      out.kernels.push_back({k.duration_s, f, k.sm_fill, k.tensor_tflops, k.fma_tflops, k.alu_tops, k.memory_tbps * dram,
                             k.memory_fill_tbps * dram, k.unvectorised_tbps, k.tensor_precision, priced_as_copy(k),
                             k.tensor_issue == TensorIssue::warp});
    }
  }
  out.known_share = all > 0 ? known / all : 1.0;
  return out;
}

// (V/V_max)^2 at f for a curve flat at `floor` up to `knee`, linear to 1 at f_max.
double relative_v(double f, double floor, double knee, double f_max) {
  if (f <= knee) return floor;
  if (f >= f_max) return 1.0;
  return floor + (1.0 - floor) * (f - knee) / (f_max - knee);
}

// At the recorded clocks a kernel runs its recorded duration d, so its ramp weight is d / (d + ramp_s).
// fp64 tensor FLOPs go to `fp64` where given (split fp64_tensor_energy), else to the FMA coefficient; unvectorised
// bytes (split unvectorised_bytes) to `unvectorised` where given, else nowhere (the joint fit does not price them).
std::vector<double> features(const LoopData& l, double floor, double knee, double f_max, double ramp_s, double* fp64 = nullptr,
                             double* unvectorised = nullptr) {
  std::vector<double> x(kCoefficients, 0.0);
  for (const LoopData::K& k : l.kernels) {
    const double v = relative_v(k.f, floor, knee, f_max), v2 = v * v;
    const double d = k.d * k.d / (k.d + ramp_s);  // duration x ramp weight
    if (k.copy_engine) {
      x[7] += d;
    } else {
      x[0] += d * k.fill * v2 * k.f / f_max;
      if (k.p == TensorPrecision::fp64) (fp64 ? *fp64 : x[4]) += d * v2 * k.tensor;
      else if (k.p != TensorPrecision::none) x[static_cast<int>(k.p)] += d * v2 * k.tensor;
      if (k.mma_sync) x[9] += d * v2 * k.tensor;
      x[4] += d * v2 * k.fma;
      x[5] += d * v2 * k.alu;
      if (unvectorised) *unvectorised += d * v2 * k.unvectorised;
    }
    x[k.copy_engine ? 10 : 6] += d * (k.memory - k.memory_filled);
    x[8] += d * k.memory_filled;
  }
  for (double& v : x) v /= l.time_s;
  if (fp64) *fp64 /= l.time_s;
  if (unvectorised) *unvectorised /= l.time_s;
  return x;
}

double target(const LoopData& l) { return l.measured_w - (l.idle_j + l.prior_j) / l.time_s; }

bool solve(std::vector<std::vector<double>> m, std::vector<double> rhs, std::vector<double>& x) {
  const std::size_t n = rhs.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[p][c])) p = r;
    if (std::fabs(m[p][c]) < 1e-12) return false;
    std::swap(m[p], m[c]);
    std::swap(rhs[p], rhs[c]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = m[r][c] / m[c][c];
      for (std::size_t k = c; k < n; ++k) m[r][k] -= f * m[c][k];
      rhs[r] -= f * rhs[c];
    }
  }
  x.assign(n, 0.0);
  for (std::size_t c = n; c-- > 0;) {
    double s = rhs[c];
    for (std::size_t k = c + 1; k < n; ++k) s -= m[c][k] * x[k];
    x[c] = s / m[c][c];
  }
  return true;
}

// The fit loops reduced, except idle (its power is the base's measured idle_w) and loops with too little of their
// kernel time priced by shapes (listed in left_out).
std::vector<LoopData> load_fit_loops(const LoopRecordings& where, const std::vector<std::string>& names,
                                     const GpuModel& base, Progress& progress, Json& left_out) {
  std::vector<LoopData> loops;
  for (const std::string& n : names) {
    progress.note(n);
    if (n != "idle") {
      LoopData l = reduce_loop(load_kernel_loop(where.dir(n)), base);
      if (!l.kernels.empty() && l.known_share < kMinKnownShare)
        left_out.push_back({{"loop", n}, {"priced_by_shapes_share", l.known_share}});
      else if (!l.kernels.empty())
        loops.push_back(std::move(l));
    }
    progress.advance();
  }
  return loops;
}

}  // namespace

std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& b) {
  const std::size_t n = a.empty() ? 0 : a.front().size();
  std::vector<double> best(n, 0.0);
  double best_sse = 0;
  for (const double v : b) best_sse += v * v;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<std::size_t> cols;
    for (std::size_t j = 0; j < n; ++j)
      if (mask & (1u << j)) cols.push_back(j);
    std::vector<std::vector<double>> ata(cols.size(), std::vector<double>(cols.size(), 0.0));
    std::vector<double> atb(cols.size(), 0.0), x;
    for (std::size_t r = 0; r < a.size(); ++r)
      for (std::size_t i = 0; i < cols.size(); ++i) {
        atb[i] += a[r][cols[i]] * b[r];
        for (std::size_t j = 0; j < cols.size(); ++j) ata[i][j] += a[r][cols[i]] * a[r][cols[j]];
      }
    if (!solve(ata, atb, x)) continue;
    bool feasible = true;
    for (double v : x) feasible = feasible && v >= 0;
    if (!feasible) continue;
    double sse = 0;
    for (std::size_t r = 0; r < a.size(); ++r) {
      double p = 0;
      for (std::size_t i = 0; i < cols.size(); ++i) p += a[r][cols[i]] * x[i];
      sse += (p - b[r]) * (p - b[r]);
    }
    if (sse < best_sse) {
      best_sse = sse;
      best.assign(n, 0.0);
      for (std::size_t i = 0; i < cols.size(); ++i) best[cols[i]] = x[i];
    }
  }
  return best;
}

namespace {

std::vector<std::string> names_in_split(const Json& doc, const std::string& split_path, const std::string& side,
                                        const std::string& kind) {
  JsonReader r(doc, split_path, "");
  JsonReader s = r.child(side.c_str());
  const Json& list = s.raw(kind.c_str());
  if (!list.is_array()) s.fail(kind.c_str(), "expected a list of recording names");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i].get<std::string>().empty())
      s.fail(kind.c_str(), "expected names (element " + std::to_string(i) + " is not a non-empty string)");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<std::string> split_names(const std::string& split_path, const std::string& side, const std::string& kind) {
  return names_in_split(read_json_file(split_path), split_path, side, kind);
}

namespace {

// The kernel loops of one side of a split document already read.
std::vector<std::string> loop_names_in_split(const Json& doc, const std::string& split_path, const std::string& side) {
  std::vector<std::string> out = names_in_split(doc, split_path, side, "micro");
  for (const char* later : {"micro_stores", "micro_alu_conv", "micro_family"})  // lists recorded later, in recording order
    if (doc[side].contains(later))  // names_in_split checked that doc[side] is an object
      for (const std::string& n : names_in_split(doc, split_path, side, later)) out.push_back(n);
  return out;
}

}  // namespace

std::vector<std::string> split_loop_names(const std::string& split_path, const std::string& side) {
  return loop_names_in_split(read_json_file(split_path), split_path, side);
}

std::vector<std::pair<std::string, std::string>> split_block_loops(const std::string& split_path, const std::string& block,
                                                                   const std::string& side) {
  return split_block_loops(read_json_file(split_path), split_path, block, side);
}

std::vector<std::pair<std::string, std::string>> split_block_loops(const Json& doc, const std::string& split_path,
                                                                   const std::string& block, const std::string& side) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!doc.is_object() || !doc.contains(block)) return out;
  const std::string folder = data_dir() + "/" + JsonReader(doc[block], split_path, block).string("folder");
  for (const std::string& n : names_in_split(doc, split_path, block, side)) out.emplace_back(n, folder + "/" + n);
  return out;
}

namespace {

// A coefficient fit after the joint fit with its coefficients `c` and voltage curve fixed: the least squares of the
// relative power error of the fit loops of a split block (one loop: exact). fp64_tensor_energy (twelfth round): the
// energy of an fp64 tensor-core FLOP; unvectorised_bytes (sixteenth): the energy of a byte the non-vectorised
// elementwise loop moves, beyond its DRAM energy. Returns the report (coefficient, per loop measured / fitted), or
// null when the split has no such block.
enum class LateTerm { fp64, unvectorised };

struct LateTermSpec {
  const char* block;
  const char* coefficient;  // the report's key
  const char* model_path;   // JSON pointer into the model
  const char* missing;      // what a fit loop without such work lacks
};

LateTermSpec spec_of(LateTerm t) {
  if (t == LateTerm::fp64)
    return {"fp64_tensor_energy", "fp64_pj_per_flop", "/activity/tensor_pj_per_flop/fp64", "fp64 tensor-core work"};
  return {"unvectorised_bytes", "unvectorised_pj_per_byte", "/activity/unvectorised_pj_per_byte", "kernels of the non-vectorised elementwise loop"};
}

// The loop's feature for the late term, and the rest of its power at `c` (idle, class-prior kernels, joint terms).
double late_feature(const LoopData& l, LateTerm t, const std::vector<double>& c, double floor, double knee, double f_max,
                    double ramp_s, double& rest) {
  double fp = 0, unvec = 0;
  const std::vector<double> x = features(l, floor, knee, f_max, ramp_s, t == LateTerm::fp64 ? &fp : nullptr, &unvec);
  rest = (l.idle_j + l.prior_j) / l.time_s;
  for (int j = 0; j < kCoefficients; ++j) rest += x[static_cast<std::size_t>(j)] * c[static_cast<std::size_t>(j)];
  return t == LateTerm::fp64 ? fp : unvec;
}

Json fit_late_term(LateTerm term, const std::string& split_path, const GpuModel& base, const std::vector<double>& c, double floor,
                   double knee, double f_max, double ramp_s) {
  const LateTermSpec spec = spec_of(term);
  const auto loops = split_block_loops(split_path, spec.block, "fit");
  if (loops.empty()) return Json();
  std::vector<LoopData> data;
  std::vector<double> rest, feature;
  double num = 0, den = 0;
  for (const auto& [name, dir] : loops) {
    LoopData l = reduce_loop(load_kernel_loop(dir), base);
    l.name = name;
    double p = 0;
    const double x = late_feature(l, term, c, floor, knee, f_max, ramp_s, p);
    if (x <= 0)
      throw InputError(dir, std::string(spec.block) + ".fit", std::string("expected a loop with ") + spec.missing + " (none counted in its trace)");
    const double w = 1.0 / (l.measured_w * l.measured_w);  // relative error
    num += w * (l.measured_w - p) * x;
    den += w * x * x;
    data.push_back(std::move(l));
    rest.push_back(p);
    feature.push_back(x);
  }
  const double e = round_to(std::max(0.0, num / den), 0.001);
  Json rows = Json::array();
  for (std::size_t i = 0; i < data.size(); ++i) {
    const double p = rest[i] + e * feature[i];
    rows.push_back({{"loop", data[i].name}, {"measured_w", data[i].measured_w}, {"fitted_w", p},
                    {"error_pct", 100.0 * (p - data[i].measured_w) / data[i].measured_w}});
  }
  return {{spec.coefficient, e}, {"loops", rows}};
}

// The fitted model priced on the joint fit's loops, as validate will price them (recorded clocks): per loop measured,
// fitted and error; `mape` their mean absolute error (%).
Json priced_fit_loops(const std::vector<LoopData>& loops, const std::vector<double>& c, double unvectorised_pj, double floor,
                      double knee, double f_max, double ramp_s, double& mape) {
  Json rows = Json::array();
  double ape = 0;
  for (const LoopData& l : loops) {
    double p = 0;
    const double unvectorised = late_feature(l, LateTerm::unvectorised, c, floor, knee, f_max, ramp_s, p);
    p += unvectorised_pj * unvectorised;
    const double e = 100.0 * (p - l.measured_w) / l.measured_w;
    ape += std::fabs(e);
    rows.push_back({{"loop", l.name}, {"measured_w", l.measured_w}, {"fitted_w", p}, {"error_pct", e}});
  }
  mape = ape / static_cast<double>(loops.size());
  return rows;
}

// A late term's fit (fit_late_term's report, null: none) into the model, with its provenance.
void add_late_term(Json& model, LateTerm term, const Json& fit) {
  if (fit.is_null()) return;
  const LateTermSpec spec = spec_of(term);
  model[Json::json_pointer(spec.model_path)] = fit[spec.coefficient];
  set_provenance(model["provenance"], spec.model_path, "fit",
                 std::string("split ") + spec.block + ": the least squares of its fit loops' relative power error (" +
                     std::to_string(fit["loops"].size()) + " loop(s), the split's folder) with every other coefficient "
                     "and the voltage curve fixed, after the joint fit");
}

}  // namespace

namespace {

// `copy_data.replaces` of a split document, when `copy_data.measurement_of_record` is true: suite loop -> recording
// directory. InputError naming the split file when a replaced loop is not on the fit side or its recording is missing.
std::map<std::string, std::string> replaced_loops(const Json& doc, const std::string& split_path, const std::vector<std::string>& fit) {
  std::map<std::string, std::string> out;
  if (!doc.is_object() || !doc.contains("copy_data")) return out;
  JsonReader cd(doc["copy_data"], split_path, "copy_data");
  if (!cd.has("replaces")) return out;
  if (!cd.has("measurement_of_record"))
    cd.fail("measurement_of_record", "missing: expected true (the replacements are those loops' measurement) or false");
  if (!cd.boolean_or("measurement_of_record", false)) return out;
  const Json& r = cd.raw("replaces");
  if (!r.is_object()) cd.fail("replaces", "expected an object {suite loop: recording name}");
  const std::string folder = data_dir() + "/" + cd.string("folder");
  for (const auto& [loop, rec] : r.items()) {
    if (!rec.is_string()) cd.fail("replaces", "expected a recording name for \"" + loop + "\"");
    if (std::find(fit.begin(), fit.end(), loop) == fit.end())
      cd.fail("replaces", "\"" + loop + "\" is not a fit-side kernel loop (a replacement keeps its loop's side: fit)");
    const std::string dir = folder + "/" + rec.get<std::string>();
    if (!std::filesystem::exists(dir + "/run.json")) cd.fail("replaces", "\"" + loop + "\": no recording " + dir + "/run.json");
    out[loop] = dir;
  }
  return out;
}

}  // namespace

LoopRecordings::LoopRecordings(const std::string& split_path, const std::string& suite_dir, const std::string& window_dir)
    : suite_dir_(suite_dir) {
  const Json doc = read_json_file(split_path);
  const std::vector<std::string> fit =
      doc.is_object() && doc.contains("fit") ? loop_names_in_split(doc, split_path, "fit") : std::vector<std::string>{};
  replaced_ = replaced_loops(doc, split_path, fit);
  if (!doc.is_object() || !doc.contains("profiled_window")) return;
  JsonReader pw(doc["profiled_window"], split_path, "profiled_window");
  const Json& list = pw.raw("loops");
  if (!list.is_array()) pw.fail("loops", "expected a list of kernel-loop names");
  std::vector<std::string> known = fit;
  for (const std::string& n : loop_names_in_split(doc, split_path, "held_out")) known.push_back(n);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) pw.fail("loops", "expected names (element " + std::to_string(i) + " is not a string)");
    const std::string n = list[i].get<std::string>();
    if (std::find(known.begin(), known.end(), n) == known.end())
      pw.fail("loops", "\"" + n + "\" is on neither side's kernel-loop lists (a window recording keeps its loop's side)");
    window_loops_.push_back(n);
  }
  window_dir_ = !window_dir.empty() ? window_dir : data_dir() + "/" + pw.string("folder");
  if (!pw.has("measurement_of_record"))
    pw.fail("measurement_of_record", "missing: expected true (the window recordings are these loops' measurement) or false (a diagnostic)");
  window_of_record_ = pw.boolean_or("measurement_of_record", false);
  for (const std::string& n : window_loops_)
    if (!std::filesystem::exists(window_dir_ + "/" + n + "/run.json"))
      pw.fail("loops", "\"" + n + "\" has no window recording (expected " + window_dir_ + "/" + n + "/run.json)");
  if (!doc.contains("gapless_window")) return;
  JsonReader gw(doc["gapless_window"], split_path, "gapless_window");
  gapless_dir_ = data_dir() + "/" + gw.string("folder");
  if (!gw.has("measurement_of_record"))
    gw.fail("measurement_of_record", "missing: expected true (the gapless recordings are these loops' measurement) or false");
  gapless_of_record_ = gw.boolean_or("measurement_of_record", false);
  if (gapless_of_record_)
    for (const std::string& n : window_loops_)
      if (!recorded_gapless(n))
        gw.fail("folder", "\"" + n + "\" has no gapless recording (expected " + gapless_dir(n) + "/run.json)");
}

bool LoopRecordings::recorded_gapless(const std::string& loop) const {
  return !gapless_dir_.empty() && recorded_over_window(loop) && std::filesystem::exists(gapless_dir(loop) + "/run.json");
}

bool LoopRecordings::recorded_over_window(const std::string& loop) const {
  return std::find(window_loops_.begin(), window_loops_.end(), loop) != window_loops_.end();
}

bool LoopRecordings::measured_over_profiled_window(const std::string& loop) const {
  return window_of_record_ && recorded_over_window(loop);
}

std::string LoopRecordings::replacement(const std::string& loop) const {
  auto it = replaced_.find(loop);
  return it == replaced_.end() ? std::string() : it->second;
}

LoopRecordings::Source LoopRecordings::source(const std::string& loop) const {
  if (!replacement(loop).empty()) return Source::replacement;
  if (measured_gapless(loop)) return Source::gapless;
  return measured_over_profiled_window(loop) ? Source::window : Source::suite;
}

const char* LoopRecordings::measured_over(const std::string& loop) const {
  switch (source(loop)) {
    case Source::replacement: return "replacement";
    case Source::gapless: return "one long profiled step";
    case Source::window: return "profiled window";
    case Source::suite: break;
  }
  return "steady window";
}

std::string LoopRecordings::dir(const std::string& loop) const {
  switch (source(loop)) {
    case Source::replacement: return replacement(loop);
    case Source::gapless: return gapless_dir(loop);
    case Source::window: return window_dir(loop);
    case Source::suite: break;
  }
  return suite_dir(loop);
}

namespace {

// Each name at most once over a group of lists: a name listed twice on the fit side was fit twice (double weight); one
// on both sides was fit and then scored as held out. `seen`: name -> (the list it was first met in, e.g. "fit.micro";
// its side, "fit" or "held_out").
using SeenNames = std::map<std::string, std::pair<std::string, std::string>>;
void check_names_once(const std::vector<std::string>& names, const std::string& split_path, const std::string& list,
                      const std::string& side, SeenNames& seen) {
  for (const std::string& n : names) {
    const auto inserted = seen.emplace(n, std::make_pair(list, side));
    if (inserted.second) continue;
    const std::pair<std::string, std::string> first = inserted.first->second;
    if (first.second == side)
      throw InputError(split_path, list, "\"" + n + "\" is listed twice (also in " + first.first + "): expected each loop once");
    throw InputError(split_path, list, "\"" + n + "\" is also in " + first.first + ": expected each loop on one side only (fit or held out)");
  }
}

}  // namespace

// A typo such as fit.micro_storez was ignored, its loops left out of the fit; a name listed twice was weighted twice.
void check_power_split(const Json& doc, const std::string& split_path) {
  if (!doc.is_object()) throw InputError(split_path, "(top level)", "expected an object, got " + json_type_name(doc));
  const JsonReader r(doc, split_path, "");
  // The keys of the blocks calibrate --power-suite reads, documentation keys (about, rule, outcome, ...) included; the
  // split's other top-level blocks (the rounds' rules and outcomes, which it does not read) stay free-form.
  const auto block_keys = [&](const char* block, std::initializer_list<const char*> keys) {
    if (!r.has(block)) return;
    const Json& b = doc[block];
    if (!b.is_object()) r.fail(block, "expected an object, got " + json_type_name(b));
    JsonReader(b, split_path, block).only_keys(keys);
  };
  block_keys("fit", {"micro", "micro_stores", "micro_alu_conv", "micro_family", "recordings"});
  block_keys("held_out", {"micro", "micro_stores", "micro_alu_conv", "micro_family", "recordings", "recordings_added_after_the_fit", "workloads"});
  block_keys("profiled_window", {"about", "folder", "threshold_sm_mhz", "loops", "measurement_of_record", "outcome"});
  block_keys("copy_data", {"about", "folder", "loops", "rule", "copy_engine_bytes", "replaces", "measurement_of_record", "outcome"});
  block_keys("gapless_window", {"about", "folder", "rule", "measurement_of_record", "outcome"});
  block_keys("fp64_tensor_energy", {"about", "folder", "fit", "held_out", "method", "rule", "outcome"});
  block_keys("unvectorised_bytes", {"about", "folder", "fit", "held_out", "rule", "outcome"});
  SeenNames seen;
  for (const char* side : {"fit", "held_out"})
    for (const char* kind : {"micro", "micro_stores", "micro_alu_conv", "micro_family"})
      if ((std::string(side) == "fit" && std::string(kind) == "micro") || (r.has(side) && doc[side].contains(kind)))
        check_names_once(names_in_split(doc, split_path, side, kind), split_path, std::string(side) + "." + kind, side, seen);
  for (const char* block : {"fp64_tensor_energy", "unvectorised_bytes"}) {
    if (!r.has(block)) continue;
    SeenNames in_block;
    for (const char* side : {"fit", "held_out"})
      if (doc[block].contains(side))
        check_names_once(names_in_split(doc, split_path, block, side), split_path, std::string(block) + "." + side, side, in_block);
  }
}

PowerSuiteCalibration calibrate_from_power_suite(const std::string& suite_dir, const std::string& split_path,
                                                 const std::string& base_path, const std::string& command,
                                                 const std::string& date, const std::string& window_dir) {
  check_calibration_date(date);
  check_power_split(read_json_file(split_path), split_path);
  Json model = read_json_file(base_path);
  const GpuModel base = GpuModel::from_json(model, base_path);
  const std::vector<std::string> names = split_loop_names(split_path, "fit");
  Progress progress("calibrate the activity power model", names.size() + 1);
  Json left_out = Json::array();
  const LoopRecordings where(split_path, suite_dir, window_dir);
  const std::vector<LoopData> loops = load_fit_loops(where, names, base, progress, left_out);
  if (loops.size() < kCoefficients)
    throw InputError(split_path, "fit.micro", "expected at least " + std::to_string(kCoefficients) + " loops with operator shapes to fit");

  const double f_max = base.max_sm_mhz(), f_min = base.sm_clocks_mhz().front();
  struct Candidate {
    double err = std::numeric_limits<double>::infinity(), floor = 1, knee = 0, ramp_s = 0;
    std::vector<double> coef;
  };
  auto fit_curve = [&](double floor, double knee, double ramp_s) {
    std::vector<std::vector<double>> a;
    std::vector<double> b;
    for (const LoopData& l : loops) {
      std::vector<double> x = features(l, floor, knee, f_max, ramp_s);
      for (double& v : x) v /= l.measured_w;  // relative error
      a.push_back(x);
      b.push_back(target(l) / l.measured_w);
    }
    Candidate cand{0, floor, knee, ramp_s, nonnegative_least_squares(a, b)};
    for (std::size_t r = 0; r < a.size(); ++r) {
      double p = 0;
      for (int j = 0; j < kCoefficients; ++j) p += a[r][static_cast<std::size_t>(j)] * cand.coef[static_cast<std::size_t>(j)];
      cand.err += std::fabs(p - b[r]) / static_cast<double>(a.size());
    }
    return cand;
  };
  Candidate best;
  Json surface = Json::array();
  std::vector<Candidate> grid;
  for (double ramp_s : {0.0, 1e-6, 2e-6, 3e-6, 5e-6, 7.5e-6, 1e-5})
    for (int fi = 0; fi <= 8; ++fi) {
      const double floor = 0.55 + 0.05 * fi;
      for (double knee = 600; knee <= std::min(1700.0, f_max - 100); knee += 100) {
        grid.push_back(fit_curve(floor, knee, ramp_s));
        surface.push_back({floor, knee, ramp_s, 100 * grid.back().err});
        if (grid.back().err < best.err) best = grid.back();
      }
    }
  // The loops ran at the clocks the card chose (throttled GEMMs down to ~1350 MHz on the H200): below that the
  // curve is not seen, and many floor/knee pairs fit alike. Among the curves within 0.05 points of the best
  // MAPE, the one closest to the base's (its stated prior) is kept: the data decide where they reach, the prior
  // elsewhere.
  double best_distance = std::numeric_limits<double>::infinity();
  const Candidate fitted_best = best;
  for (const Candidate& cand : grid) {
    if (cand.err > fitted_best.err + 0.0005 || cand.ramp_s != fitted_best.ramp_s) continue;
    double d = 0;
    for (double f : base.sm_clocks_mhz()) d += std::fabs(relative_v(f, cand.floor, cand.knee, f_max) - base.relative_voltage(f) / base.relative_voltage(f_max));
    if (d < best_distance) best_distance = d, best = cand;
  }
  progress.advance();
  std::vector<double> c = best.coef;
  for (double& v : c) v = round_to(v, 0.001);

  model["voltage_curve"]["points"] = Json::array({Json::array({f_min, round_to(best.floor, 0.01)}),
                                                    Json::array({best.knee, round_to(best.floor, 0.01)}), Json::array({f_max, 1.0})});
  model["activity"] = {{"busy_w", c[0]},
                       {"tensor_pj_per_flop", {{"bf16", c[1]}, {"fp8", c[2]}, {"tf32", c[3]}}},
                       {"fma_pj_per_flop", c[4]},
                       {"alu_pj_per_op", c[5]},
                       {"memory_pj_per_byte", c[6]},
                       {"memory_fill_pj_per_byte", c[8]},
                       {"copy_engine_w", c[7]},
                       {"copy_engine_pj_per_byte", c[10]},
                       {"mma_sync_extra_pj_per_flop", c[9]},
                       {"ramp_s", best.ramp_s}};
  const double floor = round_to(best.floor, 0.01);
  const Json fp64 = fit_late_term(LateTerm::fp64, split_path, base, c, floor, best.knee, f_max, best.ramp_s);
  const Json unvectorised = fit_late_term(LateTerm::unvectorised, split_path, base, c, floor, best.knee, f_max, best.ramp_s);
  const double unvectorised_pj = unvectorised.is_null() ? 0.0 : unvectorised["unvectorised_pj_per_byte"].get<double>();
  double mape = 0;
  const Json rows = priced_fit_loops(loops, c, unvectorised_pj, floor, best.knee, f_max, best.ramp_s, mape);
  Json& prov = model["provenance"];
  const std::string ref = "dvfs-sim calibrate --power-suite on the fit loops of " + split_path + " (" +
                          std::to_string(loops.size()) + " H200 kernel loops, " + suite_dir + "); in-sample MAPE " +
                          std::to_string(std::round(mape * 100) / 100).substr(0, 4) + " %";
  set_provenance(prov, "/activity", "fit",
                 "non-negative least squares of the loops' relative power error at their recorded clocks; ramp_s by grid "
                 "(0-10 us) with the voltage curve, " + ref);
  set_provenance(prov, "/voltage_curve", "fit",
                 "voltage floor and knee: grid search (floor 0.55-0.95, knee 600-1700 MHz); of the curves within 0.05 points "
                 "of the best MAPE, the closest to the base's estimate (the loops see only the clocks the card chose, "
                 "down to ~1350 MHz under the cap: below that the curve is the base's prior, not a measurement), " + ref);
  add_late_term(model, LateTerm::fp64, fp64);
  add_late_term(model, LateTerm::unvectorised, unvectorised);
  std::size_t over_window = 0;
  for (const LoopData& l : loops) over_window += where.measured_over_profiled_window(l.name);
  prov["power_suite_calibration"] = {{"command", command}, {"date", date}, {"split", split_path}, {"data", suite_dir},
                                     {"window_data", window_dir.empty() ? "the split's profiled_window.folder" : window_dir},
                                     {"loops_measured_over_their_profiled_window", over_window},
                                     {"fit_loops", loops.size()}, {"in_sample_mape_pct", mape}, {"left_out", left_out}};
  PowerSuiteCalibration out;
  out.model = model;
  Json coef = Json::object();
  for (int j = 0; j < kCoefficients; ++j) coef[kCoefficientNames[j]] = c[static_cast<std::size_t>(j)];
  out.report = {{"voltage_floor", round_to(best.floor, 0.01)}, {"voltage_knee_mhz", best.knee}, {"ramp_s", best.ramp_s},
                {"voltage_curve", "fitted where the loops ran (>= ~1350 MHz); nearest to the base's estimate below"},
                {"voltage_grid_mape_pct", surface}, {"coefficients", coef},
                {"loops", rows}, {"in_sample_mape_pct", mape}, {"left_out", left_out}};
  if (!fp64.is_null()) out.report["fp64_tensor_energy"] = fp64;
  if (!unvectorised.is_null()) out.report["unvectorised_bytes"] = unvectorised;
  return out;
}

std::string format_power_suite_calibration(const PowerSuiteCalibration& c) {
  std::ostringstream os;
  const Json& r = c.report;
  os << std::fixed << std::setprecision(3);
  os << "activity power model of " << c.model.value("name", "") << ": voltage floor " << r["voltage_floor"].get<double>()
     << " up to " << std::setprecision(0) << r["voltage_knee_mhz"].get<double>() << " MHz (" << r["voltage_curve"].get<std::string>()
     << "), ramp " << std::setprecision(1) << 1e6 * r["ramp_s"].get<double>() << " us\n" << std::setprecision(3);
  for (auto it = r["coefficients"].begin(); it != r["coefficients"].end(); ++it)
    os << "  " << std::left << std::setw(14) << it.key() << std::right << std::setw(10) << it->get<double>() << "\n";
  os << "fit loop                          measured W  fitted W   error\n" << std::setprecision(1);
  for (const auto& l : r["loops"])
    os << std::left << std::setw(34) << l["loop"].get<std::string>() << std::right << std::setw(10)
       << l["measured_w"].get<double>() << std::setw(10) << l["fitted_w"].get<double>() << std::setw(7) << std::showpos
       << l["error_pct"].get<double>() << std::noshowpos << " %\n";
  os << "in-sample MAPE " << std::setprecision(2) << r["in_sample_mape_pct"].get<double>()
     << " % (held-out loops: dvfs-sim validate --models)\n";
  for (const auto& [block, key, what] : {std::tuple{"fp64_tensor_energy", "fp64_pj_per_flop", "fp64 tensor FLOP"},
                                          std::tuple{"unvectorised_bytes", "unvectorised_pj_per_byte", "byte of the non-vectorised loop"}}) {
    if (!r.contains(block)) continue;
    const Json& f = r[block];
    os << what << " (fit after, the rest fixed): " << std::setprecision(3) << f[key].get<double>() << " pJ\n" << std::setprecision(1);
    for (const auto& l : f["loops"])
      os << std::left << std::setw(34) << l["loop"].get<std::string>() << std::right << std::setw(10) << l["measured_w"].get<double>()
         << std::setw(10) << l["fitted_w"].get<double>() << std::setw(7) << std::showpos << l["error_pct"].get<double>()
         << std::noshowpos << " %\n";
  }
  for (const auto& l : r["left_out"])
    os << "left out of the fit: " << l["loop"].get<std::string>() << " (" << std::setprecision(0)
       << 100 * l["priced_by_shapes_share"].get<double>() << " % of its kernel time has operator shapes)\n";
  return os.str();
}

}  // namespace dvfs
