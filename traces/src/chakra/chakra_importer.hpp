#pragma once
// MLCommons Chakra execution traces in (docs/chakra.md): a rank's file is a GlobalMetadata and its Nodes, a
// dependency graph (data_deps and ctrl_deps) of compute, memory and communication operations. dvfs-sim replays a
// rank as one device timeline, so the graph is scheduled the way ASTRA-sim times it, one operation at a time on
// the host (is_cpu_op compute nodes) and one at a time on the device (every other node), each starting once the
// nodes it depends on have ended, ready nodes in file order; device time the schedule leaves idle becomes the
// gap before the next device activity. Compute nodes become kernels (duration_micros; num_ops and tensor_size as
// work rates), memory nodes copies, COMM_COLL_NODEs collectives (comm_type, comm_size, pg_name), COMM_SEND/RECV
// point-to-point transfers (comm_src, comm_dst). Files written by dvfs-sim carry "dvfs." attributes that give the
// exact workload back (traces/src/chakra/chakra_attrs.hpp).
#include "sim/core/workload.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"

#include <string>
#include <vector>

namespace dvfs {

// A file named *.et or *.et.gz, or a prefix P (not itself a file) with a file P.0.et[.gz] beside it: ASTRA-sim's
// workload name for the ranks P.0.et, P.1.et, ...
bool is_chakra_trace(const std::string& path);
// The rank files a path stands for: itself, or P.0.et ... P.<n-1>.et for a prefix.
std::vector<std::string> chakra_rank_files(const std::string& path);

// One rank (a file) or every rank of a prefix, merged as traces/src/multi_rank merges Kineto ranks. InputError
// naming the file, the node and the field on: a truncated or undecodable message, an unknown node type, a
// missing or mistyped attribute a node needs (comm_type, comm_size, comm_src / comm_dst), a dependency on a node
// the file does not have, a dependency cycle, an unsupported collective (REDUCE, GATHER, SCATTER).
Workload import_chakra(const std::string& path, const Classifier& classifier, ImportReport* report = nullptr);
// The same from files' bytes already in memory (tests, fuzzing): names[i] names bytes[i] in errors.
Workload import_chakra_bytes(const std::vector<std::string>& bytes, const std::vector<std::string>& names,
                             const Classifier& classifier, ImportReport* report = nullptr);

}  // namespace dvfs
