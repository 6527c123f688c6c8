#include "models/src/gpu_model.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>

namespace dvfs {

namespace {

// The kernel class `name` names, or an error at `key` of `r` listing the classes (model keys that name a class).
KernelClass class_or_fail(const JsonReader& r, const char* key, const std::string& name) {
  KernelClass c;
  if (!kernel_class_from_string(name, c))
    r.fail(key, "unknown kernel class (expected gemm, attention, elementwise, reduction, normalization, copy, optimizer, "
                "communication, other)");
  return c;
}

std::vector<double> read_clock_list(const JsonReader& parent, const char* key) {
  const Json& j = parent.raw(key);
  std::vector<double> out;
  if (j.is_object()) {
    JsonReader r(j, parent.file(), parent.field(key));
    r.only_keys({"min", "max", "step"});
    double lo = r.number_in("min", kMinModelClockMhz, kMaxModelClockMhz, "MHz"),
           hi = r.number_in("max", kMinModelClockMhz, kMaxModelClockMhz, "MHz"), step = r.positive("step");
    if (hi < lo) r.fail("max", "expected max >= min");
    if ((hi - lo) / step + 1 > kMaxClockSteps) {
      char got[64];
      std::snprintf(got, sizeof got, "%g MHz gives %.3g", step, (hi - lo) / step + 1);
      r.fail("step", "expected at most " + std::to_string(static_cast<long>(kMaxClockSteps)) + " clocks from min to max (step " + got + ")");
    }
    for (double f = lo; f <= hi + 1e-9; f += step) out.push_back(std::round(f * 1000.0) / 1000.0);
  } else if (j.is_array()) {
    if (j.size() > static_cast<std::size_t>(kMaxClockSteps))
      parent.fail(key, "expected at most " + std::to_string(static_cast<long>(kMaxClockSteps)) + " clocks");
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_number() || !(j[i].get<double>() >= kMinModelClockMhz && j[i].get<double>() <= kMaxModelClockMhz)) {
        std::ostringstream os;
        os << "expected clocks from " << kMinModelClockMhz << " to " << kMaxModelClockMhz << " MHz (element " << i << ")";
        parent.fail(key, os.str());
      }
      out.push_back(j[i].get<double>());
    }
  } else {
    parent.fail(key, "expected a list of MHz values or {min, max, step}");
  }
  if (out.empty()) parent.fail(key, "expected at least one clock");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double share(const JsonReader& r, const char* key, double fallback) {
  double v = r.number_or(key, fallback);
  if (v < 0 || v > 1) r.fail(key, "expected a share in [0, 1], got " + std::to_string(v));
  return v;
}

ClassCoefficients read_coefficients(const JsonReader& c) {
  c.only_keys({"time_sm", "time_mem", "dynamic_w", "sm_share"});
  ClassCoefficients cc;
  cc.time_sm = share(c, "time_sm", cc.time_sm);
  cc.time_mem = share(c, "time_mem", cc.time_mem);
  if (cc.time_sm + cc.time_mem > 1.0 + 1e-12) c.fail("time_mem", "expected time_sm + time_mem <= 1");
  cc.dynamic_w = c.number_in("dynamic_w", 0, kMaxModelPowerW, "W");
  cc.sm_share = share(c, "sm_share", cc.sm_share);
  return cc;
}

NativeGovernorParams read_governor(const JsonReader& g) {
  NativeGovernorParams gp;
  g.only_keys({"control_period_s", "window_s", "target_fraction", "down_gain_steps_per_w",
               "up_steps_per_period", "up_margin_w"});
  // The window holds window_s / control_period_s samples: 1e20 s crashed, 1e-12 s periods ran out of memory.
  gp.control_period_s = g.number_in("control_period_s", kMinGovernorPeriodS, kMaxGovernorPeriodS, "s");
  gp.window_s = g.number_in("window_s", kMinGovernorPeriodS, kMaxGovernorWindowS, "s");
  if (gp.window_s < gp.control_period_s) g.fail("window_s", "expected window_s >= control_period_s");
  gp.target_fraction = g.positive("target_fraction");
  // (0, 2]: calibrate --profile tries targets a little above the cap (p_max x 1.05 / cap) among its candidates
  if (gp.target_fraction > 2) g.fail("target_fraction", "expected a fraction of the power cap in (0, 2]");
  gp.down_gain_steps_per_w = g.number_in("down_gain_steps_per_w", 0, kMaxClockSteps, "clock steps per W");
  gp.up_steps_per_period = g.number_in("up_steps_per_period", 0, kMaxClockSteps, "clock steps");
  // The governor raises the clock by whole table steps: 1.5 acted as 1 (truncated), silently.
  if (gp.up_steps_per_period != std::floor(gp.up_steps_per_period)) {
    std::ostringstream os;
    os << "expected a whole number of clock steps (0 to " << kMaxClockSteps << "), got " << g.raw("up_steps_per_period").dump();
    g.fail("up_steps_per_period", os.str());
  }
  gp.up_margin_w = g.number_in("up_margin_w", 0, kMaxModelPowerW, "W");
  return gp;
}

ActivityPower read_activity(const JsonReader& a) {
  a.only_keys({"busy_w", "tensor_pj_per_flop", "fma_pj_per_flop", "alu_pj_per_op", "memory_pj_per_byte",
               "memory_fill_pj_per_byte", "copy_engine_w", "copy_engine_pj_per_byte", "ramp_s", "mma_sync_extra_pj_per_flop",
               "unvectorised_pj_per_byte"});
  ActivityPower p;
  p.present = true;
  p.busy_w = a.number_in("busy_w", 0, kMaxModelPowerW, "W");
  auto pj = [](const JsonReader& r, const char* key) { return r.number_in(key, 0, kMaxModelPjPerUnit, "pJ"); };
  JsonReader t = a.child("tensor_pj_per_flop");
  t.only_keys({"bf16", "fp8", "tf32", "fp64"});
  p.tensor_pj[static_cast<int>(TensorPrecision::bf16)] = pj(t, "bf16");
  p.tensor_pj[static_cast<int>(TensorPrecision::fp8)] = pj(t, "fp8");
  p.tensor_pj[static_cast<int>(TensorPrecision::tf32)] = pj(t, "tf32");
  p.fma_pj = pj(a, "fma_pj_per_flop");
  // without its own energy an fp64 tensor FLOP costs what a CUDA-core FMA FLOP costs (split fp64_tensor_energy)
  p.tensor_pj[static_cast<int>(TensorPrecision::fp64)] = t.has("fp64") ? pj(t, "fp64") : p.fma_pj;
  p.alu_pj = pj(a, "alu_pj_per_op");
  // split unvectorised_bytes
  p.unvectorised_pj_per_byte = a.has("unvectorised_pj_per_byte") ? pj(a, "unvectorised_pj_per_byte") : 0.0;
  p.memory_pj_per_byte = pj(a, "memory_pj_per_byte");
  p.memory_fill_pj_per_byte = a.has("memory_fill_pj_per_byte") ? pj(a, "memory_fill_pj_per_byte") : p.memory_pj_per_byte;
  p.copy_engine_w = a.number_in("copy_engine_w", 0, kMaxModelPowerW, "W");
  p.copy_engine_pj_per_byte = a.has("copy_engine_pj_per_byte") ? pj(a, "copy_engine_pj_per_byte") : p.memory_pj_per_byte;
  p.ramp_s = a.has("ramp_s") ? a.number_in("ramp_s", 0, kMaxActivityRampS, "s") : 0.0;
  p.mma_sync_extra_pj = a.has("mma_sync_extra_pj_per_flop") ? pj(a, "mma_sync_extra_pj_per_flop") : 0.0;
  return p;
}

std::vector<NamedPrior> read_named_priors(const JsonReader& list) {
  if (!list.is_array()) list.fail(nullptr, "expected an array of {class, name_contains, scale} objects");
  std::vector<NamedPrior> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    JsonReader e = list.at(i);
    e.only_keys({"class", "name_contains", "scale", "about"});
    NamedPrior p;
    p.cls = class_or_fail(e, "class", e.string("class"));
    JsonReader needles = e.child("name_contains");
    if (!needles.is_array() || needles.size() == 0) needles.fail(nullptr, "expected a non-empty array of name fragments");
    for (std::size_t j = 0; j < needles.size(); ++j) {
      const Json& n = needles.node()[j];
      if (!n.is_string() || n.get<std::string>().empty()) needles.fail(nullptr, "expected non-empty strings");
      p.name_contains.push_back(n.get<std::string>());
    }
    p.scale = e.non_negative("scale");
    out.push_back(std::move(p));
  }
  return out;
}

