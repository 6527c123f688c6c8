#pragma once
// The workload cache: an imported trace (its Workload and ImportReport) stored in a compact binary entry, so a
// trace that has been imported once loads again in a fraction of the import's time (README "Workload cache").
//
// Where: $DVFS_SIM_CACHE_DIR, else $XDG_CACHE_HOME/dvfs-sim, else ~/.cache/dvfs-sim. Off for a process with
// DVFS_SIM_NO_CACHE=1 (Python, notebooks) or set_workload_cache_enabled(false) (`dvfs-sim --no-cache`).
//
// Key: a text naming the cache version, what kind of load it was, the path as given, and for every input file
// (trace, telemetry, run.json, the classification rules) its size and content hash (sim/core/content_hash.hpp).
// An entry's file name is the XXH64 of that text; the entry holds the text itself, compared in full on load.
//
// An entry is trusted only when its magic, version, byte-order mark, key text, payload size and payload checksum
// all match and its payload decodes to its last byte; anything else (truncated, corrupt, stale, another
// version) is a miss: the trace is imported again and the entry rewritten. Entries are written to a temporary
// file and renamed into place, so concurrent processes (a sweep) see a whole entry or none.
#include "sim/core/workload.hpp"
#include "traces/src/kineto_importer.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dvfs {

// The cache's format and importer version. RULE: bump it whenever the layout of Workload, Rank, Kernel,
// LaunchShape, Step, AnnotationSet, CollectiveCall or ImportReport changes, or whenever an importer (Kineto,
// Nsight Systems, recordings, telemetry alignment) or the classifier's code changes what it produces for the
// same input files. Entries of another version are never read (they are misses, and rewritten).
inline constexpr std::uint32_t kWorkloadCacheVersion = 33;  // 2: depthwise convolutions count operand loads; 3: Kernel::tensor_issue,
                                                            // FFT convolutions, Rank::clipped; 4: out= tensors written,
                                                            // nll_loss / gather / scatter_add by their indexed elements;
                                                            // 5: _embedding_bag by its indices, unsized aten::index
                                                            // unpriced, `convert` kernels not matrix kernels; 6: cuDNN
                                                            // layout conversions move twice their operator's bytes; 7: fp32
                                                            // operators on `tensorop` kernels are TF32; 8: cuFFT
                                                            // operators counted (fft_work); 9: sparse operands
                                                            // unpriced, aten::_int_mm (sparse_and_int8); 10:
                                                            // transposed convolutions counted
                                                            // (transposed_convolutions); 11: 10's
                                                            // cudnn_convolution with benchmark = True
                                                            // had been read as transposed; 12: dense
                                                            // factorisations and triangular solves
                                                            // counted (linalg_work); 13: fp64 tensor-core
                                                            // work its own precision (fp64_tensor_energy);
                                                            // 14: a note on kernels replayed from CUDA graphs;
                                                            // 15: Kernel::unvectorised_tbps (unvectorised_bytes);
                                                            // 16: a note on activities overlapping on one stream
                                                            // 17: notes on unknown device categories and on
                                                            // activities starting before their launch;
                                                            // 18: a negative comm-record Rank refused;
                                                            // 19: refused: device activities that are no complete
                                                            // events, collective buffers over 1e15 B, counted work
                                                            // no GPU could do, recordings whose steps overlap, leave
                                                            // the telemetry or do not hold their kernels, Chakra
                                                            // jobs without device work, bad nsys launch/NVTX rows;
                                                            // 20: a baseTimeNanoseconds that is no epoch refused;
                                                            // 21: mid-2021 "Operator" events with "Input Dims"
                                                            // read as operators (priced from their shapes);
                                                            // 22: ATen elementwise kernels without shapes sized
                                                            // from their launch (WorkSource::launch_elementwise);
                                                            // 23: counting_fixes (broadcast outputs of elementwise
                                                            // kernels, expanded operands read at their stored
                                                            // elements); 24: the streaming reader reads number
                                                            // tokens of 19 digits or more (ns-resolution epoch
                                                            // timestamps, long decimals below 1) exactly; AMD
                                                            // matrix-core GEMMs and half-precision products
                                                            // above 200 TFLOP/s counted as tensor work; host
                                                            // step ranges where the device's hold < half the
                                                            // device time; Chakra CPU-side collectives and
                                                            // dependencies on absent nodes; 25: kernels whose
                                                            // External id repeats their correlation id linked
                                                            // to the operator around their launch; a note
                                                            // on overlaps from cudaLaunchKernelExC launches;
                                                            // 26: a note on NCCL kernels with no collective
                                                            // record; 27: collectives inferred from "nccl:"
                                                            // annotations; Input type "long" sized (8 bytes);
                                                            // 28: sends / receives inferred from them;
                                                            // 29: batched sends / receives (one kernel, several
                                                            // calls: CollectiveCall::batched); 30: NCCL kernels
                                                            // of sized sends / receives priced by their bytes
                                                            // (WorkSource::transfer_bytes); 31: a Chakra file's
                                                            // timed sends / receives too; 32: a clipped
                                                            // transfer's bytes over its recorded time, not
                                                            // re-priced in dvfs-sim's own exports; 33: a note
                                                            // on with_stack / profile_memory traces

