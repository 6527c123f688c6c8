#pragma once
// A Workload as MLCommons Chakra execution traces (docs/chakra.md): one file per rank, DIR/NAME.<rank>.et (the
// file names ASTRA-sim's --workload-configuration=DIR/NAME expects), each a GlobalMetadata and one Node per device
// activity in the rank's order, every node depending (data_deps) on the one before; a host gap before an
// activity is an is_cpu_op compute node of that length between them. Collectives are COMM_COLL_NODEs (comm_type,
// comm_size, pg_name = the group's index), sends and receives COMM_SEND/RECV_NODEs; DIR/comm_group.json lists each
// group's ranks under its pg_name (ASTRA-sim's --comm-group-configuration). "dvfs." attributes keep what the
// replay needs exactly, so import_chakra gives back the same workload.
#include "sim/core/json_util.hpp"
#include "sim/core/workload.hpp"

#include <string>

namespace dvfs {

struct ChakraExportOptions {
  std::string name = "trace";  // file prefix: DIR/NAME.<rank>.et
  bool gzip = false;           // DIR/NAME.<rank>.et.gz (Chakra's readers inflate it; ASTRA-sim reads plain files)
  int threads = 0;             // files written at once (0: one per core)
};

struct ChakraExportStats {
  std::size_t files = 0, nodes = 0, bytes = 0;
  double seconds = 0, cpu_s = 0;
};

// Writes the files (the directory is created). InputError naming the file when one cannot be written.
ChakraExportStats write_chakra_trace(const Workload& wl, const std::string& dir, const ChakraExportOptions& opts = {});
// The bytes of one rank's file (tests, fuzz corpus).
std::string chakra_rank_bytes(const Workload& wl, std::size_t rank_index);
Json chakra_export_stats_json(const ChakraExportStats& st, const std::string& dir, const ChakraExportOptions& opts);

}  // namespace dvfs
