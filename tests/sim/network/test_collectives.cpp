#include "sim/network/simgrid_world.hpp"
#include "sim/network/collectives.hpp"

#include <catch2/catch.hpp>

#include <simgrid/s4u.hpp>

#include <vector>

using namespace dvfs;
using Catch::Detail::Approx;
namespace sg4 = simgrid::s4u;

namespace {

// Runs one collective on `n` hosts of a cluster (one group of all of them), each member arriving at
// its own time; returns when each member left, measured from the start.
std::vector<double> run_one(const ClusterSpec& cs, int n, CollectiveKind kind, double bytes, std::vector<double> arrive = {},
                            int repeat = 1) {
  auto engine = make_simgrid_engine();
  Collectives c;
  std::vector<int> members, slots;
  for (int i = 0; i < n; ++i) members.push_back(i), slots.push_back(i);
  const int gid = c.add_group(members);
  const auto hosts = build_cluster(cs, slots, c.route_pairs(cs.allreduce));
  c.prepare(hosts, cs.allreduce);
  std::vector<double> left(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i)
    sg4::Actor::create("m" + std::to_string(i), hosts[static_cast<std::size_t>(i)], [&, i] {
      const double origin = sg4::Engine::get_clock();
      if (!arrive.empty()) sg4::this_actor::sleep_for(arrive[static_cast<std::size_t>(i)]);
      for (int k = 0; k < repeat; ++k) c.run(gid, i, kind, bytes);
      left[static_cast<std::size_t>(i)] = sg4::Engine::get_clock() - origin;
    });
  engine->run();
  return left;
}

ClusterSpec one_gpu_per_node(double bw, double latency) {
  ClusterSpec cs;
  cs.gpus_per_node = 1;
  cs.inter_bw_bps = bw;
  cs.inter_latency_s = latency;
  return cs;
}

}  // namespace

TEST_CASE("on an idle network every collective takes its closed-form time", "[network][collectives]") {
  const ClusterSpec cs = one_gpu_per_node(1e9, 1e-3);
  for (CollectiveKind kind : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter, CollectiveKind::all_gather,
                              CollectiveKind::broadcast, CollectiveKind::all_to_all}) {
    INFO(to_string(kind));
    for (int n : {2, 3, 8}) {
      INFO(n);
      const double expected = collective_time_s(kind, false, n, 8e8, 1e9, 1e-3);
      for (double t : run_one(cs, n, kind, 8e8)) CHECK(t == Approx(expected).epsilon(1e-6));
    }
  }
  // The ring all-reduce: 2 (n - 1) steps of bytes / n, each a latency plus its transfer.
  CHECK(collective_time_s(CollectiveKind::all_reduce, false, 4, 4e8, 1e9, 1e-3) == Approx(6 * (1e-3 + 0.1)));
}

TEST_CASE("a tree all-reduce takes 2 x depth latencies and the busiest link's load", "[network][collectives]") {
  ClusterSpec cs = one_gpu_per_node(1e9, 1e-3);
  cs.allreduce = AllReduceAlgorithm::tree;
  CHECK(tree_depth(8) == 3);
  CHECK(tree_depth(7) == 2);
  for (int n : {2, 4, 8, 16}) {
    INFO(n);
    const double expected = collective_time_s(CollectiveKind::all_reduce, true, n, 1e8, 1e9, 1e-3);
    for (double t : run_one(cs, n, CollectiveKind::all_reduce, 1e8)) CHECK(t == Approx(expected).epsilon(1e-6));
  }
  // Latency-bound: the tree beats the ring from a few members on.
  CHECK(collective_time_s(CollectiveKind::all_reduce, true, 64, 1, 1e9, 1e-3) <
        collective_time_s(CollectiveKind::all_reduce, false, 64, 1, 1e9, 1e-3) / 5);
}

TEST_CASE("nobody leaves a collective before the last member arrives, and all leave together", "[network][collectives]") {
  const ClusterSpec cs = one_gpu_per_node(1e9, 1e-4);
  const double alone = collective_time_s(CollectiveKind::all_reduce, false, 4, 4e8, 1e9, 1e-4);
  const auto left = run_one(cs, 4, CollectiveKind::all_reduce, 4e8, {0.0, 0.5, 0.0, 2.0});
  for (double t : left) CHECK(t == Approx(2.0 + alone).epsilon(1e-6));
}

TEST_CASE("a group runs its collectives one after another", "[network][collectives]") {
  const ClusterSpec cs = one_gpu_per_node(1e9, 1e-4);
  const double one = collective_time_s(CollectiveKind::all_gather, false, 3, 3e8, 1e9, 1e-4);
  for (double t : run_one(cs, 3, CollectiveKind::all_gather, 3e8, {}, 5)) CHECK(t == Approx(5 * one).epsilon(1e-6));
}

TEST_CASE("a group of one member costs nothing", "[network][collectives]") {
  for (double t : run_one(one_gpu_per_node(1e9, 1e-3), 1, CollectiveKind::all_reduce, 1e9)) CHECK(t == 0);
}

TEST_CASE("inside a node collectives run at NVLink speed, not the NIC's", "[network][collectives]") {
  ClusterSpec cs;
  cs.gpus_per_node = 8;
  cs.intra_bw_bps = 450e9;  // above the 419 GB/s a TCP window would allow at 10 us: the bound is off
  cs.intra_latency_s = 5e-6;
  cs.inter_bw_bps = 50e9;
  const double expected = collective_time_s(CollectiveKind::all_reduce, false, 8, 1e9, 450e9, 5e-6);
  for (double t : run_one(cs, 8, CollectiveKind::all_reduce, 1e9)) CHECK(t == Approx(expected).epsilon(1e-6));
}
