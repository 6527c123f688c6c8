#pragma once
// Classifies device activities by name and annotations by phase, with the ordered regular-expression
// tables in traces/classification.json (first matching rule wins; matching is case-insensitive).
#include "sim/core/workload.hpp"

#include <regex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dvfs {

class Classifier {
 public:
  static Classifier load(const std::string& path);
  static Classifier load_default();  // default_path()
  static std::string default_path();  // <data dir>/traces/classification.json

  KernelClass kernel_class(const std::string& name, ActivityKind kind) const;
  // Phase named by an annotation, or Phase::other when it names none.
  Phase annotation_phase(const std::string& name) const;
  bool is_step_annotation(const std::string& name) const;

 private:
  struct Rule {
    std::regex re;
    KernelClass cls;
  };
  std::vector<Rule> class_rules_;
  std::vector<std::pair<std::regex, Phase>> phase_rules_;
  std::vector<std::regex> step_rules_;
  mutable std::unordered_map<std::string, KernelClass> cache_;
};

}  // namespace dvfs
