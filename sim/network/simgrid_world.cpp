#include "sim/network/simgrid_world.hpp"

#include "sim/network/collectives.hpp"

#include <simgrid/s4u.hpp>

#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace dvfs {

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

const std::vector<sg4::Host*>& SimWorld::build(const PlatformSpec& spec, Collectives& groups, AllReduceAlgorithm algorithm) {
  if (!hosts_.empty()) throw std::logic_error("SimWorld::build: the platform is already built");
  switch (spec.kind) {
    case PlatformSpec::Kind::isolated: {
      auto* zone = sg4::create_full_zone(spec.zone);
      for (const std::string& name : spec.host_names) hosts_.push_back(zone->create_host(name, 1e9));
      zone->seal();
      break;
    }
    case PlatformSpec::Kind::star:
      hosts_ = build_star(spec.hosts, spec.star_latency_s, spec.star_bandwidth_bps);
      break;
    case PlatformSpec::Kind::cluster: {
      std::vector<std::pair<int, int>> pairs = spec.pairs;
      for (const auto& p : groups.route_pairs(spec.cluster.allreduce)) pairs.push_back(p);
      hosts_ = build_cluster(spec.cluster, spec.slots, pairs);
      break;
    }
  }
  groups.prepare(hosts_, algorithm);
  return hosts_;
}

void SimWorld::spawn(const std::string& name, std::size_t host, std::function<void()> body) {
  sg4::Actor::create(name, hosts_.at(host), [this, body = std::move(body)]() { guarded(failure_, body); });
}

void SimWorld::spawn_unguarded(const std::string& name, std::size_t host, std::function<void()> body) {
  sg4::Actor::create(name, hosts_.at(host), std::move(body));
}

void SimWorld::run_until(double t) {
  engine_->run_until(t);
  throw_if_deadlocked();
  if (failure_) std::rethrow_exception(failure_);
}

void SimWorld::stop() {
  if (!engine_) return;
  sg4::Actor::kill_all();
  engine_->run();
}

}  // namespace dvfs
