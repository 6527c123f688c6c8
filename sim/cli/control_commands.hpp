#pragma once
// `dvfs-sim control` and `dvfs-sim fleet` (their Command entries are declared in sim/cli/command.hpp).
#include "sim/core/json_util.hpp"

#include <string>

namespace dvfs {
// Sets a dotted key (list items by index) of a scenario document to a JSON value: `--set KEY=JSON`.
void set_key(Json& doc, const std::string& assignment);
}  // namespace dvfs
