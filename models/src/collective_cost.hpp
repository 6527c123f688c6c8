#pragma once
// Closed-form cost of a collective on an idle network: what the flow-level engine (collectives.hpp)
// gives when nothing else shares the links, and what folded tensor-parallel groups are charged.
#include "sim/core/workload.hpp"

namespace dvfs {

// Uncontended time of a collective of n members whose links all have this bandwidth (0 = unlimited)
// and one-way latency. `tree` applies to all-reduce only.
double collective_time_s(CollectiveKind kind, bool tree, int members, double bytes, double bandwidth_bps, double latency_s);

// Ring algorithm: chunk steps (all-reduce 2 (n - 1), the others n - 1) and the bytes one member streams
// to its successor over all of them (broadcast: the whole buffer along a chain).
int ring_steps(CollectiveKind kind, int members);
double ring_flow_bytes(CollectiveKind kind, int members, double bytes);

// Depth (edges on the longest root-to-leaf path) of the binary tree over n members.
int tree_depth(int members);

}  // namespace dvfs
