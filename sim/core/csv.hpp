#pragma once
// Splits one CSV line at commas (no quoting: the measured-data formats dvfs-sim reads have none),
// trimming surrounding spaces and a trailing carriage return from each cell.
#include <sstream>
#include <string>
#include <vector>

namespace dvfs {

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream is(line);
  while (std::getline(is, cell, ',')) {
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
    out.push_back(cell);
  }
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

}  // namespace dvfs
