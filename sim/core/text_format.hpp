#pragma once
#include <string>
#include <string_view>

namespace dvfs {
// printf-style formatting into a string of whatever length the text needs (a fixed char buffer cut the Kareus study's
// last line silently at 512 bytes). The format is checked against the arguments at compile time.
std::string printf_text(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Whether `s` starts with `prefix` / ends with `suffix` (std::string::starts_with, ends_with are C++20).
inline bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace dvfs
