#pragma once
// Collectives as SimGrid communications, at flow level: a collective costs O(members) SimGrid
// activities, not O(members^2) messages, so data-parallel groups of hundreds of replicas stay cheap
// while the flows still share links with everything else on the network (contention is simulated).
//
//  - Every member waits for the last one to arrive (a ring or a tree cannot finish before everybody
//    contributed; a straggler delays the whole group by its lateness).
//  - Ring (NCCL's ring algorithm): each member streams its share of the 2 (n - 1) (all-reduce) or
//    n - 1 (reduce-scatter, all-gather, broadcast) chunk steps to its successor as one flow of
//    steps x bytes / n (broadcast: bytes); the ring moves at its slowest edge, so members leave together
//    when the last flow is done, after (steps - 1) further latencies of the slowest edge. Uncontended
//    this is steps x (latency + bytes / n / bandwidth), the step-by-step ring's closed form.
//  - Tree (all-reduce only, as NCCL): a binary tree rooted at member 0; every edge carries the whole
//    buffer up (reduce) and down (broadcast) at once, as pipelined chunks do, plus 2 x depth latencies.
//  - All-to-all: every member sends bytes / n to every other member at once.
#include "sim/core/workload.hpp"
#include "sim/network/cluster.hpp"
#include "models/src/collective_cost.hpp"

#include <simgrid/s4u.hpp>

#include <string>
#include <utility>
#include <vector>

namespace dvfs {

class Collectives {
 public:
  // Groups are host indices in ring order (member 0 is the tree root). Declare them before the run.
  int add_group(std::vector<int> members);
  std::size_t group_count() const { return groups_.size(); }

  // Ordered host pairs the groups' flows use, to declare as routes.
  std::vector<std::pair<int, int>> route_pairs(AllReduceAlgorithm algorithm) const;

  // With the engine live and the hosts built: synchronisation objects and each group's slowest edge.
  void prepare(const std::vector<simgrid::s4u::Host*>& hosts, AllReduceAlgorithm algorithm);

  // Run by member `rank` (position in the group) of group `group` from its own actor; every member runs
  // the collectives of a group in the same order. Returns once the collective is complete.
  void run(int group, int rank, CollectiveKind kind, double bytes);

 private:
  struct Group {
    std::vector<int> members;
    simgrid::s4u::BarrierPtr barrier;
    double ring_latency_s = 0, tree_latency_s = 0;  // slowest edge of the ring / of the tree
  };
  std::vector<Group> groups_;
  AllReduceAlgorithm algorithm_ = AllReduceAlgorithm::ring;
};

}  // namespace dvfs
