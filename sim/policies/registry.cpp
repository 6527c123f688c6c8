#include "sim/policies/registry.hpp"

#include "sim/core/errors.hpp"

#include <algorithm>
#include <stdexcept>

namespace dvfs {

const char* to_string(PolicyKind k) {
  switch (k) {
    case PolicyKind::online: return "online";
    case PolicyKind::planned: return "planned";
    case PolicyKind::pipeline: return "pipeline";
  }
  return "?";
}

bool PolicyEntry::accepts(const std::string& key) const {
  return std::find(keys.begin(), keys.end(), key) != keys.end() ||
         std::find(scenario_keys.begin(), scenario_keys.end(), key) != scenario_keys.end();
}

void PolicyRegistry::add(PolicyEntry e) {
  if (e.name.empty() || find(e.name)) throw std::logic_error("policy registry: empty or duplicate name \"" + e.name + "\"");
  entries_.push_back(std::move(e));
}

const PolicyEntry* PolicyRegistry::find(const std::string& name) const {
  for (const PolicyEntry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const PolicyEntry& PolicyRegistry::at(const std::string& name, const std::string& file, const std::string& field) const {
  if (const PolicyEntry* e = find(name)) return *e;
  throw InputError(file, field, "unknown policy \"" + name + "\" (expected one of: " + join_names(names()) + ")");
}

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> out;
  for (const PolicyEntry& e : entries_) out.push_back(e.name);
  return out;
}

std::vector<std::string> PolicyRegistry::names(PolicyKind kind) const {
  std::vector<std::string> out;
  for (const PolicyEntry& e : entries_)
    if (e.kind == kind) out.push_back(e.name);
  return out;
}

std::vector<std::string> PolicyRegistry::names_accepting(const std::string& key, std::optional<PolicyKind> kind) const {
  std::vector<std::string> out;
  for (const PolicyEntry& e : entries_)
    if (e.accepts(key) && (!kind || e.kind == *kind)) out.push_back(e.name);
  return out;
}

std::vector<std::string> PolicyRegistry::keys() const {
  std::vector<std::string> out;
  for (const PolicyEntry& e : entries_)
    for (const std::string& k : e.keys)
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  return out;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace dvfs