struct CachedImport {
  Workload workload;
  ImportReport report;
};

// The key text of a load: `kind` names the loader ("recording", "kineto-dir", "trace-file"), `path` is the
// path as the user gave it, `files` every file the load reads. Empty when a file cannot be read (then the load
// bypasses the cache, and the importer reports the problem as it always does).
std::string workload_cache_key(const std::string& kind, const std::string& path, const std::vector<std::string>& files);

// Entry bytes <-> import. decode returns false (and says why) for anything but an intact entry of this key.
std::string encode_cached_import(const std::string& key, const CachedImport& c);
std::string encode_cached_import(const std::string& key, const Workload& workload, const ImportReport& report);  // no copy
bool decode_cached_import(const std::string& bytes, const std::string& key, CachedImport& out, std::string* why = nullptr);
bool decode_cached_import(const char* bytes, std::size_t size, const std::string& key, CachedImport& out,
                          std::string* why = nullptr);

struct WorkloadCacheInfo {
  std::string dir;
  std::size_t entries = 0;  // regular files named *.wlc
  std::uint64_t bytes = 0;
  std::size_t not_entries = 0;  // other things named *.wlc (a directory, a FIFO, a link): neither counted nor cleared
  std::string unusable;         // WorkloadCache::unusable()
};

class WorkloadCache {
 public:
  explicit WorkloadCache(std::string dir) : dir_(std::move(dir)) {}
  // The user's cache directory (see above).
  static WorkloadCache user();

  const std::string& dir() const { return dir_; }
  std::string entry_path(const std::string& key) const;
  // The entry of `key`, when one is there and intact.
  bool load(const std::string& key, CachedImport& out) const;
  // Writes the entry atomically; a cache that cannot be written (read-only, full disk) is skipped silently.
  void store(const std::string& key, const CachedImport& c) const;
  WorkloadCacheInfo info() const;
  // Why entries cannot be written there ("not a directory", "not writable (...)", "cannot be created: ..."), or ""
  // when they can (the directory is writable, or store can create it). Loads and stores stay silent about it (a
  // read-only cache is skipped); `cache info` says it.
  std::string unusable() const;
  // Removes every entry (and stray temporary files): regular files only; returns how many entries it removed.
  std::size_t clear() const;

 private:
  std::string dir_;
};

// Whether loads use the cache: not after set_workload_cache_enabled(false), nor with DVFS_SIM_NO_CACHE set to
// anything but "" or "0".
bool workload_cache_enabled();
void set_workload_cache_enabled(bool enabled);

// The import through the cache: the entry of `key` when intact, else import() (then stored). An empty key,
// or the cache disabled, runs import() alone.
CachedImport cached_import(const std::string& key, const std::function<CachedImport()>& import);

}  // namespace dvfs
