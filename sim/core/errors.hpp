#pragma once
// Errors on bad input name the file, the field and what was expected; the CLI prints what() as
// one line and exits with code 2.
#include <stdexcept>
#include <string>

namespace dvfs {

class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, const std::string& field, const std::string& problem);
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  std::string field_;
  std::string problem_;
};

}  // namespace dvfs
