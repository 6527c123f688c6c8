#pragma once
// Small helpers the commands share for their arguments.
#include <string>
#include <vector>

namespace dvfs {

// "a, b,c" -> {"a", "b", "c"}: comma-separated names, spaces dropped, empty items skipped.
inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace dvfs
