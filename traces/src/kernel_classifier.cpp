#include "traces/src/kernel_classifier.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"

namespace dvfs {

namespace {

NamePattern compile(const JsonReader& r, const char* key, std::size_t i, const std::string& pattern) {
  try {
    return NamePattern(pattern);
  } catch (const std::regex_error& e) {
    r.fail(key, "invalid regular expression at element " + std::to_string(i) + " (\"" + pattern + "\"): " + e.what());
  }
}

std::vector<std::string> string_list(const JsonReader& r, const char* key) {
  const Json& j = r.raw(key);
  if (!j.is_array()) r.fail(key, "expected a list of regular expressions");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) r.fail(key, "expected strings (element " + std::to_string(i) + ")");
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

NamePattern::NamePattern(const std::string& pattern)
    : re_(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::optimize) {
  // Plain text: word characters, ':', '#', '-', ' ' and '\\' + punctuation taken literally, each optionally
  // followed by '?'; '^' only first. Anything else ('.', '*', '+', '|', classes, groups, '$', "\\d") is std::regex's.
  std::size_t k = 0;
  if (!pattern.empty() && pattern[0] == '^') anchored_ = true, k = 1;
  for (; k < pattern.size(); ++k) {
    char c = pattern[k];
    if (c == '\\') {
      if (k + 1 >= pattern.size()) return;
      c = pattern[++k];
      if (is_word(c) || static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) return;  // \d, \s, \b, ...
    } else if (!(is_word(c) || c == ':' || c == '#' || c == '-' || c == ' ')) {
      return;
    }
    const bool optional = k + 1 < pattern.size() && pattern[k + 1] == '?';
    if (optional) {
      ++k;
      if (k + 1 < pattern.size() && (pattern[k + 1] == '?' || pattern[k + 1] == '*' || pattern[k + 1] == '+')) return;
    }
    tokens_.push_back({lower_ascii(c), optional});
  }
  plain_ = true;
}

// Whether tokens token.. match at `at` (a match may end anywhere: the pattern has no '$').
bool NamePattern::match_at(const std::string& name, std::size_t at, std::size_t token) const {
  for (; token < tokens_.size(); ++token) {
    const Token& t = tokens_[token];
    const bool here = at < name.size() && lower_ascii(name[at]) == t.c;
    if (!t.optional) {
      if (!here) return false;
      ++at;
      continue;
    }
    if (here && match_at(name, at + 1, token + 1)) return true;  // greedy first, then without it
  }
  return true;
}

bool NamePattern::search(const std::string& name) const {
  if (!plain_) return std::regex_search(name, re_);
  if (anchored_) return match_at(name, 0, 0);
  for (std::size_t at = 0; at <= name.size(); ++at)
    if (match_at(name, at, 0)) return true;
  return false;
}

Classifier Classifier::load(const std::string& path) {
  Json doc = read_json_file(path);
  JsonReader r(doc, path, "");
  r.only_keys({"provenance", "kernel_classes", "phases", "steps"});
  Classifier c;
  JsonReader rules = r.child("kernel_classes");
  if (!rules.is_array()) rules.fail(nullptr, "expected a list of {class, patterns}");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    JsonReader rule = rules.at(i);
    rule.only_keys({"class", "patterns", "why"});
    KernelClass cls;
    std::string name = rule.string("class");
    if (!kernel_class_from_string(name, cls))
      rule.fail("class", "unknown kernel class \"" + name + "\" (expected gemm, attention, elementwise, reduction, "
                         "normalization, copy, optimizer, communication, other)");
    auto pats = string_list(rule, "patterns");
    for (std::size_t k = 0; k < pats.size(); ++k) c.class_rules_.push_back({compile(rule, "patterns", k, pats[k]), cls});
  }
  JsonReader phases = r.child("phases");
  for (std::size_t i = 0; i < phases.size(); ++i) {
    JsonReader rule = phases.at(i);
    rule.only_keys({"phase", "patterns"});
    std::string name = rule.string("phase");
    Phase p;
    if (name == "forward") p = Phase::forward;
    else if (name == "backward") p = Phase::backward;
    else if (name == "optimizer") p = Phase::optimizer;
    else rule.fail("phase", "expected forward, backward or optimizer, got \"" + name + "\"");
    auto pats = string_list(rule, "patterns");
    for (std::size_t k = 0; k < pats.size(); ++k) c.phase_rules_.emplace_back(compile(rule, "patterns", k, pats[k]), p);
  }
  auto steps = string_list(r, "steps");
  for (std::size_t k = 0; k < steps.size(); ++k) c.step_rules_.push_back(compile(r, "steps", k, steps[k]));
  return c;
}

std::string Classifier::default_path() { return data_dir() + "/traces/classification.json"; }
Classifier Classifier::load_default() { return load(default_path()); }

KernelClass Classifier::kernel_class(const std::string& name, ActivityKind kind) const {
  if (kind != ActivityKind::kernel) return KernelClass::copy;
  auto it = cache_.find(name);
  if (it != cache_.end()) return it->second;
  KernelClass cls = KernelClass::other;
  for (const Rule& rule : class_rules_) {
    if (rule.re.search(name)) {
      cls = rule.cls;
      break;
    }
  }
  cache_.emplace(name, cls);
  return cls;
}

Phase Classifier::annotation_phase(const std::string& name) const {
  for (const auto& [re, phase] : phase_rules_)
    if (re.search(name)) return phase;
  return Phase::other;
}

bool Classifier::is_step_annotation(const std::string& name) const {
  for (const auto& re : step_rules_)
    if (re.search(name)) return true;
  return false;
}

}  // namespace dvfs
