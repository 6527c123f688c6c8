#pragma once
#include <string>
#include <string_view>

namespace dvfs {
// printf-style formatting into a string of whatever length the text needs (a fixed char buffer cut the Kareus study's
// last line silently at 512 bytes). The format is checked against the arguments at compile time.
std::string printf_text(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Whether `s` ends with `suffix` (std::string::ends_with is C++20).
inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace dvfs
