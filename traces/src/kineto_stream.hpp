#pragma once
// The Kineto importer's streaming reader: the trace is read in pieces (gzip inflated as it is read), its
// `traceEvents` array cut into batches of events, each batch parsed with simdjson's On-Demand API and each event
// turned into the importer's raw records (traces/src/kineto_raw.hpp) as it is read; nothing holds the document.
// Memory: one batch (kStreamBatchBytes) and the records the workload needs.
//
// It reads the common shapes of the common events itself and hands any other event, converted to a JSON value,
// to the checked reader's own per-event code (kineto::read_event), so both readers give the same records. It
// declines (throws; import_kineto then reads the file with the checked reader, which names the problem) on any
// malformed JSON, nesting near kMaxJsonDepth, a number beyond what simdjson reads exactly (1e400, integers past
// 64 bits), a top-level key written with escapes, or any error of the events themselves: every message the user
// sees is the checked reader's.
#include "sim/core/workload.hpp"
#include "traces/src/kernel_classifier.hpp"
#include "traces/src/kineto_importer.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace dvfs {

// Bytes of a file, inflated as they are read when the file is gzip (by its magic bytes, concatenated members
// included; ISA-L's streaming inflate, no limit on the size), or of a string in memory. A gzip file ISA-L refuses
// or zlib would (reserved header flags) throws: the importer then reads it with the checked reader (zlib).
class ByteSource {
 public:
  static ByteSource open(const std::string& path);  // throws when the file cannot be read
  static ByteSource of_text(const std::string& text);  // `text` must outlive the source
  // `inner` read on a thread of its own, `chunk_bytes` at a time, at most `depth` chunks ahead of the reader (its
  // errors come in order, after the bytes before them).
  static ByteSource read_ahead(ByteSource inner, std::size_t chunk_bytes = std::size_t{1} << 20, std::size_t depth = 2);
  bool in_memory() const;  // of_text
  ByteSource(ByteSource&&) noexcept;
  ByteSource& operator=(ByteSource&&) noexcept;
  ~ByteSource();
  // Appends up to `n` bytes to `out`; the number appended, 0 at the end. Throws on corrupt or truncated gzip.
  std::size_t read(std::string& out, std::size_t n);

 private:
  struct Impl;
  explicit ByteSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The size of the event batches the streaming reader parses at a time.
constexpr std::size_t kStreamBatchBytes = std::size_t{2} << 20;

// Splits a Chrome trace, an object with a "traceEvents" array (or an array of events), into its events and the
// rest. `on_batch(text, first, count)` gets events first..first+count-1 as their raw text with the separators
// between them ("e1, e2, ..."); the returned "skeleton" is the document with the events left out
// (`"traceEvents": []`), to be parsed by the caller. Only the structure around the events is checked here
// (the caller parses every event); anything else declines (std::runtime_error). `read_bytes`: how much it reads
// from the source at a time.
std::string split_trace_events(ByteSource& source,
                               const std::function<void(std::string_view, std::size_t, std::size_t)>& on_batch,
                               std::size_t batch_bytes = kStreamBatchBytes, std::size_t read_bytes = std::size_t{1} << 20);

// Readable bytes after a batch's text (simdjson reads up to SIMDJSON_PADDING bytes past a document's end).
constexpr std::size_t kBatchPadding = 64;

// split_trace_events with the reading and splitting on a second thread: `on_batch` is called on the calling
// thread, in order, with the same batches, while the next ones are read and split; at most `queue_depth` batches
// (each a copy of its text) wait between the two, so memory stays bounded. Each batch comes framed: "[" + its
// events' text + "]", with kBatchPadding readable bytes after it (a simdjson document as it is). Errors come as
// split_trace_events gives them: the first in the document's order (a batch's error before a later split error);
// an error of `on_batch` stops the reading thread. `queue_depth` 0: no thread (split_trace_events itself).
std::string split_trace_events_pipelined(ByteSource& source,
                                         const std::function<void(std::string_view, std::size_t, std::size_t)>& on_batch,
                                         std::size_t queue_depth, std::size_t batch_bytes = kStreamBatchBytes,
                                         std::size_t read_bytes = std::size_t{1} << 20);

namespace kineto {
// How the streaming import spreads over threads. The default, measured best on the 2-core development machine: the
// file read and inflated on a thread of its own, split and parsed on the calling thread. With ISA-L's inflate
// (~8 ms of the default trace's ~75 ms of CPU) that thread is mostly idle; giving it the split as well
// (read_ahead_depth 0, split_depth 2) took about the same wall time for ~25 ms more CPU (batch copies, hand-offs),
// and with zlib's inflate a third thread for the split made the inflate share a core (~10 ms slower).
struct StreamOptions {
  std::size_t batch_bytes = kStreamBatchBytes;
  std::size_t read_ahead_depth = 2;  // 1 MB chunks waiting between the reading thread and the split; 0: no thread
  std::size_t split_depth = 0;       // batches waiting between a split thread and the parser; 0: no split thread
  // Threads parsing batches side by side (> 1: each batch into records of its own, merged in document order on
  // the calling thread, which splits; split_depth is then unused); 1: the calling thread parses; 0: the cores
  // shared among the streaming imports running in this process at the time (at most kMaxParseThreads). Measured
  // on the 2-core machine (default trace, fresh process): 2 threads ~55 ms wall / ~85 ms CPU, 1 ~68 / ~77.
  std::size_t parse_threads = 0;
};
constexpr std::size_t kMaxParseThreads = 4;
// The streaming import (declines by throwing; see above). The workload does not depend on the options.
Workload import_streaming(ByteSource source, const std::string& file, const Classifier& classifier, ImportReport* report,
                          const StreamOptions& options = {});
}  // namespace kineto

// simdjson's own parse of the same text, nothing kept (the floor `dvfs-sim bench` compares the import with):
// the seconds one full On-Demand pass over every value takes, and whether it parsed.
double simdjson_parse_only_s(const std::string& text, bool* ok = nullptr);

}  // namespace dvfs
