#pragma once
// Small helpers the commands share for their arguments and outputs.
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"

#include <cmath>
#include <cstdlib>
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

// An option's number: the whole text, finite, decimal (strtod's hex form is refused); else an InputError
// "OPT: expected EXPECTED, got "TEXT"".
inline double parse_number(const std::string& opt, const std::string& text, const char* expected) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || text.find_first_of("xX") != std::string::npos)
    throw InputError(opt, "", std::string("expected ") + expected + ", got \"" + text + "\"");
  return v;
}

// `-o FILE`: the command's JSON result, indented; a file that cannot be written is an InputError naming it.
inline void write_json_output(const std::string& path, const Json& doc, const std::string& what) {
  std::ofstream f(path);
  f << doc.dump(2) << "\n";
  if (!f) throw InputError(path, "", "cannot write the " + what);
}

}  // namespace dvfs
