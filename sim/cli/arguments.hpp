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

// "a, b,c" -> {"a", "b", "c"}: option `opt`'s comma-separated items, spaces dropped; an empty item ("a,,b", ",") is
// an InputError naming the option (it was skipped, so "--policies ," compared nothing).
inline std::vector<std::string> split_commas(const std::string& opt, const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  auto end_item = [&] {
    if (cur.empty()) throw InputError(opt, "", "expected comma-separated items with none empty, got \"" + s + "\"");
    out.push_back(cur);
    cur.clear();
  };
  for (char c : s) {
    if (c == ',') end_item();
    else if (c != ' ') cur += c;
  }
  end_item();
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
