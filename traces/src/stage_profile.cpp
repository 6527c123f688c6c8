#include "traces/src/stage_profile.hpp"

#include "sim/core/csv.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace dvfs {

namespace {


std::string row_field(int line, const std::string& column) {
  return "row " + std::to_string(line) + (column.empty() ? "" : " (" + column + ")");
}

double positive_cell(const std::string& path, int line, const std::string& column, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || !(v > 0))
    throw InputError(path, row_field(line, column), "expected a positive number, got \"" + text + "\"");
  return v;
}

}  // namespace

const ProfilePoint* ProfileSeries::at(double sm_mhz) const {
  for (const auto& p : points)
    if (std::fabs(p.sm_mhz - sm_mhz) < 1e-6) return &p;
  return nullptr;
}

std::vector<std::string> StageProfile::instructions() const {
  std::vector<std::string> out;
  for (const auto& s : series)
    if (std::find(out.begin(), out.end(), s.instruction) == out.end()) out.push_back(s.instruction);
  return out;
}

StageProfile load_stage_profile(const std::string& path) {
  require_regular_file(path, "a stage profile CSV file");
  if (is_directory(path)) throw InputError(path, "", "is a directory (expected a stage profile CSV file)");
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open the stage profile");
  StageProfile p;
  p.file = path;
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, "row 1", "empty file; expected the header stage,instruction,frequency,time,energy");
  strip_bom(line);
  if (line.find('"') != std::string::npos)
    throw InputError(path, "row 1", "quoted cells are not supported (expected plain stage,instruction,frequency,time,energy)");
  const std::vector<std::string> header = split_csv_line(line);
  const char* required[] = {"stage", "instruction", "frequency", "time", "energy"};
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (std::find(std::begin(required), std::end(required), header[i]) == std::end(required))
      throw InputError(path, "row 1", "unknown column \"" + header[i] + "\" (expected stage,instruction,frequency,time,energy)");
    if (!col.emplace(header[i], i).second) throw InputError(path, "row 1", "column \"" + header[i] + "\" appears twice");
  }
  for (const char* r : required)
    if (!col.count(r)) throw InputError(path, "row 1", std::string("missing column \"") + r + "\" (expected stage,instruction,frequency,time,energy)");

  std::map<std::pair<int, std::string>, std::size_t> index;
  std::vector<int> direction;  // per series: +1 ascending, -1 descending, 0 unknown yet
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (blank_line(line)) continue;
    if (line.find('"') != std::string::npos)
      throw InputError(path, row_field(lineno, ""), "quoted cells are not supported");
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != header.size())
      throw InputError(path, row_field(lineno, ""), "expected " + std::to_string(header.size()) + " cells, got " +
                                                        std::to_string(cells.size()));
    const std::string& stage_text = cells[col["stage"]];
    char* end = nullptr;
    const long stage = std::strtol(stage_text.c_str(), &end, 10);
    if (stage_text.empty() || *end != '\0' || stage < 0 || stage > 1000000)
      throw InputError(path, row_field(lineno, "stage"), "expected a stage index 0-1000000, got \"" + stage_text + "\"");
    const std::string& instr = cells[col["instruction"]];
    if (instr.empty()) throw InputError(path, row_field(lineno, "instruction"), "expected a name such as forward or backward");
    ProfilePoint pt;
    pt.line = lineno;
    pt.sm_mhz = positive_cell(path, lineno, "frequency", cells[col["frequency"]]);
    pt.time_s = positive_cell(path, lineno, "time", cells[col["time"]]);
    pt.energy_j = positive_cell(path, lineno, "energy", cells[col["energy"]]);

    auto key = std::make_pair(static_cast<int>(stage), instr);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, p.series.size()).first;
      p.series.push_back({static_cast<int>(stage), instr, {}, lineno});
      direction.push_back(0);
    }
    ProfileSeries& s = p.series[it->second];
    if (!s.points.empty()) {
      const ProfilePoint& prev = s.points.back();
      const int dir = pt.sm_mhz > prev.sm_mhz ? 1 : pt.sm_mhz < prev.sm_mhz ? -1 : 0;
      int& expected = direction[it->second];
      if (dir == 0 || (expected != 0 && dir != expected)) {
        std::ostringstream os;
        os << "frequency " << pt.sm_mhz << " MHz is " << (dir == 0 ? "repeated" : "out of order") << " in stage "
           << stage << " " << instr << " (row " << prev.line << " has " << prev.sm_mhz
           << " MHz); expected strictly monotonic clocks within a series";
        throw InputError(path, row_field(lineno, "frequency"), os.str());
      }
      expected = dir;
    }
    s.points.push_back(pt);
    ++p.rows;
  }
  if (p.series.empty()) throw InputError(path, "", "no data rows after the header");
  p.min_sm_mhz = p.series.front().points.front().sm_mhz;
  for (auto& s : p.series) {
    std::sort(s.points.begin(), s.points.end(), [](const ProfilePoint& a, const ProfilePoint& b) { return a.sm_mhz < b.sm_mhz; });
    p.min_sm_mhz = std::min(p.min_sm_mhz, s.points.front().sm_mhz);
    p.max_sm_mhz = std::max(p.max_sm_mhz, s.points.back().sm_mhz);
  }
  // The Perseus artifact repeats some stages' measurements verbatim (GPT-3 and BLOOM: stages 0-6 are
  // one profile); copies carry no new evidence, so fits and error figures count each once.
  for (std::size_t i = 0; i < p.series.size(); ++i) {
    for (std::size_t j = 0; j < i && p.series[i].duplicate_of < 0; ++j) {
      const auto &a = p.series[i].points, &b = p.series[j].points;
      if (p.series[j].duplicate_of >= 0 || p.series[i].instruction != p.series[j].instruction || a.size() != b.size()) continue;
      bool same = true;
      for (std::size_t k = 0; k < a.size() && same; ++k)
        same = a[k].sm_mhz == b[k].sm_mhz && a[k].time_s == b[k].time_s && a[k].energy_j == b[k].energy_j;
      if (same) p.series[i].duplicate_of = static_cast<int>(j);
    }
    if (p.series[i].duplicate_of < 0) ++p.distinct_series;
  }
  for (const auto& s : p.series) {
    const std::string name = "stage " + std::to_string(s.stage) + " " + s.instruction;
    if (s.points.size() < 3)
      throw InputError(path, row_field(s.first_line, ""), name + " has " + std::to_string(s.points.size()) +
                                                                       " clocks; expected at least 3 to fit a frequency response");
    if (!s.at(p.max_sm_mhz)) {
      std::ostringstream os;
      os << name << " has no row at the profile's highest clock " << p.max_sm_mhz << " MHz (the reference measurement)";
      throw InputError(path, row_field(s.first_line, "frequency"), os.str());
    }
  }
  return p;
}

}  // namespace dvfs
