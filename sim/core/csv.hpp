#pragma once
// Splits one CSV line at commas (no quoting: the measured-data formats dvfs-sim reads have none),
// trimming surrounding spaces, tabs and a trailing carriage return from each cell.
#include <sstream>
#include <string>
#include <vector>

namespace dvfs {

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream is(line);
  while (std::getline(is, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ' || cell.back() == '\t')) cell.pop_back();
    while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.erase(cell.begin());
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

// True for a line with nothing but whitespace (skipped by the readers).
inline bool blank_line(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

// Removes a UTF-8 byte-order mark some editors put at the start of a file.
inline void strip_bom(std::string& line) {
  if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
}

}  // namespace dvfs
