#include "sim/results/trace_export.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"

#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <charconv>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sys/stat.h>

namespace dvfs {

namespace {

// Tracks of a GPU's process besides its streams (Perfetto sorts threads by tid).
constexpr long kStepTid = 1000001, kPhaseTid = 1000002, kAnnotationTid = 1000003;

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A raw deflate segment (level 1) made from text fed to it chunk by chunk, while the chunk is still in cache; it
// ends on a byte boundary (Z_SYNC_FLUSH) or ends the stream (Z_FINISH), so segments made on different threads
// concatenate into one deflate stream, as pigz writes them.
class Deflater {
 public:
  Deflater() {
    if (deflateInit2(&z_, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("trace export: deflateInit2 failed");
  }
  ~Deflater() { deflateEnd(&z_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  void feed(const std::string& text, int flush) {
    const double c0 = thread_cpu_s();
    crc = crc32(crc, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size()));
    size += text.size();
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z_.avail_in = static_cast<uInt>(text.size());
    do {
      if (out.size() - used_ < 65536) out.resize(std::max<std::size_t>(2 * out.size(), used_ + 65536));
      const std::size_t room = std::min<std::size_t>(out.size() - used_, 1u << 30);
      z_.next_out = reinterpret_cast<Bytef*>(&out[used_]);
      z_.avail_out = static_cast<uInt>(room);
      deflate(&z_, flush);
      used_ += room - z_.avail_out;
    } while (z_.avail_out == 0 || z_.avail_in > 0);
    if (flush != Z_NO_FLUSH) out.resize(used_);
    cpu_s += thread_cpu_s() - c0;
  }
  std::string out;
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t size = 0;
  double cpu_s = 0;

 private:
  z_stream z_{};
  std::size_t used_ = 0;
};

// Where a piece's text goes: a string, or (gzip) a deflater that takes it in 1 MiB chunks.
class Sink {
 public:
  explicit Sink(Deflater* z = nullptr) : z_(z) {}
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (!z_ || buf_.size() < (1u << 20)) return;
    z_->feed(buf_, Z_NO_FLUSH);
    buf_.clear();
  }

 private:
  Deflater* z_;
  std::string buf_;
};

void num(std::string& s, double v) {
  char b[32];
  auto r = std::to_chars(b, b + sizeof b, v);  // shortest text that reads back to the same double
  s.append(b, r.ptr);
}
void num(std::string& s, long long v) {
  char b[24];
  auto r = std::to_chars(b, b + sizeof b, v);
  s.append(b, r.ptr);
}
void quoted(std::string& s, const std::string& v) { s += Json(v).dump(); }

// A name already JSON-quoted, once per workload name.
std::vector<std::string> quoted_all(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const std::string& n : names) out.push_back(Json(n).dump());
  return out;
}

const char* category(ActivityKind k) {
  switch (k) {
    case ActivityKind::memcpy: return "gpu_memcpy";
    case ActivityKind::memset: return "gpu_memset";
    default: return "kernel";
  }
}

const char* nccl_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return "allreduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_gather: return "allgather";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::send: return "send";
    case CollectiveKind::recv: return "recv";
  }
  return "allreduce";
}

struct Context {
  const TraceExport& t;
  const Workload& wl;
  const std::vector<CollectiveCall>& collectives;
  std::vector<std::string> names, annotations;
  Sink& out;
  TraceExportStats stats;
  void begin_event() {
    out.maybe_flush();  // the events before this one are complete
    std::string& s = out.buf();
    s += stats.events == 0 ? "\n" : ",\n";
    ++stats.events;
  }
};

void metadata_event(Context& c, const char* what, int pid, long tid, const std::string& key, const std::string& value, bool number) {
  c.begin_event();
  std::string& s = c.out.buf();
  s += "{\"ph\":\"M\",\"name\":\"";
  s += what;
  s += "\",\"pid\":";
  num(s, static_cast<long long>(pid));
  s += ",\"tid\":";
  num(s, static_cast<long long>(tid));
  s += ",\"args\":{\"" + key + "\":";
  if (number) s += value;
  else quoted(s, value);
  s += "}}";
}

// A collective call's NCCL args, as PyTorch's record_param_comms writes them (bytes as a Byte tensor), each after a comma.
void call_args(Context& c, const CollectiveCall& call, std::string& s) {
  s += ",\"Collective name\":\"";
  s += nccl_name(call.kind);
  s += "\",\"dtype\":\"Byte\",\"In msg nelems\":";
  num(s, static_cast<long long>(call.bytes + 0.5));
  s += ",\"Out msg nelems\":";
  num(s, static_cast<long long>(call.bytes + 0.5));
  const bool known = call.group >= 0 && static_cast<std::size_t>(call.group) < c.wl.groups.size();
  if (known) {
    const auto g = static_cast<std::size_t>(call.group);
    const int size = g < c.wl.group_sizes.size() && c.wl.group_sizes[g] > 0 ? c.wl.group_sizes[g] : static_cast<int>(c.wl.groups[g].size());
    s += ",\"Group size\":";
    num(s, static_cast<long long>(std::max(1, size)));
    s += ",\"Process Group Name\":";
    quoted(s, g < c.wl.group_names.size() && !c.wl.group_names[g].empty() ? c.wl.group_names[g] : "group" + std::to_string(g));
    // A transfer without a peer written with its group's rank list would read back with the other rank of a
    // two-rank group as its peer (and could hang the replay of the export): its record names the group only.
    if (!c.wl.groups[g].empty() && !transfer_without_peer(call)) {
      std::string ranks = "[";
      for (std::size_t i = 0; i < c.wl.groups[g].size(); ++i) ranks += (i ? ", " : "") + std::to_string(c.wl.groups[g][i]);
      s += ",\"Process Group Ranks\":";
      quoted(s, ranks + "]");
    }
  } else {
    s += ",\"Group size\":1";  // the rank's own (folded) tensor-parallel group: its time is in the duration
  }
  if (call.peer >= 0 && is_transfer(call.kind)) {
    s += call.kind == CollectiveKind::send ? ",\"Dst Rank\":" : ",\"Src Rank\":";
    num(s, static_cast<long long>(call.peer));
  }
}

// The kernel's collective: its call's args, or for a batch of sends and receives (CollectiveCall::batched) a
// coalescing group's end ("coalesced", as PyTorch names it) with dvfs-sim's "Batched calls", one record per call,
// which the importer reads back as the batch (PyTorch records them on the host, launching nothing: see
// docs/trace-formats.md).
void collective_args(Context& c, const Kernel& k, std::string& s) {
  const CollectiveCall* first = &c.collectives[k.collective - 1];
  const CallSpan<const CollectiveCall> calls{first, first + 1 + first->batched};
  if (calls.size() == 1) return call_args(c, *first, s);
  s += ",\"Collective name\":\"coalesced\",\"Batched calls\":[";
  for (const CollectiveCall& call : calls) {
    std::string record;
    call_args(c, call, record);
    s += (&call == calls.begin() ? "{" : ",{") + record.substr(1) + "}";
  }
  s += "]";
}

void shape_args(const LaunchShape& sh, ActivityKind kind, std::string& s) {
  if (kind == ActivityKind::kernel) {
    s += ",\"grid\":[" + std::to_string(sh.grid[0]) + "," + std::to_string(sh.grid[1]) + "," + std::to_string(sh.grid[2]) + "]";
    s += ",\"block\":[" + std::to_string(sh.block[0]) + "," + std::to_string(sh.block[1]) + "," + std::to_string(sh.block[2]) + "]";
    s += ",\"registers per thread\":" + std::to_string(sh.registers_per_thread);
    s += ",\"shared memory\":" + std::to_string(sh.shared_memory_bytes);
  } else if (sh.bytes > 0) {
    s += ",\"bytes\":" + std::to_string(sh.bytes);
  }
}

// The rates the power model priced, per second of the simulated duration (the same work in that time).
void work_args(const Kernel& k, double scale, std::string& s) {
  if (k.work == WorkSource::unknown) return;  // launch_elementwise kept: a re-import prices it as this replay did
  s += ",\"work\":{\"source\":\"";
  s += to_string(k.work);
  s += "\",\"tensor precision\":\"";
  s += to_string(k.tensor_precision);
  if (k.tensor_tflops > 0) {  // how the tensor work was issued: priced apart (models/README.md)
    s += "\",\"tensor issue\":\"";
    s += to_string(k.tensor_issue);
  }
  s += "\",\"tensor TFLOP/s\":";
  num(s, k.tensor_tflops * scale);
  s += ",\"fma TFLOP/s\":";
  num(s, k.fma_tflops * scale);
  s += ",\"alu TOP/s\":";
  num(s, k.alu_tops * scale);
  s += ",\"memory TB/s\":";
  num(s, k.memory_tbps * scale);
  if (k.memory_fill_tbps > 0) {  // written with one repeated value (fills, memsets): priced apart
    s += ",\"memory fill TB/s\":";
    num(s, k.memory_fill_tbps * scale);
  }
  if (k.unvectorised_tbps > 0) {  // moved by ATen's non-vectorised elementwise loop: priced apart
    s += ",\"unvectorised TB/s\":";
    num(s, k.unvectorised_tbps * scale);
  }
  s += "}";
}

void activity_event(Context& c, const ExportedGpu& g, const ActivityRecord& r) {
  const Rank& rank = *g.program;
  const Kernel& k = rank.kernels[r.kernel];
  const double dur_s = r.end_s - r.start_s;
  c.begin_event();
  std::string& s = c.out.buf();
  s += "{\"ph\":\"X\",\"cat\":\"";
  s += category(k.kind);
  s += "\",\"name\":";
  s += c.names[k.name_id];
  s += ",\"pid\":";
  num(s, static_cast<long long>(g.pid));
  s += ",\"tid\":";
  num(s, static_cast<long long>(k.stream));
  const double ts_us = r.start_s * 1e6;
  s += ",\"ts\":";
  num(s, ts_us);
  s += ",\"dur\":";
  num(s, r.end_s * 1e6 - ts_us);
  s += ",\"args\":{\"device\":";
  num(s, static_cast<long long>(g.pid));
  s += ",\"stream\":";
  num(s, static_cast<long long>(k.stream));
  const long long corr = r.kernel < rank.correlations.size() && rank.correlations[r.kernel] >= 0 ? rank.correlations[r.kernel] : r.kernel + 1LL;
  s += ",\"correlation\":";
  num(s, corr);
  if (r.kernel < rank.shapes.size()) shape_args(rank.shapes[r.kernel], k.kind, s);
  s += ",\"blocks per SM\":";
  num(s, static_cast<double>(k.sm_fill));
  if (k.collective) collective_args(c, k, s);
  if (dur_s > 0) {
    // Time-weighted over the activity, to 1 kHz (the sum of its segments' clock x time leaves rounding dust).
    s += ",\"sm clock (MHz)\":";
    num(s, std::round(r.sm_mhz_time / dur_s * 1e3) / 1e3);
    s += ",\"mem clock (MHz)\":";
    num(s, std::round(r.mem_mhz_time / dur_s * 1e3) / 1e3);
    s += ",\"power (W)\":";
    num(s, r.energy_j / dur_s);
  }
  s += ",\"energy (J)\":";
  num(s, r.energy_j);
  s += ",\"recorded dur (us)\":";
  num(s, k.duration_s * 1e6);
  s += ",\"kernel class\":\"";
  s += to_string(k.cls);
  s += "\",\"phase\":\"";
  s += to_string(c.wl.annotation_sets[k.annotation_set].phase);
  s += "\"";
  work_args(k, dur_s > 0 ? k.duration_s / dur_s : 1.0, s);
  s += "}}";
  ++c.stats.activities;
}

void range_event(Context& c, const char* cat, const std::string& quoted_name, int pid, long tid, double t0_s, double t1_s) {
  c.begin_event();
  std::string& s = c.out.buf();
  s += "{\"ph\":\"X\",\"cat\":\"";
  s += cat;
  s += "\",\"name\":";
  s += quoted_name;
  s += ",\"pid\":";
  num(s, static_cast<long long>(pid));
  s += ",\"tid\":";
  num(s, static_cast<long long>(tid));
  const double ts = t0_s * 1e6;
  s += ",\"ts\":";
  num(s, ts);
  s += ",\"dur\":";
  num(s, std::max(0.0, t1_s * 1e6 - ts));
  s += ",\"args\":{\"device\":";
  num(s, static_cast<long long>(pid));
  s += "}}";
}

// A range that ends with an activity stops a hair (1 ns, or half the activity) before that activity's end:
// an activity starting right at that instant is then not inside it when the trace is imported again.
double range_end(const ActivityRecord& last) { return last.end_s - std::min(1e-9, 0.5 * (last.end_s - last.start_s)); }

void step_ranges(Context& c, const ExportedGpu& g) {
  const auto& steps = g.outcome->meter.steps();
  const std::size_t n = g.program->steps.size();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].start_s < 0 || steps[i].end_s < steps[i].start_s) continue;
    const std::string label = c.t.repeat > 1 || n == 0 ? "step#" + std::to_string(i) : g.program->steps[i % n].label;
    range_event(c, "gpu_user_annotation", Json(label).dump(), g.pid, kStepTid, steps[i].start_s, steps[i].end_s);
  }
}