PriorRegime read_prior_regime(const JsonReader& r) {
  r.only_keys({"about", "cap_fraction", "below_cap_scales", "price_launch_sized_elementwise"});
  PriorRegime p;
  p.present = true;
  p.price_launch_sized_elementwise = r.boolean_or("price_launch_sized_elementwise", false);
  p.cap_fraction = r.number_in("cap_fraction", 0.05, 1.0, "(a fraction of power.cap_w)");
  JsonReader sc = r.child("below_cap_scales");
  if (!sc.is_object()) sc.fail(nullptr, "expected an object of kernel class -> scale of its prior below the cap");
  for (auto it = sc.node().begin(); it != sc.node().end(); ++it)
    p.below_cap_scale[static_cast<int>(class_or_fail(sc, it.key().c_str(), it.key()))] =
        sc.number_in(it.key().c_str(), 0, kMaxDynamicScale, "(a factor)");
  return p;
}

}  // namespace

GpuModel GpuModel::load(const std::string& path) { return from_json(read_json_file(path), path); }

GpuModel GpuModel::from_json(const Json& doc, const std::string& path) {
  JsonReader r(doc, path, "");
  r.only_keys({"name", "display_name", "status", "sm_count", "clocks", "voltage_curve", "power", "classes",
               "native_governor", "switch_latency", "specs", "provenance", "notes", "computations", "derived_from", "kernels",
               "activity", "class_prior_by_name", "class_prior_regime"});
  GpuModel m;
  m.source_file_ = path;
  m.name_ = r.string("name");
  m.display_name_ = r.string_or("display_name", m.name_);
  m.status_ = r.string("status");
  m.derived_from_ = r.string_or("derived_from", "");
  if (m.status_ != "calibrated" && m.status_ != "datasheet")
    r.fail("status", "expected \"calibrated\" or \"datasheet\", got \"" + m.status_ + "\"");
  m.sm_count_ = static_cast<int>(r.integer_in("sm_count", 1, 1 << 20));
  if (m.sm_count_ <= 0) r.fail("sm_count", "expected a positive integer");

  JsonReader clocks = r.child("clocks");
  clocks.only_keys({"sm_mhz", "mem_mhz", "default"});
  m.sm_clocks_ = read_clock_list(clocks, "sm_mhz");
  m.mem_clocks_ = read_clock_list(clocks, "mem_mhz");
  if (clocks.has("default")) {
    JsonReader d = clocks.child("default");
    d.only_keys({"sm_mhz", "mem_mhz"});
    m.default_clocks_ = {d.number_in("sm_mhz", kMinModelClockMhz, kMaxModelClockMhz, "MHz"),
                         d.number_in("mem_mhz", kMinModelClockMhz, kMaxModelClockMhz, "MHz")};
    m.check_supported(m.default_clocks_, path, "clocks.default");
  } else {
    m.default_clocks_ = m.max_clocks();
  }

  JsonReader vc = r.child("voltage_curve");
  vc.only_keys({"points"});
  JsonReader pts = vc.child("points");
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Json& p = pts.node()[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number() || !(p[1].get<double>() > 0) ||
        !(p[1].get<double>() <= kMaxRelativeVoltage) || !(p[0].get<double>() >= kMinModelClockMhz) ||
        !(p[0].get<double>() <= kMaxModelClockMhz)) {
      std::ostringstream os;
      os << "expected [MHz, relative voltage] pairs, MHz " << kMinModelClockMhz << " to " << kMaxModelClockMhz
         << ", voltage in (0, " << kMaxRelativeVoltage << "] (element " << i << ")";
      pts.fail(nullptr, os.str());
    }
    m.voltage_points_.emplace_back(p[0].get<double>(), p[1].get<double>());
  }
  if (m.voltage_points_.empty()) pts.fail(nullptr, "expected at least one point");
  for (std::size_t i = 1; i < m.voltage_points_.size(); ++i)
    if (m.voltage_points_[i].first <= m.voltage_points_[i - 1].first)
      pts.fail(nullptr, "expected points in increasing MHz order");
  for (std::size_t i = 1; i < m.voltage_points_.size(); ++i)  // falling voltage gave 290 kW at the lowest clock
    if (m.voltage_points_[i].second < m.voltage_points_[i - 1].second)
      pts.fail(nullptr, "expected a voltage that does not fall as the clock rises (element " + std::to_string(i) + ")");

  JsonReader pw = r.child("power");
  pw.only_keys({"idle_w", "idle_sm_fraction", "cap_w", "dynamic_scale"});
  m.idle_w_ = pw.number_in("idle_w", 0, kMaxModelPowerW, "W");
  m.idle_sm_fraction_ = share(pw, "idle_sm_fraction", 0.0);
  m.cap_w_ = pw.number_in("cap_w", 0, kMaxModelPowerW, "W");
  if (m.cap_w_ <= m.idle_w_) pw.fail("cap_w", "expected a power cap above idle_w");
  m.dynamic_scale_ = pw.has("dynamic_scale") ? pw.number_in("dynamic_scale", 0, kMaxDynamicScale, "(a factor)") : 1.0;
  if (!(m.dynamic_scale_ > 0)) pw.fail("dynamic_scale", "expected a factor > 0");

  JsonReader cls = r.child("classes");
  for (auto it = cls.node().begin(); it != cls.node().end(); ++it) class_or_fail(cls, it.key().c_str(), it.key());
  for (int i = 0; i < kKernelClassCount; ++i) {
    const char* cname = to_string(static_cast<KernelClass>(i));
    m.classes_[i] = read_coefficients(cls.child(cname));
  }
  if (r.has("class_prior_by_name")) m.named_priors_ = read_named_priors(r.child("class_prior_by_name"));
  if (r.has("class_prior_regime")) m.prior_regime_ = read_prior_regime(r.child("class_prior_regime"));
  if (r.has("computations")) {
    JsonReader comp = r.child("computations");
    for (auto it = comp.node().begin(); it != comp.node().end(); ++it)
      m.computations_.emplace_back(it.key(), read_coefficients(comp.child(it.key().c_str())));
  }
  if (r.has("kernels")) {
    JsonReader kr = r.child("kernels");
    for (auto it = kr.node().begin(); it != kr.node().end(); ++it) {
      JsonReader k = kr.child(it.key().c_str());
      k.only_keys({"time_sm", "time_mem"});
      ClassCoefficients cc;
      cc.time_sm = share(k, "time_sm", 0.0);
      cc.time_mem = share(k, "time_mem", 0.0);
      if (!k.has("time_sm")) k.fail("time_sm", "missing: expected the kernel's share of time that scales with 1/f_sm");
      if (cc.time_sm + cc.time_mem > 1.0 + 1e-12) k.fail("time_mem", "expected time_sm + time_mem <= 1");
      m.kernel_overrides_.emplace_back(it.key(), cc);
    }
  }
  if (r.has("specs")) {
    JsonReader sp = r.child("specs");
    if (sp.has("bf16_dense_tflops")) m.specs_.bf16_dense_tflops = sp.positive("bf16_dense_tflops");
    sp.only_keys({"bf16_dense_tflops", "mem_bandwidth_gbs", "memory_gb", "interconnect_gbs", "nic_gbs"});
    if (sp.has("mem_bandwidth_gbs")) m.specs_.mem_bandwidth_gbs = sp.positive("mem_bandwidth_gbs");
    if (sp.has("memory_gb")) m.specs_.memory_gb = sp.positive("memory_gb");
    if (sp.has("interconnect_gbs")) m.specs_.interconnect_gbs = sp.positive("interconnect_gbs");
    if (sp.has("nic_gbs")) m.specs_.nic_gbs = sp.positive("nic_gbs");
  }

  if (r.has("native_governor")) m.governor_ = read_governor(r.child("native_governor"));
  JsonReader sl = r.child("switch_latency");
  sl.only_keys({"sm", "mem", "firmware_s"});
  m.latency_.sm = read_domain_latency(sl.child("sm"));
  if (sl.has("mem")) {
    m.latency_.mem = read_domain_latency(sl.child("mem"));
  } else {
    // A copy of the SM domain, except its target scaling, whose points are SM clocks.
    m.latency_.mem = m.latency_.sm;
    m.latency_.mem.target_scaling.clear();
  }
  m.latency_.firmware_s = sl.number_in("firmware_s", 0, kMaxSwitchLatencyS, "s");

  if (r.has("activity")) m.activity_ = read_activity(r.child("activity"));
  m.provenance_ = r.raw("provenance");
  if (!m.provenance_.is_object()) r.fail("provenance", "expected an object mapping JSON pointers to sources");
  m.build_tables();
  return m;
}

