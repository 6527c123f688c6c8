#include "sim/core/rank_numbered.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <utility>

namespace dvfs {

namespace {

bool all_digits(const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }); }

// The rank part of `name` (between the stem and one of the suffixes) and which suffix it ends with; "" where the
// name is no rank entry ("rankings", "P.x.et", "P.0.et.bak").
std::pair<std::string, std::size_t> rank_part(const std::string& name, const std::string& stem, const std::vector<std::string>& suffixes) {
  if (name.rfind(stem, 0) != 0) return {"", 0};
  for (std::size_t i = 0; i < suffixes.size(); ++i) {
    const std::string& sfx = suffixes[i];
    if (name.size() < stem.size() + sfx.size() || !ends_with(name, sfx)) continue;
    const std::string part = name.substr(stem.size(), name.size() - stem.size() - sfx.size());
    const bool sign = !part.empty() && (part[0] == '+' || part[0] == '-');
    if (all_digits(part.substr(sign ? 1 : 0))) return {part, i};
  }
  return {"", 0};
}

}  // namespace

std::vector<std::string> rank_numbered_entries(const RankNumbering& n) {
  const std::filesystem::path prefix(n.prefix);
  const std::string folder = prefix.has_parent_path() ? prefix.parent_path().string() : std::string(".");
  const std::string stem = prefix.filename().string();
  const std::string first_suffix = n.suffixes.empty() ? "" : n.suffixes.front();
  auto entry_name = [&](long r) { return stem + std::to_string(r) + first_suffix; };
  std::map<long, std::size_t> found;  // rank -> index of its suffix
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return {};
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    const auto [part, suffix] = rank_part(name, stem, n.suffixes);
    if (part.empty() || entry.is_directory(ec) != n.directories) continue;
    const bool canonical = all_digits(part) && part.size() <= 9 && (part == "0" || part[0] != '0');
    if (!canonical)
      throw InputError(folder, name, "expected " + n.noun + " named " + entry_name(0) + ", " + entry_name(1) +
                                         ", ... (a rank number without sign or leading zeros)");
    const long r = std::stol(part);
    const auto it = found.find(r);
    if (it == found.end() || suffix < it->second) found[r] = suffix;
  }
  if (found.size() > static_cast<std::size_t>(n.max_ranks))
    throw InputError(folder, stem + "<N>" + first_suffix, "expected at most " + std::to_string(n.max_ranks) + " " + n.noun +
                                                              " (README \"Limits and bad input\"), got " + std::to_string(found.size()));
  std::vector<std::string> out;
  for (const auto& [r, suffix] : found) {
    if (r != static_cast<long>(out.size()))
      throw InputError(folder, stem + std::to_string(r) + n.suffixes[suffix],
                       "expected " + n.noun + " " + entry_name(0) + " .. " + entry_name(static_cast<long>(found.size()) - 1) +
                           " with none missing (" + entry_name(static_cast<long>(out.size())) + " is not there)");
    out.push_back(n.prefix + std::to_string(r) + n.suffixes[suffix]);
  }
  return out;
}

}  // namespace dvfs
