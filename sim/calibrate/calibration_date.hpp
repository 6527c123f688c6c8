#pragma once
// The calibration date a fitted model's provenance records: a real calendar date YYYY-MM-DD (2026-02-30 and
// 2025-02-29 were written into provenance). Every calibrate entry point checks it before fitting, so the command line
// and the Python module refuse it alike.
#include "sim/core/errors.hpp"

#include <cstdio>
#include <string>

namespace dvfs {

inline void check_calibration_date(const std::string& date) {
  int y = 0, mo = 0, d = 0;
  char tail = 0;
  const auto refuse = [&](const std::string& why) {
    throw InputError("--date", "", "expected a date YYYY-MM-DD" + why + ", got \"" + date + "\"");
  };
  if (date.size() != 10 || date[4] != '-' || date[7] != '-' || std::sscanf(date.c_str(), "%4d-%2d-%2d%c", &y, &mo, &d, &tail) != 3)
    refuse("");
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (date[i] < '0' || date[i] > '9') refuse("");
  if (mo < 1 || mo > 12) refuse(" (month 01 to 12)");
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  const int days[12] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d < 1 || d > days[mo - 1])
    refuse(" that exists (month " + std::to_string(mo) + " of " + std::to_string(y) + " has " + std::to_string(days[mo - 1]) + " days)");
}

}  // namespace dvfs
