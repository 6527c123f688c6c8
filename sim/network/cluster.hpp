#pragma once
// The machine room, described: one host per simulated GPU (or per folded TP group), grouped into
// nodes joined by NVLink-class links, and nodes joined by a fabric. This header is SimGrid-free (the
// scenario parser, the summary writer and the engine's callers read it); sim/network/simgrid_world.hpp
// turns a description into SimGrid hosts, links and routes.
#include "sim/core/json_util.hpp"

#include <string>

namespace dvfs {

// How data-parallel collectives are run: a ring (bandwidth-optimal, latency linear in the group) or a
// binary tree (latency logarithmic), as NCCL picks between them.
enum class AllReduceAlgorithm { ring, tree };

// Between nodes:
//  - node_backbone: every node's NICs on one non-blocking switch; with oversubscription > 1 all
//    inter-node traffic also shares one backbone of hosts x NIC / oversubscription.
//  - fat_tree: two levels. `nodes_per_leaf` nodes under each leaf switch (non-blocking inside a leaf);
//    the leaf's uplinks to the spine layer carry hosts-under-the-leaf x NIC / oversubscription in each
//    direction, as one pooled capacity: NCCL spreads a transfer over several channels (queue pairs), so
//    ECMP balances them over the spines rather than pinning a ring edge to one.
//  - rail: rail-optimised (NVIDIA SuperPOD style): NIC i of every node in a pod of `nodes_per_leaf` nodes
//    sits on rail switch i, so same-rail traffic crosses one switch; traffic to another rail first moves
//    over NVLink to the GPU on the destination's rail (PXN); traffic between pods climbs to the spine layer
//    as in the fat tree (rail switch uplinks: its nodes' NICs / oversubscription).
enum class Topology { node_backbone, fat_tree, rail };

// Which GPUs are neighbours in the machine: Megatron-LM's order puts the data-parallel replicas of a
// pipeline stage next to each other (TP innermost, then DP, then PP), `pp_inner` the stages of a replica.
enum class Placement { dp_inner, pp_inner };

struct ClusterSpec {
  AllReduceAlgorithm allreduce = AllReduceAlgorithm::ring;
  Topology topology = Topology::node_backbone;
  Placement placement = Placement::pp_inner;
  int gpus_per_node = 8;  // simulated hosts per node (GPUs, or TP groups when TP is folded)
  double intra_bw_bps = 0, intra_latency_s = 0;  // per host and direction, bytes/s; one-way s (0 bw = unlimited)
  double inter_bw_bps = 0, inter_latency_s = 0;  // per host NIC; one-way s through one switch
  double oversubscription = 1;                   // >= 1
  int nodes_per_leaf = 4;                        // fat_tree / rail
  double hop_latency_s = 0;                      // each extra switch level crossed (leaf -> spine -> leaf: 2)
};

// The default machine: 8 GPUs per node, a non-blocking fabric, Megatron's rank placement, 5 us links and
// 1 us per extra switch level; bandwidths left at -1, i.e. the GPU model's own (resolve_bandwidths).
ClusterSpec default_cluster_spec();
// Bandwidths < 0 become the GPU's: its interconnect to the node's other GPUs (NVLink 4: 450 GB/s per
// direction on H100/H200) and its NIC (typical deployment, e.g. 400 Gb/s NDR = 50 GB/s per H200); a
// model without these specs gets H200 figures.
ClusterSpec resolve_bandwidths(ClusterSpec cs, double interconnect_bps, double nic_bps);

const char* to_string(Topology t);
const char* to_string(AllReduceAlgorithm a);

// Reads a cluster object (scenario key `cluster`: topology, placement, gpus_per_node, nodes_per_leaf,
// intra/inter bandwidth and latency, hop_latency_s, oversubscription) over `cs`; errors name the
// file and field.
void read_cluster_json(const JsonReader& c, ClusterSpec& cs);

// Throws InputError(source, "cluster...", ...) on a spec that cannot describe a machine.
void check_cluster(const ClusterSpec& spec, const std::string& source);

}  // namespace dvfs
