#pragma once
// Entries of one folder numbered by rank: <prefix>0<suffix>, <prefix>1<suffix>, ... (rank folders rank0, rank1, ...;
// Chakra rank files P.0.et, P.1.et, ...). One scan of the folder, one set of rules for what a rank number is.
#include <string>
#include <vector>

namespace dvfs {

struct RankNumbering {
  std::string prefix;                  // a path: "dir/rank", "dir/P." (its file-name part starts every entry's name)
  std::vector<std::string> suffixes;   // "" for folders; ".et", ".et.gz" (where both exist, the first listed wins)
  bool directories = false;            // folders, else files
  std::string noun;                    // "rank folders", "rank files" (what the messages call them)
  long max_ranks = 0;
};

// The entries' paths (prefix + N + suffix) in rank order; empty where none is there. A name that is the prefix, a
// signed or unsigned number and a suffix is a rank entry; one spelt otherwise (sign, leading zeros, over 9 digits),
// a rank missing below the highest, or more than max_ranks entries is refused naming the folder and the entry.
std::vector<std::string> rank_numbered_entries(const RankNumbering& numbering);

}  // namespace dvfs