// Contiguous runs of activities under one annotation (and, on their own track, one phase).
void annotation_ranges(Context& c, const ExportedGpu& g) {
  const auto& recs = g.outcome->meter.activities();
  std::map<std::uint32_t, std::size_t> open;  // annotation -> first record of its run
  auto close = [&](std::uint32_t a, std::size_t first, std::size_t last) {
    range_event(c, "gpu_user_annotation", c.annotations[a], g.pid, kAnnotationTid, recs[first].start_s, range_end(recs[last]));
  };
  std::size_t phase_first = 0;
  for (std::size_t i = 0; i <= recs.size(); ++i) {
    const AnnotationSet* set = i < recs.size() ? &c.wl.annotation_sets[g.program->kernels[recs[i].kernel].annotation_set] : nullptr;
    for (auto it = open.begin(); it != open.end();) {
      if (set && std::binary_search(set->annotations.begin(), set->annotations.end(), it->first)) {
        ++it;
        continue;
      }
      close(it->first, it->second, i - 1);
      it = open.erase(it);
    }
    if (set)
      for (std::uint32_t a : set->annotations) open.emplace(a, i);
    const auto phase_of = [&](std::size_t j) { return c.wl.annotation_sets[g.program->kernels[recs[j].kernel].annotation_set].phase; };
    if (i > 0 && (i == recs.size() || phase_of(i) != phase_of(phase_first))) {
      if (phase_of(phase_first) != Phase::other)
        range_event(c, "dvfs_phase", Json(to_string(phase_of(phase_first))).dump(), g.pid, kPhaseTid, recs[phase_first].start_s,
                    range_end(recs[i - 1]));
      phase_first = i;
    }
  }
}

