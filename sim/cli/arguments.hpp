#pragma once
// Small helpers the commands share for their arguments and outputs.
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"

#include <fstream>
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

// `-o FILE`: the command's JSON result, indented; a file that cannot be written is an InputError naming it.
inline void write_json_output(const std::string& path, const Json& doc, const std::string& what) {
  std::ofstream f(path);
  f << doc.dump(2) << "\n";
  if (!f) throw InputError(path, "", "cannot write the " + what);
}

}  // namespace dvfs
