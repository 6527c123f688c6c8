#include "sim/core/errors.hpp"

namespace dvfs {

static std::string compose(const std::string& file, const std::string& field, const std::string& problem) {
  // No file (a command-line option, an argument given in code): the field alone names what was wrong.
  std::string msg = file;
  if (!field.empty()) msg += (msg.empty() ? "" : ": ") + field;
  return msg.empty() ? problem : msg + ": " + problem;
}

InputError::InputError(const std::string& file, const std::string& field, const std::string& problem)
    : std::runtime_error(compose(file, field, problem)), file_(file), field_(field), problem_(problem) {}

}  // namespace dvfs