void counter_event(Context& c, const char* name, const char* key, int pid, double t_s, double v) {
  c.begin_event();
  std::string& s = c.out.buf();
  s += "{\"ph\":\"C\",\"name\":\"";
  s += name;
  s += "\",\"pid\":";
  num(s, static_cast<long long>(pid));
  s += ",\"tid\":0,\"ts\":";
  num(s, t_s * 1e6);
  s += ",\"args\":{\"";
  s += key;
  s += "\":";
  num(s, v);
  s += "}}";
}

// The meter's timeline as counters: each interval's mean power and clocks from its start; energy so far.
void counters(Context& c, const ExportedGpu& g) {
  const EnergyMeter& m = g.outcome->meter;
  const double dt = m.timeline_interval_s();
  double cumulative = 0, t_end = 0;
  for (std::size_t i = 0; i < m.timeline().size(); ++i) {
    const double t0 = static_cast<double>(i) * dt, width = std::min(dt, g.outcome->stats.metered_end_s() - t0);
    if (width <= 0) break;
    const TimelinePoint& p = m.timeline()[i];
    counter_event(c, "power (W)", "power_w", g.pid, t0, p.energy_j / width);
    counter_event(c, "SM clock (MHz)", "sm_mhz", g.pid, t0, p.sm_mhz_time / width);
    counter_event(c, "memory clock (MHz)", "mem_mhz", g.pid, t0, p.mem_mhz_time / width);
    counter_event(c, "energy (J)", "energy_j", g.pid, t0, cumulative);
    cumulative += p.energy_j;
    t_end = t0 + width;
  }
  if (t_end > 0) counter_event(c, "energy (J)", "energy_j", g.pid, t_end, cumulative);
}