double GpuModel::relative_voltage(double f) const {
  const auto& p = voltage_points_;
  if (f <= p.front().first) return p.front().second;
  if (f >= p.back().first) return p.back().second;
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (f <= p[i].first) {
      double t = (f - p[i - 1].first) / (p[i].first - p[i - 1].first);
      return p[i - 1].second + t * (p[i].second - p[i - 1].second);
    }
  }
  return p.back().second;
}

void GpuModel::build_tables() {
  const double fmax = max_sm_mhz(), vmax = relative_voltage(fmax), mmax = max_mem_mhz();
  const std::size_t ns = sm_clocks_.size(), nm = mem_clocks_.size();
  g_tab_.resize(ns);
  v2_tab_.resize(ns);
  idle_w_tab_.resize(ns);
  sm_ratio_.resize(ns);
  mem_ratio_.resize(nm);
  for (std::size_t j = 0; j < nm; ++j) mem_ratio_[j] = mmax / mem_clocks_[j];
  for (std::size_t i = 0; i < ns; ++i) {
    double v = relative_voltage(sm_clocks_[i]) / vmax;
    g_tab_[i] = v * v * sm_clocks_[i] / fmax;
    v2_tab_[i] = v * v;
    sm_ratio_[i] = fmax / sm_clocks_[i];
    idle_w_tab_[i] = idle_w_ * (1.0 - idle_sm_fraction_ + idle_sm_fraction_ * g_tab_[i]);
  }
  dyn_tab_.assign(static_cast<std::size_t>(kKernelClassCount) * ns * nm, 0.0);
  for (int c = 0; c < kKernelClassCount; ++c)
    for (std::size_t i = 0; i < ns; ++i)
      for (std::size_t j = 0; j < nm; ++j) {
        const ClassCoefficients& cc = classes_[c];
        dyn_tab_[(static_cast<std::size_t>(c) * ns + i) * nm + j] =
            dynamic_scale_ * cc.dynamic_w * (cc.sm_share * g_tab_[i] + (1.0 - cc.sm_share) * mem_clocks_[j] / mmax);
      }
}

