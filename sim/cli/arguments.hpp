#pragma once
// Small helpers the commands share for their arguments and outputs.
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/limits.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace dvfs {

// "a, b,c" -> {"a", "b", "c"}: option `opt`'s comma-separated items, spaces around them dropped; an empty item ("a,,b",
// ",") is an InputError naming the option (it was skipped, so "--policies ," compared nothing), and so is a space inside
// one ("16 32": spaces were deleted, and --sizes "16 32" ran one fleet of 1632 GPUs).
inline std::vector<std::string> split_commas(const std::string& opt, const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  auto end_item = [&] {
    const auto first = cur.find_first_not_of(" \t"), last = cur.find_last_not_of(" \t");
    if (first == std::string::npos) throw InputError(opt, "", "expected comma-separated items with none empty, got \"" + s + "\"");
    const std::string item = cur.substr(first, last - first + 1);
    if (item.find_first_of(" \t") != std::string::npos)
      throw InputError(opt, "", "expected comma-separated items with no space inside one (\"a,b\" or \"a, b\"), got \"" + s + "\"");
    out.push_back(item);
    cur.clear();
  };
  for (char c : s) {
    if (c == ',') end_item();
    else cur += c;
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

// --power-cap's value (run, validate --perseus, synth): a limit > 0 W; 0 would read as "no limit".
inline double parse_power_cap(const std::string& text) {
  const double w = parse_number("--power-cap", text, "a power limit in W (> 0)");
  if (!(w > 0)) throw InputError("--power-cap", "", "expected a power limit > 0 W (0 read as no limit)");
  return w;
}

// --budget's value (compare, synth): a slowdown budget from 0 to kMaxSlowdownBudgetPct %.
inline double parse_budget(const std::string& text) {
  const double b = parse_number("--budget", text, "a slowdown budget in % (0 to 1000)");
  if (!(b >= 0) || b > kMaxSlowdownBudgetPct)
    throw InputError("--budget", "", "expected a slowdown budget from 0 to 1000 %, got " + text);
  return b;
}

// --trace-gpus without --trace-out would select nothing to write, without a word (run, synth).
inline void require_trace_out_for_gpus(const std::string& trace_gpus, const std::string& trace_out) {
  if (!trace_gpus.empty() && trace_out.empty())
    throw InputError("--trace-gpus", "", "expected with --trace-out (it chooses the GPUs the trace holds)");
}

// `-o FILE`: the command's JSON result, indented; a file that cannot be written is an InputError naming it.
inline void write_json_output(const std::string& path, const Json& doc, const std::string& what) {
  std::ofstream f(path);
  f << doc.dump(2) << "\n";
  if (!f) throw InputError(path, "", "cannot write the " + what);
}

}  // namespace dvfs