void gpu_events(Context& c, const ExportedGpu& g) {
  metadata_event(c, "process_name", g.pid, 0, "name", g.label, false);
  metadata_event(c, "process_sort_index", g.pid, 0, "sort_index", std::to_string(g.pid), true);
  std::set<long> streams;
  for (const Kernel& k : g.program->kernels) streams.insert(k.stream);
  for (long s : streams) metadata_event(c, "thread_name", g.pid, s, "name", "stream " + std::to_string(s), false);
  metadata_event(c, "thread_name", g.pid, kStepTid, "name", "steps", false);
  metadata_event(c, "thread_name", g.pid, kPhaseTid, "name", "phases", false);
  metadata_event(c, "thread_name", g.pid, kAnnotationTid, "name", "annotations", false);
  for (const ActivityRecord& r : g.outcome->meter.activities()) activity_event(c, g, r);
  step_ranges(c, g);
  annotation_ranges(c, g);
  counters(c, g);
}

// The document's head: deviceProperties, the run's metadata and the opening of traceEvents.
std::string document_head(const TraceExport& t) {
  std::string s = "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"deviceProperties\":[";
  for (std::size_t i = 0; i < t.gpus.size(); ++i) {
    s += i ? ",{\"id\":" : "{\"id\":";
    num(s, static_cast<long long>(t.gpus[i].pid));
    s += ",\"name\":";
    quoted(s, t.device_name);
    s += ",\"numSms\":";
    num(s, static_cast<long long>(t.sm_count));
    s += "}";
  }
  s += "],\"dvfs_sim\":" + t.metadata.dump() + ",\"traceEvents\":[";
  return s;
}

