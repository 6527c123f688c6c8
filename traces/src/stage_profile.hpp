#pragma once
// Per-frequency stage profiles in the Perseus artifact's format: a CSV with the columns
// `stage,instruction,frequency,time,energy` (any order; MHz, s, J), one row per pipeline stage,
// instruction (forward/backward) and SM clock. Rows are grouped into series, one per
// (stage, instruction); within a series the clocks must be strictly monotonic in file order.
#include <string>
#include <vector>

namespace dvfs {

struct ProfilePoint {
  double sm_mhz = 0;
  double time_s = 0;
  double energy_j = 0;
  int line = 0;  // 1-based line in the file, for messages
};

struct ProfileSeries {
  int stage = 0;
  std::string instruction;
  std::vector<ProfilePoint> points;  // ascending clock
  int first_line = 0;                // where the series starts in the file
  int duplicate_of = -1;             // index of an earlier series with identical clocks, times and energies
  const ProfilePoint* at(double sm_mhz) const;
};

struct StageProfile {
  std::string file;
  std::vector<ProfileSeries> series;  // in order of first appearance
  std::size_t distinct_series = 0;    // series that are not exact copies of an earlier one
  std::size_t rows = 0;
  double min_sm_mhz = 0, max_sm_mhz = 0;
  std::vector<std::string> instructions() const;  // distinct, in order of first appearance
};

// Throws InputError naming the file, the row and the problem: missing or unknown columns, a wrong
// number of cells, a value that is not a positive number, a non-monotonic or repeated clock, a series
// with fewer than three clocks or without the profile's highest clock.
StageProfile load_stage_profile(const std::string& path);

}  // namespace dvfs
