#pragma once
// Several ranks' traces of one distributed job as one workload. Each rank's Kineto trace names itself
// (distributedInfo.rank) and its NCCL kernels name their collective, size and process group ("Collective
// name", "In/Out msg nelems", "dtype", "Group size", "Process Group Name", "Process Group Ranks"). Merging
// unites the name and annotation tables, keeps every rank's kernels and steps, and matches collectives
// across ranks the way NCCL does: the k-th call on a communicator is the same call on every member. A
// mismatch (different counts, kinds or sizes) is an error naming both files.
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"

#include <string>
#include <vector>

namespace dvfs {

struct RankTrace {
  Workload workload;  // one rank (or the ranks of one process)
  std::string file;   // for error messages
  int world_size = -1;  // distributedInfo.world_size (-1 when the trace has none)
  std::string backend;  // distributedInfo.backend ("" when the trace has none)
};

// Traces of unrelated jobs are refused where they provably are (an error naming both files): a rank given
// twice, different world sizes or backends, a rank outside the world size. Where they only look unrelated
// -- different step counts, timelines that do not overlap (clocks of different hosts may also disagree) --
// a line saying why goes to `notes` (when given).
Workload merge_rank_workloads(std::vector<RankTrace> parts, std::vector<std::string>* notes = nullptr);

// Whether all the group's members are in the workload.
bool group_complete(const Workload& wl, int group);
// Whether the engine simulates the group's collectives on the cluster: complete, and of two ranks or more (a group of
// one has no transfer: its NCCL kernel, if the trace has one, did its work on the GPU and keeps its recorded time).
bool group_simulated(const Workload& wl, int group);

// Groups, members and calls of a workload (each group complete or not, simulated or not), and how many calls are
// simulated (group_simulated; a send / receive whose peer is another imported rank) or kept at their recorded
// duration: for summaries.
Json describe_collectives(const Workload& wl);

}  // namespace dvfs