GpuModel GpuModel::bound_to(const std::vector<std::string>& names) const {
  GpuModel b = *this;
  b.at_cap_share_ = 1;  // a new binding starts from the at-cap priors (bound_to_workload places it again)
  b.regime_scale_.fill(1.0);
  b.price_launch_elementwise_ = false;
  b.name_override_.assign(names.size(), -1);
  b.name_prior_.assign(names.size(), -1);
  for (std::size_t i = 0; i < names.size() && !named_priors_.empty(); ++i)
    for (std::size_t p = 0; p < named_priors_.size() && b.name_prior_[i] < 0; ++p)
      for (const std::string& n : named_priors_[p].name_contains)
        if (names[i].find(n) != std::string::npos) {
          b.name_prior_[i] = static_cast<int>(p);
          break;
        }
  if (kernel_overrides_.empty()) return b;
  std::unordered_map<std::string, int> index;
  for (std::size_t i = 0; i < kernel_overrides_.size(); ++i) index.emplace(kernel_overrides_[i].first, static_cast<int>(i));
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto it = index.find(names[i]);
    if (it != index.end()) b.name_override_[i] = it->second;
  }
  return b;
}

GpuModel GpuModel::in_prior_regime(double at_cap_share) const {
  GpuModel m = *this;
  if (!prior_regime_.present) return m;
  m.at_cap_share_ = std::isfinite(at_cap_share) ? std::clamp(at_cap_share, 0.0, 1.0) : 1.0;
  for (int c = 0; c < kKernelClassCount; ++c) m.regime_scale_[c] = m.below_cap_priors() ? prior_regime_.below_cap_scale[c] : 1.0;
  m.price_launch_elementwise_ = m.below_cap_priors() && prior_regime_.price_launch_sized_elementwise;
  return m;
}

