#include "sim/network/cluster.hpp"

#include "sim/core/errors.hpp"

#include <cmath>
#include <map>
#include <set>

namespace sg4 = simgrid::s4u;

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
    if (v < 1 || v > 1000000) c.fail(key, "expected a positive integer");
    dst = static_cast<int>(v);
  };
  count("gpus_per_node", cs.gpus_per_node);
  count("nodes_per_leaf", cs.nodes_per_leaf);
  if (c.has("intra_bw_bps")) cs.intra_bw_bps = c.positive("intra_bw_bps");
  if (c.has("inter_bw_bps")) cs.inter_bw_bps = c.positive("inter_bw_bps");
  if (c.has("intra_latency_s")) cs.intra_latency_s = c.non_negative("intra_latency_s");
  if (c.has("inter_latency_s")) cs.inter_latency_s = c.non_negative("inter_latency_s");
  if (c.has("hop_latency_s")) cs.hop_latency_s = c.non_negative("hop_latency_s");
  if (c.has("oversubscription")) {
    cs.oversubscription = c.positive("oversubscription");
    if (cs.oversubscription < 1) c.fail("oversubscription", "expected >= 1");
  }
}

void check_cluster(const ClusterSpec& c, const std::string& source) {
  if (c.gpus_per_node < 1) throw InputError(source, "cluster.gpus_per_node", "expected a positive integer");
  if (!(c.intra_bw_bps >= 0) || !(c.inter_bw_bps >= 0) || !std::isfinite(c.intra_bw_bps) || !std::isfinite(c.inter_bw_bps))
    throw InputError(source, "cluster", "expected bandwidths >= 0 B/s (0 = unlimited)");
  if (!(c.intra_latency_s >= 0) || !(c.inter_latency_s >= 0) || !(c.hop_latency_s >= 0))
    throw InputError(source, "cluster", "expected latencies >= 0 s");
  if (!(c.oversubscription >= 1) || !std::isfinite(c.oversubscription))
    throw InputError(source, "cluster.oversubscription", "expected a factor >= 1");
  if (c.topology != Topology::node_backbone && c.nodes_per_leaf < 1)
    throw InputError(source, "cluster.nodes_per_leaf", "expected nodes_per_leaf >= 1 for a fat-tree or rail fabric");
}

namespace {

double unlimited(double bw) { return bw > 0 ? bw : 1e15; }

// Links are created on first use, so a 8,192-GPU machine holds only the switch links its routes cross.
class Fabric {
 public:
  Fabric(sg4::NetZone* zone, const ClusterSpec& spec, int hosts) : zone_(zone), c_(spec), hosts_(hosts) {}

  const sg4::Link* link(const std::string& name, double bw, double latency) {
    auto it = links_.find(name);
    if (it != links_.end()) return it->second;
    const sg4::Link* l = zone_->create_link(name, unlimited(bw))->set_latency(latency)->seal();
    links_[name] = l;
    return l;
  }
  const sg4::Link* nv_tx(int slot) { return link("nvlink-tx" + std::to_string(slot), c_.intra_bw_bps, c_.intra_latency_s / 2); }
  const sg4::Link* nv_rx(int slot) { return link("nvlink-rx" + std::to_string(slot), c_.intra_bw_bps, c_.intra_latency_s / 2); }
  const sg4::Link* nic_tx(int slot) { return link("nic-tx" + std::to_string(slot), c_.inter_bw_bps, c_.inter_latency_s / 2); }
  const sg4::Link* nic_rx(int slot) { return link("nic-rx" + std::to_string(slot), c_.inter_bw_bps, c_.inter_latency_s / 2); }

  // A leaf's pooled uplinks to the spine layer and downlinks from it; the leaf serves `hosts_under` NICs.
  const sg4::Link* up(int leaf, int hosts_under) { return link("up" + std::to_string(leaf), uplink_bw(hosts_under), c_.hop_latency_s); }
  const sg4::Link* down(int leaf, int hosts_under) {
    return link("down" + std::to_string(leaf), uplink_bw(hosts_under), c_.hop_latency_s);
  }
  const sg4::Link* backbone() {
    return link("backbone", c_.inter_bw_bps > 0 ? c_.inter_bw_bps * hosts_ / c_.oversubscription : 0, 0);
  }

