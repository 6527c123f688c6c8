#include "models/src/collective_cost.hpp"

namespace dvfs {

int ring_steps(CollectiveKind kind, int n) { return kind == CollectiveKind::all_reduce ? 2 * (n - 1) : n - 1; }

double ring_flow_bytes(CollectiveKind kind, int n, double bytes) {
  if (kind == CollectiveKind::broadcast) return bytes;
  return ring_steps(kind, n) * bytes / n;
}

int tree_depth(int n) {
  int depth = 0;
  for (int i = n - 1; i > 0; i = (i - 1) / 2) ++depth;
  return depth;
}

double collective_time_s(CollectiveKind kind, bool tree, int n, double bytes, double bw, double latency) {
  if (n <= 1) return 0;
  const double per_s = bw > 0 ? 1.0 / bw : 0.0;
  if (kind == CollectiveKind::all_reduce && tree) {
    // The busiest link: an inner member with two children receives from them and its parent at once.
    const double load = n >= 5 ? 3.0 : n >= 3 ? 2.0 : 1.0;
    return 2.0 * tree_depth(n) * latency + load * bytes * per_s;
  }
  if (kind == CollectiveKind::all_to_all) return latency + (n - 1) * bytes / n * per_s;
  return ring_steps(kind, n) * latency + ring_flow_bytes(kind, n, bytes) * per_s;
}

}  // namespace dvfs