std::size_t GpuModel::bound_kernel_names() const {
  return static_cast<std::size_t>(std::count_if(name_override_.begin(), name_override_.end(), [](int o) { return o >= 0; }));
}

double GpuModel::g_at(double f) const {
  const double fmax = max_sm_mhz(), v = relative_voltage(f) / relative_voltage(fmax);
  return v * v * f / fmax;
}

double GpuModel::idle_power_at(double f) const {
  return idle_w_ * (1.0 - idle_sm_fraction_ + idle_sm_fraction_ * g_at(f));
}

double GpuModel::sm_independent_power_w(const ClassCoefficients& cc, double m) const {
  return idle_w_ * (1.0 - idle_sm_fraction_) + dynamic_scale_ * cc.dynamic_w * (1.0 - cc.sm_share) * m / max_mem_mhz();
}

double GpuModel::coefficient_power_at(const ClassCoefficients& cc, double f, double m) const {
  return idle_power_at(f) +
         dynamic_scale_ * cc.dynamic_w * (cc.sm_share * g_at(f) + (1.0 - cc.sm_share) * m / max_mem_mhz());
}

const ClassCoefficients* GpuModel::computation(const std::string& name) const {
  for (const auto& c : computations_)
    if (c.first == name) return &c.second;
  return nullptr;
}