 private:
  double uplink_bw(int hosts_under) const {
    return c_.inter_bw_bps > 0 ? c_.inter_bw_bps * hosts_under / c_.oversubscription : 0;
  }
  sg4::NetZone* zone_;
  const ClusterSpec& c_;
  int hosts_;
  std::map<std::string, const sg4::Link*> links_;
};

}  // namespace

std::vector<sg4::Host*> build_cluster(const ClusterSpec& c, const std::vector<int>& slot,
                                      const std::vector<std::pair<int, int>>& pairs) {
  check_cluster(c, "cluster");
  const int n = static_cast<int>(slot.size());
  auto* zone = sg4::create_full_zone("cluster");
  std::vector<sg4::Host*> hosts;
  for (int g = 0; g < n; ++g) hosts.push_back(zone->create_host("gpu" + std::to_string(g), 1e9)->seal());
  Fabric f(zone, c, n);
  const int per_node = c.gpus_per_node;
  const int per_leaf = c.nodes_per_leaf * per_node;
  auto node = [&](int s) { return s / per_node; };
  auto leaf = [&](int s) { return node(s) / c.nodes_per_leaf; };
  std::set<std::pair<int, int>> routed;
  for (const auto& [ga, gb] : pairs) {
    if (ga == gb || ga < 0 || gb < 0 || ga >= n || gb >= n || !routed.insert({ga, gb}).second) continue;
    const int a = slot[static_cast<std::size_t>(ga)], b = slot[static_cast<std::size_t>(gb)];
    std::vector<sg4::LinkInRoute> links;
    auto add = [&](const sg4::Link* l) { links.emplace_back(l); };
    if (node(a) == node(b)) {
      add(f.nv_tx(a));
      add(f.nv_rx(b));
    } else if (c.topology == Topology::node_backbone) {
      add(f.nic_tx(a));
      if (c.oversubscription > 1) add(f.backbone());  // at 1 the backbone can never be the bottleneck
      add(f.nic_rx(b));
    } else if (c.topology == Topology::fat_tree) {
      add(f.nic_tx(a));
      if (leaf(a) != leaf(b)) {
        add(f.up(leaf(a), per_leaf));
        add(f.down(leaf(b), per_leaf));
      }
      add(f.nic_rx(b));
    } else {  // rail
      const int rail_b = b % per_node;
      int from = a;
      if (a % per_node != rail_b) {
        // PXN: over NVLink to this node's GPU on the destination's rail, which sends it on.
        from = node(a) * per_node + rail_b;
        add(f.nv_tx(a));
        add(f.nv_rx(from));
      }
      add(f.nic_tx(from));
      if (leaf(a) != leaf(b)) {
        // Rail switch (pod, rail) up to the spine layer and down to the destination pod's switch of that rail.
        add(f.up(leaf(a) * per_node + rail_b, c.nodes_per_leaf));
        add(f.down(leaf(b) * per_node + rail_b, c.nodes_per_leaf));
      }
      add(f.nic_rx(b));
    }
    zone->add_route(hosts[static_cast<std::size_t>(ga)]->get_netpoint(), hosts[static_cast<std::size_t>(gb)]->get_netpoint(),
                    nullptr, nullptr, links, false);
  }
  zone->seal();
  return hosts;
}

std::vector<sg4::Host*> build_star(int n, double latency_s, double bandwidth_bps) {
  auto* zone = sg4::create_star_zone("pipeline");
  std::vector<sg4::Host*> hosts;
  for (int g = 0; g < n; ++g) {
    sg4::Host* h = zone->create_host("gpu" + std::to_string(g), 1e9)->seal();
    const sg4::Link* l = zone->create_link("link" + std::to_string(g), unlimited(bandwidth_bps))->set_latency(latency_s / 2)->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(l)}, true);
    hosts.push_back(h);
  }
  zone->seal();
  return hosts;
}

double route_latency_s(const sg4::Host* a, const sg4::Host* b) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  a->route_to(b, links, &latency);
  return latency;
}

}  // namespace dvfs
