#pragma once
#include <string>

namespace dvfs {
// printf-style formatting into a string of whatever length the text needs (a fixed char buffer cut the Kareus study's
// last line silently at 512 bytes). The format is checked against the arguments at compile time.
std::string printf_text(const char* format, ...) __attribute__((format(printf, 1, 2)));
}  // namespace dvfs