void check_export(const TraceExport& t) {
  if (!t.workload) throw std::logic_error("trace export: no workload");
  for (const ExportedGpu& g : t.gpus) {
    if (!g.program || !g.outcome) throw std::logic_error("trace export: a GPU without its program or outcome");
    if (!g.outcome->meter.recording_activities())
      throw std::logic_error("trace export: the replay did not record its activities (ReplayOptions::record_activities)");
  }
}

// One piece of the document (the head, a GPU's events, the tail): its text, or that text as a raw deflate segment
// ending on a byte boundary (Z_SYNC_FLUSH; the tail's ends the stream), with its CRC-32 and length -- segments
// concatenate into one gzip member, as pigz writes them.
struct Piece {
  std::string bytes;
  uLong crc = 0;
  std::size_t size = 0;
  TraceExportStats stats;
  double deflate_cpu_s = 0;
};

// Runs make(i) for i in [0, n) on up to `threads` threads and hands each result to consume(i, piece) on the calling
// thread in order of i, with at most `window` results made and not yet consumed (memory stays bounded).
void ordered_parallel(std::size_t n, std::size_t threads, std::size_t window, const std::function<Piece(std::size_t)>& make,
                      const std::function<void(std::size_t, Piece&)>& consume) {
  std::vector<Piece> done(n);
  std::vector<char> ready(n, 0);
  std::vector<std::exception_ptr> errors(n);
  std::mutex m;
  std::condition_variable cv;
  std::size_t next = 0, consumed = 0;
  auto work = [&] {
    for (;;) {
      std::size_t i;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return next >= n || next < consumed + window; });
        if (next >= n) return;
        i = next++;
      }
      Piece p;
      try {
        p = make(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(m);
        done[i] = std::move(p);
        ready[i] = 1;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t k = 0; k < std::max<std::size_t>(1, threads); ++k) pool.emplace_back(work);
  std::exception_ptr first_error;
  for (std::size_t i = 0; i < n; ++i) {
    Piece p;
    {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return ready[i] != 0; });
      p = std::move(done[i]);
      ++consumed;
    }
    cv.notify_all();
    if (errors[i] && !first_error) first_error = errors[i];
    if (!first_error) consume(i, p);
  }
  for (std::thread& th : pool) th.join();
  if (first_error) std::rethrow_exception(first_error);
}

