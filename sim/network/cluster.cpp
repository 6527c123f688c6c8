#include "sim/network/cluster.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

#include <cmath>
#include <sstream>
#include <map>
#include <set>

namespace dvfs {

const char* to_string(Topology t) {
  switch (t) {
    case Topology::node_backbone: return "node-backbone";
    case Topology::fat_tree: return "fat-tree";
    case Topology::rail: return "rail";
  }
  return "?";
}

const char* to_string(AllReduceAlgorithm a) { return a == AllReduceAlgorithm::tree ? "tree" : "ring"; }

ClusterSpec default_cluster_spec() {
  ClusterSpec c;
  c.gpus_per_node = 8;
  c.intra_bw_bps = -1;  // the GPU model's interconnect_gbs
  c.intra_latency_s = 5e-6;
  c.inter_bw_bps = -1;  // the GPU model's nic_gbs
  c.inter_latency_s = 5e-6;
  c.oversubscription = 1;
  c.placement = Placement::dp_inner;  // Megatron-LM's rank order: TP, CP, DP, then PP
  c.hop_latency_s = 1e-6;
  return c;
}

ClusterSpec resolve_bandwidths(ClusterSpec cs, double interconnect_bps, double nic_bps) {
  if (cs.intra_bw_bps < 0) cs.intra_bw_bps = interconnect_bps > 0 ? interconnect_bps : 450e9;
  if (cs.inter_bw_bps < 0) cs.inter_bw_bps = nic_bps > 0 ? nic_bps : 50e9;
  return cs;
}

namespace {

bool read_topology(const std::string& s, Topology& out) {
  for (Topology t : {Topology::node_backbone, Topology::fat_tree, Topology::rail})
    if (s == to_string(t)) {
      out = t;
      return true;
    }
  return false;
}

}  // namespace

void read_cluster_json(const JsonReader& c, ClusterSpec& cs) {
  c.only_keys({"topology", "placement", "gpus_per_node", "nodes_per_leaf", "intra_bw_bps", "intra_latency_s",
               "inter_bw_bps", "inter_latency_s", "hop_latency_s", "oversubscription"});
  if (c.has("topology")) {
    const std::string t = c.string("topology");
    if (!read_topology(t, cs.topology)) c.fail("topology", "expected node-backbone, fat-tree or rail, got \"" + t + "\"");
  }
  if (c.has("placement")) {
    const std::string p = c.string("placement");
    if (p == "dp-inner") cs.placement = Placement::dp_inner;
    else if (p == "pp-inner") cs.placement = Placement::pp_inner;
    else c.fail("placement", "expected dp-inner or pp-inner, got \"" + p + "\"");
  }
  auto count = [&](const char* key, int& dst) {
    if (!c.has(key)) return;
    const long v = c.integer(key);
    if (v < 1 || v > 1000000) c.fail(key, "expected an integer in [1, 1000000], got " + std::to_string(v));
    dst = static_cast<int>(v);
  };
  count("gpus_per_node", cs.gpus_per_node);
  count("nodes_per_leaf", cs.nodes_per_leaf);
  auto in_range = [&](const char* key, double lo, double hi, const char* unit, double& dst) {
    if (!c.has(key)) return;
    const double v = c.number(key);
    if (!(v >= lo && v <= hi)) {
      std::ostringstream os;
      os << "expected " << lo << " to " << hi << " " << unit << " (README \"Limits and bad input\"), got " << v;
      c.fail(key, os.str());
    }
    dst = v;
  };
  in_range("intra_bw_bps", 1, kMaxLinkBandwidth, "B/s", cs.intra_bw_bps);
  in_range("inter_bw_bps", 1, kMaxLinkBandwidth, "B/s", cs.inter_bw_bps);
  in_range("intra_latency_s", 0, kMaxLinkLatencyS, "s", cs.intra_latency_s);
  in_range("inter_latency_s", 0, kMaxLinkLatencyS, "s", cs.inter_latency_s);
  in_range("hop_latency_s", 0, kMaxLinkLatencyS, "s", cs.hop_latency_s);
  in_range("oversubscription", 1, kMaxOversubscription, "", cs.oversubscription);
}

void check_cluster(const ClusterSpec& c, const std::string& source) {
  if (c.gpus_per_node < 1) throw InputError(source, "cluster.gpus_per_node", "expected a positive integer");
  if (!(c.intra_bw_bps >= 0) || !(c.inter_bw_bps >= 0) || !std::isfinite(c.intra_bw_bps) || !std::isfinite(c.inter_bw_bps))
    throw InputError(source, "cluster", "expected bandwidths >= 0 B/s (0 = unlimited)");
  for (double l : {c.intra_latency_s, c.inter_latency_s, c.hop_latency_s})
    if (!(l >= 0 && l <= kMaxLinkLatencyS)) throw InputError(source, "cluster", "expected latencies from 0 to 1 s");
  if (!(c.oversubscription >= 1) || !std::isfinite(c.oversubscription))
    throw InputError(source, "cluster.oversubscription", "expected a factor >= 1");
  if (c.topology != Topology::node_backbone && c.nodes_per_leaf < 1)
    throw InputError(source, "cluster.nodes_per_leaf", "expected nodes_per_leaf >= 1 for a fat-tree or rail fabric");
}

}  // namespace dvfs
