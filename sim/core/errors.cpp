#include "sim/core/errors.hpp"

namespace dvfs {

static std::string compose(const std::string& file, const std::string& field, const std::string& problem) {
  std::string msg = file.empty() ? std::string("<input>") : file;
  if (!field.empty()) msg += ": " + field;
  return msg + ": " + problem;
}

InputError::InputError(const std::string& file, const std::string& field, const std::string& problem)
    : std::runtime_error(compose(file, field, problem)), file_(file), field_(field), problem_(problem) {}

}  // namespace dvfs