// The pieces of the document in order: 0 the head, 1..G the GPUs' events, G+1 the tail; each made on its own.
Piece make_piece(const TraceExport& t, const std::vector<std::string>& names, const std::vector<std::string>& annotations,
                 std::size_t i, bool gzip) {
  Piece p;
  std::unique_ptr<Deflater> z(gzip ? new Deflater : nullptr);
  Sink sink(z.get());
  if (i == 0) {
    sink.buf() = document_head(t);
  } else if (i == t.gpus.size() + 1) {
    sink.buf() = "\n]}\n";
  } else {
    Context c{t, *t.workload, t.collectives ? *t.collectives : t.workload->collectives, names, annotations, sink, {}};
    c.stats.events = i > 1 ? 1 : 0;  // every GPU after the first starts with a separator
    gpu_events(c, t.gpus[i - 1]);
    c.stats.events -= i > 1 ? 1 : 0;
    p.stats = c.stats;
  }
  if (!z) {
    p.bytes = std::move(sink.buf());
    p.stats.bytes = p.size = p.bytes.size();
    return p;
  }
  z->feed(sink.buf(), i == t.gpus.size() + 1 ? Z_FINISH : Z_SYNC_FLUSH);
  p.bytes = std::move(z->out);
  p.crc = z->crc;
  p.stats.bytes = p.size = z->size;
  p.deflate_cpu_s = z->cpu_s;
  return p;
}

std::size_t export_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

// The document, piece by piece, to `write` (in order); deflated when `gzip`. Returns the summed stats.
TraceExportStats export_pieces(const TraceExport& all, bool gzip, const std::function<void(Piece&)>& write) {
  TraceExport t = all;
  if (!t.only_gpus.empty()) {
    const std::set<int> keep(all.only_gpus.begin(), all.only_gpus.end());
    t.gpus.clear();
    for (const ExportedGpu& g : all.gpus)
      if (keep.count(g.pid)) t.gpus.push_back(g);
    // a GPU the run does not have was written as an empty trace without a word
    for (int want : keep)
      if (std::none_of(all.gpus.begin(), all.gpus.end(), [want](const ExportedGpu& g) { return g.pid == want; }))
        throw InputError("--trace-gpus", "", "expected GPUs of this run (0 to " + std::to_string(all.gpus.empty() ? 0 : all.gpus.back().pid) +
                                                 "), got " + std::to_string(want));
  }
  check_export(t);
  const std::vector<std::string> names = quoted_all(t.workload->names), annotations = quoted_all(t.workload->annotation_names);
  const std::size_t n = t.gpus.size() + 2, threads = export_threads();
  TraceExportStats st;
  ordered_parallel(
      n, threads, 2 * threads + 2,
      [&](std::size_t i) { return make_piece(t, names, annotations, i, gzip); },
      [&](std::size_t, Piece& p) {
        st.events += p.stats.events;
        st.activities += p.stats.activities;
        st.bytes += p.stats.bytes;
        st.compress_cpu_s += p.deflate_cpu_s;
        write(p);
      });
  return st;
}

