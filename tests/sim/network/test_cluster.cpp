#include "sim/core/errors.hpp"
#include "sim/network/simgrid_world.hpp"
#include "sim/network/cluster.hpp"

#include <catch2/catch.hpp>

#include <simgrid/s4u.hpp>

#include <map>
#include <tuple>
#include <vector>

using namespace dvfs;
using Catch::Detail::Approx;
namespace sg4 = simgrid::s4u;

namespace {

struct Flow {
  int from, to;
  double bytes;
};

int token = 0;

// Starts every flow at t = 0 on `hosts` hosts of the cluster (host g at slot g); returns each flow's
// completion time.
std::vector<double> run_flows(const ClusterSpec& cs, int hosts, const std::vector<Flow>& flows) {
  auto engine = make_simgrid_engine();
  std::vector<int> slots;
  for (int g = 0; g < hosts; ++g) slots.push_back(g);
  std::vector<std::pair<int, int>> pairs;
  for (const Flow& f : flows) pairs.emplace_back(f.from, f.to);
  const auto h = build_cluster(cs, slots, pairs);
  std::vector<double> done(flows.size(), 0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const std::string box = "flow" + std::to_string(i);
    sg4::Actor::create("tx" + std::to_string(i), h[static_cast<std::size_t>(flows[i].from)],
                       [&, i, box] { sg4::Mailbox::by_name(box)->put(&token, static_cast<uint64_t>(flows[i].bytes)); });
    sg4::Actor::create("rx" + std::to_string(i), h[static_cast<std::size_t>(flows[i].to)], [&, i, box] {
      sg4::Mailbox::by_name(box)->get<int>();
      done[i] = sg4::Engine::get_clock();
    });
  }
  const double origin = sg4::Engine::get_clock();
  engine->run();
  for (double& d : done) d -= origin;
  return done;
}

ClusterSpec leaves(Topology t, double oversubscription) {
  ClusterSpec cs;
  cs.topology = t;
  cs.gpus_per_node = 1;
  cs.nodes_per_leaf = 2;  // hosts 0, 1 under leaf 0; 2, 3 under leaf 1
  cs.inter_bw_bps = 1e9;
  cs.oversubscription = oversubscription;
  return cs;
}

}  // namespace

