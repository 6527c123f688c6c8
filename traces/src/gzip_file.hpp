#pragma once
#include <string>

namespace dvfs {
// Reads a whole file; gzip-compressed files (by magic bytes) are inflated. A truncated or corrupt
// gzip stream is an InputError naming the file.
std::string read_maybe_gzip(const std::string& path);
}  // namespace dvfs
