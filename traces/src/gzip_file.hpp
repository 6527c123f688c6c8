#pragma once
#include "sim/core/json_util.hpp"

#include <string>

namespace dvfs {
// Reads a whole file; gzip-compressed files (by magic bytes) are inflated. A truncated or corrupt
// gzip stream is an InputError naming the file.
std::string read_maybe_gzip(const std::string& path);
// The same file parsed as JSON; malformed JSON is an InputError naming the file.
Json read_json_maybe_gzip(const std::string& path);
}  // namespace dvfs