TEST_CASE("a fat tree is non-blocking inside a leaf and shares its oversubscribed uplinks", "[network][cluster]") {
  // Two flows leave leaf 0 at once; the leaf's uplink carries 2 hosts x 1 GB/s / oversubscription.
  const std::vector<Flow> cross = {{0, 2, 1e9}, {1, 3, 1e9}};
  for (double t : run_flows(leaves(Topology::fat_tree, 1), 4, cross)) CHECK(t == Approx(1.0).epsilon(1e-6));
  for (double t : run_flows(leaves(Topology::fat_tree, 2), 4, cross)) CHECK(t == Approx(2.0).epsilon(1e-6));
  // Inside a leaf the uplinks are not crossed.
  for (double t : run_flows(leaves(Topology::fat_tree, 4), 4, {{0, 1, 1e9}, {2, 3, 1e9}})) CHECK(t == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("crossing the spine adds two switch hops of latency", "[network][cluster]") {
  ClusterSpec cs = leaves(Topology::fat_tree, 1);
  cs.inter_latency_s = 2e-6;
  cs.hop_latency_s = 1e-6;
  const auto t = run_flows(cs, 4, {{0, 1, 1}, {0, 2, 1}});
  CHECK(t[0] == Approx(2e-6 + 1e-9).epsilon(1e-3));
  CHECK(t[1] == Approx(4e-6 + 1e-9).epsilon(1e-3));
}

TEST_CASE("an oversubscribed backbone is shared by all inter-node traffic, and at 1 it never limits", "[network][cluster]") {
  ClusterSpec cs = leaves(Topology::node_backbone, 1);
  const std::vector<Flow> four = {{0, 1, 1e9}, {1, 2, 1e9}, {2, 3, 1e9}, {3, 0, 1e9}};
  for (double t : run_flows(cs, 4, four)) CHECK(t == Approx(1.0).epsilon(1e-6));
  cs.oversubscription = 4;  // backbone 4 x 1 GB/s / 4 = 1 GB/s for four flows
  for (double t : run_flows(cs, 4, four)) CHECK(t == Approx(4.0).epsilon(1e-6));
}

TEST_CASE("a rail fabric sends same-rail traffic through one switch and other rails over NVLink first", "[network][cluster]") {
  ClusterSpec cs;
  cs.topology = Topology::rail;
  cs.gpus_per_node = 2;  // GPU 0 of each node on rail 0, GPU 1 on rail 1
  cs.nodes_per_leaf = 2;
  cs.intra_bw_bps = 1e10;
  cs.intra_latency_s = 1e-3;
  cs.inter_bw_bps = 1e9;
  cs.inter_latency_s = 1e-3;
  // Host 0 (node 0, rail 0) to host 2 (node 1, rail 0): same rail; to host 3 (node 1, rail 1): PXN via host 1.
  const auto t = run_flows(cs, 4, {{0, 2, 1}, {0, 3, 1}});
  CHECK(t[0] == Approx(1e-3).epsilon(1e-3));
  CHECK(t[1] == Approx(2e-3).epsilon(1e-3));
  // PXN puts host 0's cross-rail flow on host 1's NIC: it shares it with host 1's own traffic, so the two
  // gigabytes leave through one 1 GB/s NIC. (SimGrid's CM02 shares a link in inverse proportion to each
  // flow's route latency, as TCP does: the longer PXN flow gets the smaller share and finishes last.)
  const auto shared = run_flows(cs, 4, {{0, 3, 1e9}, {1, 3, 1e9}});
  CHECK(shared[0] == Approx(2.0).epsilon(1e-2));
  CHECK(shared[1] < shared[0]);
}

TEST_CASE("a cluster that cannot describe a machine is an error naming the field", "[network][cluster]") {
  ClusterSpec cs;
  cs.gpus_per_node = 0;
  CHECK_THROWS_WITH(check_cluster(cs, "s.json"), Catch::Contains("s.json: cluster.gpus_per_node"));
  cs = ClusterSpec{};
  cs.oversubscription = 0.5;
  CHECK_THROWS_WITH(check_cluster(cs, "s.json"), Catch::Contains("expected a factor >= 1"));
  cs = ClusterSpec{};
  cs.topology = Topology::fat_tree;
  cs.nodes_per_leaf = 0;
  CHECK_THROWS_WITH(check_cluster(cs, "s.json"), Catch::Contains("s.json: cluster.nodes_per_leaf"));
}

TEST_CASE("a scenario's cluster latencies and bandwidths beyond their limits are refused, naming the field", "[network][cluster][errors]") {
  // hop_latency_s 1e300 ran; 1e308 overflowed SimGrid's clock and aborted
  for (const auto& [key, value, part] : std::vector<std::tuple<const char*, double, const char*>>{
           {"hop_latency_s", 1e300, "cluster.hop_latency_s: expected 0 to 1 s"},
           {"inter_latency_s", -1, "cluster.inter_latency_s: expected 0 to 1 s"},
           {"intra_bw_bps", 1e-300, "cluster.intra_bw_bps: expected 1 to 1e+15 B/s"},
           {"oversubscription", 1e300, "cluster.oversubscription: expected 1 to 1e+06"}}) {
    const Json doc = {{key, value}};
    ClusterSpec cs;
    CHECK_THROWS_WITH(read_cluster_json(JsonReader(doc, "s.json", "cluster"), cs), Catch::Contains(std::string("s.json: ") + part));
  }
  ClusterSpec cs;
  cs.hop_latency_s = 1e308;
  CHECK_THROWS_WITH(check_cluster(cs, "s.json"), Catch::Contains("expected latencies from 0 to 1 s"));
}
