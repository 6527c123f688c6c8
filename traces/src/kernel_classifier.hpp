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

// One rule's regular expression (ECMAScript, case-insensitive), searched anywhere in a name. A pattern that is
// plain text, with at most a leading '^', single characters made optional by '?' and escaped punctuation
// ("nccl", "layer_?norm", "^Optimizer\\."), is matched by a case-insensitive text search that finds a match
// exactly where std::regex_search would, at a fraction of its cost; any other pattern goes to std::regex.
class NamePattern {
 public:
  explicit NamePattern(const std::string& pattern);  // throws std::regex_error as std::regex does
  bool search(const std::string& name) const;
  bool plain() const { return plain_; }

 private:
  struct Token {
    char c;  // lower case
    bool optional;
  };
  bool match_at(const std::string& name, std::size_t at, std::size_t token) const;
  std::regex re_;
  bool plain_ = false, anchored_ = false;
  std::vector<Token> tokens_;
};

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
    NamePattern re;
    KernelClass cls;
  };
  std::vector<Rule> class_rules_;
  std::vector<std::pair<NamePattern, Phase>> phase_rules_;
  std::vector<NamePattern> step_rules_;
  mutable std::unordered_map<std::string, KernelClass> cache_;
};

}  // namespace dvfs