// The directories above `path` (mkdir -p); a failure shows when the file is opened.
void make_parent_directories(const std::string& path) {
  for (std::size_t i = 1; i < path.size(); ++i)
    if (path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

void put_le32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::string trace_export_text(const TraceExport& t, TraceExportStats* stats) {
  std::string text;
  const TraceExportStats st = export_pieces(t, false, [&](Piece& p) { text += p.bytes; });
  if (stats) *stats = st;
  return text;
}

static double cpu_now_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

TraceExportStats write_trace_export(const TraceExport& t, const std::string& path) {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_now_s();
  make_parent_directories(path);
  const bool gzip = ends_with(path, ".gz");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw InputError(path, "", "cannot write the trace file");
  bool ok = true;
  // gzip (RFC 1952): a 10-byte header, the deflate stream (the pieces' segments in order), CRC-32 and length mod 2^32.
  static const unsigned char kGzipHead[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  if (gzip) ok = std::fwrite(kGzipHead, 1, sizeof kGzipHead, f) == sizeof kGzipHead;
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t length = 0;
  TraceExportStats st;
  try {
    st = export_pieces(t, gzip, [&](Piece& p) {
      ok = ok && std::fwrite(p.bytes.data(), 1, p.bytes.size(), f) == p.bytes.size();
      crc = crc32_combine(crc, p.crc, static_cast<z_off_t>(p.size));
      length += p.size;
    });
  } catch (...) {
    std::fclose(f);
    throw;
  }
  if (gzip) {
    std::string tail;
    put_le32(tail, static_cast<std::uint32_t>(crc));
    put_le32(tail, static_cast<std::uint32_t>(length & 0xffffffffu));
    ok = ok && std::fwrite(tail.data(), 1, tail.size(), f) == tail.size();
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw InputError(path, "", "cannot write the trace file");
  struct stat sb {};
  if (::stat(path.c_str(), &sb) == 0) st.file_bytes = static_cast<std::size_t>(sb.st_size);
  st.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  st.cpu_s = cpu_now_s() - cpu0;
  return st;
}

std::vector<int> parse_gpu_list(const std::string& text, const std::string& field) {
  std::vector<int> out;
  std::size_t pos = 0;
  auto number = [&](std::size_t& p) {
    std::size_t q = p;
    while (q < text.size() && text[q] >= '0' && text[q] <= '9') ++q;
    if (q == p || q - p > 6) throw InputError(field, "", "expected GPU ids like 0-7,64 (got \"" + text + "\")");
    const int v = std::stoi(text.substr(p, q - p));
    p = q;
    return v;
  };
  while (pos < text.size()) {
    const int a = number(pos);
    int b = a;
    if (pos < text.size() && text[pos] == '-') b = number(++pos);
    if (b < a || out.size() + static_cast<std::size_t>(b - a) >= 65536)
      throw InputError(field, "", "expected ascending ranges of at most 65536 GPU ids (got \"" + text + "\")");
    for (int g = a; g <= b; ++g) out.push_back(g);
    if (pos < text.size() && text[pos++] != ',') throw InputError(field, "", "expected GPU ids like 0-7,64 (got \"" + text + "\")");
  }
  if (out.empty()) throw InputError(field, "", "expected at least one GPU id");
  return out;
}

Json trace_export_stats_json(const TraceExportStats& st, const std::string& path) {
  return {{"file", path}, {"events", st.events}, {"activities", st.activities}, {"bytes", st.bytes}, {"file_bytes", st.file_bytes},
          {"seconds", st.wall_s}, {"cpu_s", st.cpu_s}, {"compress_cpu_s", st.compress_cpu_s}};
}

TraceExport engine_trace_export(const Workload& wl, const std::vector<RankOutcome>& outcomes, const std::string& gpu_model,
                                int sm_count, int repeat, Json metadata) {
  TraceExport t;
  t.workload = &wl;
  t.sm_count = sm_count;
  t.repeat = repeat;
  const std::string device = wl.ranks.empty() || wl.ranks.front().device_name.empty() ? "GPU" : wl.ranks.front().device_name;
  t.device_name = device + " (simulated: " + gpu_model + ")";
  t.metadata = std::move(metadata);
  for (std::size_t i = 0; i < wl.ranks.size() && i < outcomes.size(); ++i) {
    ExportedGpu g;
    g.program = &wl.ranks[i];
    g.outcome = &outcomes[i];
    g.pid = wl.ranks[i].id;
    g.label = "GPU " + std::to_string(wl.ranks[i].id) + " (" + gpu_model + ", " + outcomes[i].policy + ")";
    t.gpus.push_back(std::move(g));
  }
  return t;
}

}  // namespace dvfs
