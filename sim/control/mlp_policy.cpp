#include "sim/control/mlp_policy.hpp"

#include "sim/core/errors.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

namespace {

std::vector<double> numbers(const JsonReader& r, const char* key, std::size_t expected) {
  const Json& v = r.raw(key);
  if (!v.is_array() || v.size() != expected) r.fail(key, "expected " + std::to_string(expected) + " numbers");
  std::vector<double> out;
  for (const Json& x : v) {
    if (!x.is_number() || !std::isfinite(x.get<double>())) r.fail(key, "expected finite numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

}  // namespace

MlpPolicy MlpPolicy::load(const std::string& path, const std::vector<std::string>& obs, const std::vector<std::string>& act) {
  const Json doc = read_json_file(path);
  JsonReader r(doc, path, "");
  r.only_keys({"format", "observation", "action", "obs_mean", "obs_std", "layers", "action_span", "provenance"});
  if (r.string("format") != "dvfs-sim-mlp-policy/1") r.fail("format", "expected \"dvfs-sim-mlp-policy/1\"");
  auto names = [&](const char* key, const std::vector<std::string>& want) {
    const Json& v = r.raw(key);
    std::vector<std::string> got;
    if (v.is_array())
      for (const Json& x : v)
        if (x.is_string()) got.push_back(x.get<std::string>());
    if (got != want) {
      std::string w;
      for (const auto& s : want) w += (w.empty() ? "" : ", ") + s;
      r.fail(key, "the policy was trained for " + std::to_string(v.is_array() ? v.size() : 0) + " " + key +
                      " values that are not this environment's " + std::to_string(want.size()) + " (" + w + ")");
    }
  };
  names("observation", obs);
  names("action", act);
  MlpPolicy p;
  p.file_ = path;
  p.mean_ = numbers(r, "obs_mean", obs.size());
  p.std_ = numbers(r, "obs_std", obs.size());
  for (double& s : p.std_)
    if (!(s > 0)) r.fail("obs_std", "expected standard deviations > 0");
  const Json& layers = r.raw("layers");
  if (!layers.is_array() || layers.empty()) r.fail("layers", "expected a list of layers");
  std::size_t in = obs.size();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    JsonReader l = JsonReader(layers, path, "layers").at(i);
    l.only_keys({"weight", "bias", "activation"});
    Layer L;
    const Json& w = l.raw("weight");
    if (!w.is_array() || w.empty()) l.fail("weight", "expected a matrix [outputs][inputs]");
    for (const Json& row : w) {
      if (!row.is_array() || row.size() != in) l.fail("weight", "expected rows of " + std::to_string(in) + " inputs");
      std::vector<double> v;
      for (const Json& x : row) {  // a string here was "internal error" (exit 3)
        if (!x.is_number() || !std::isfinite(x.get<double>())) l.fail("weight", "expected finite numbers");
        v.push_back(x.get<double>());
      }
      L.w.push_back(std::move(v));
    }
    L.b = numbers(l, "bias", L.w.size());
    const std::string a = l.string_or("activation", "linear");
    L.activation = a == "tanh" ? 1 : a == "relu" ? 2 : a == "linear" ? 0 : -1;
    if (L.activation < 0) l.fail("activation", "expected tanh, relu or linear, got \"" + a + "\"");
    in = L.w.size();
    p.layers_.push_back(std::move(L));
  }
  if (in != act.size()) r.fail("layers", "the last layer has " + std::to_string(in) + " outputs, expected " + std::to_string(act.size()) + " actions");
  p.provenance_ = doc.value("provenance", Json::object());
  p.action_spec_ = Json::object();
  if (r.has("action_span")) {  // the action mapping the policy was trained with (sim/control/observation.hpp)
    const JsonReader a = r.child("action_span");
    a.only_keys({"target_span", "headroom_w"});
    if (a.has("target_span")) {
      const double span = a.number("target_span");
      if (!(span > 0 && span <= 1)) a.fail("target_span", "expected a fraction of the budget in (0, 1], got " + std::to_string(span));
      p.action_spec_["target_span"] = span;
    }
    if (a.has("headroom_w")) {
      const double w = a.number("headroom_w");
      if (!(w >= 0 && w <= 1e4)) a.fail("headroom_w", "expected 0 to 10000 W, got " + std::to_string(w));
      p.action_spec_["headroom_w"] = w;
    }
  }
  return p;
}

std::vector<double> MlpPolicy::act(const std::vector<double>& o) const {
  std::vector<double> x(o.size());
  for (std::size_t i = 0; i < o.size(); ++i) x[i] = (o[i] - mean_[i]) / std_[i];
  for (const Layer& L : layers_) {
    std::vector<double> y(L.w.size());
    for (std::size_t r = 0; r < L.w.size(); ++r) {
      double s = L.b[r];
      for (std::size_t c = 0; c < x.size(); ++c) s += L.w[r][c] * x[c];
      y[r] = L.activation == 1 ? std::tanh(s) : L.activation == 2 ? std::max(0.0, s) : s;
    }
    x = std::move(y);
  }
  for (double& v : x) v = std::clamp(v, -1.0, 1.0);
  return x;
}

}  // namespace dvfs