static int find_clock(const std::vector<double>& table, double mhz) {
  auto it = std::lower_bound(table.begin(), table.end(), mhz - 1e-6);
  if (it != table.end() && std::fabs(*it - mhz) < 1e-6) return static_cast<int>(it - table.begin());
  return -1;
}

int GpuModel::sm_index(double mhz) const { return find_clock(sm_clocks_, mhz); }
int GpuModel::mem_index(double mhz) const { return find_clock(mem_clocks_, mhz); }

std::string GpuModel::describe_sm_clocks() const {
  std::ostringstream os;
  os << sm_clocks_.front() << "-" << sm_clocks_.back() << " MHz";
  if (sm_clocks_.size() > 2) os << " in " << (sm_clocks_[1] - sm_clocks_[0]) << " MHz steps";
  return os.str();
}

int GpuModel::sm_index_or_throw(double mhz, const std::string& file, const std::string& field) const {
  const int i = sm_index(mhz);
  if (i >= 0) return i;
  std::ostringstream os;
  os << "SM clock " << mhz << " MHz is not supported by " << name_ << " (expected one of " << describe_sm_clocks() << ")";
  throw InputError(file, field, os.str());
}

int GpuModel::mem_index_or_throw(double mhz, const std::string& file, const std::string& field) const {
  const int i = mem_index(mhz);
  if (i >= 0) return i;
  std::ostringstream os;
  os << "memory clock " << mhz << " MHz is not supported by " << name_ << " (expected one of";
  for (double m : mem_clocks_) os << " " << m;
  os << " MHz)";
  throw InputError(file, field, os.str());
}

void GpuModel::check_supported(const ClockPair& c, const std::string& file, const std::string& field) const {
  sm_index_or_throw(c.sm_mhz, file, field + ".sm_mhz");
  mem_index_or_throw(c.mem_mhz, file, field + ".mem_mhz");
}

std::string GpuModel::power_cap_problem(double cap_w) const {
  if (cap_w > idle_w_ && cap_w <= cap_w_) return "";
  return printf_text("expected a power cap above %s's idle power (%g W) and at most its board limit (%g W), got %g W", name_.c_str(),
                     idle_w_, cap_w_, cap_w);
}

}  // namespace dvfs
