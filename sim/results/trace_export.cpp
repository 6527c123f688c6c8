#include "sim/results/trace_export.hpp"

#include "sim/core/errors.hpp"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <charconv>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sys/stat.h>

namespace dvfs {

namespace {

// Tracks of a GPU's process besides its streams (Perfetto sorts threads by tid).
constexpr long kStepTid = 1000001, kPhaseTid = 1000002, kAnnotationTid = 1000003;

// Where the text goes: a string, or a gzip file written in 1 MiB chunks that a second thread compresses while
// the text of the next ones is made (a 1,024-GPU trace never sits in memory, and text and deflate overlap).
class Sink {
 public:
  explicit Sink(gzFile gz = nullptr) : gz_(gz) {
    buf_.reserve(kChunk + 4096);
    if (gz_) worker_ = std::thread([this] { compress_loop(); });
  }
  ~Sink() { finish(); }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (gz_ && buf_.size() >= kChunk) flush();
  }
  // Hands the buffer to the compressor (waits while it is two chunks behind).
  void flush() {
    if (!gz_ || buf_.empty()) return;
    bytes_ += buf_.size();
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [this] { return queue_.size() < 2; });
    queue_.push_back(std::move(buf_));
    cv_.notify_all();
    lock.unlock();
    buf_ = std::string();
    buf_.reserve(kChunk + 4096);
  }
  // Everything handed over is compressed; returns false when a write failed.
  bool finish() {
    if (!worker_.joinable()) return ok_;
    flush();
    {
      std::lock_guard<std::mutex> lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    worker_.join();
    return ok_;
  }
  std::size_t bytes() const { return bytes_ + buf_.size(); }
  double compress_cpu_s() const { return compress_cpu_s_; }  // the compressor thread's CPU time, once finished

 private:
  void compress_loop() {
    for (;;) {
      std::string chunk;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return !queue_.empty() || done_; });
        if (queue_.empty()) {
          timespec ts{};
          clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
          compress_cpu_s_ = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
          return;
        }
        chunk = std::move(queue_.front());
        queue_.pop_front();
      }
      cv_.notify_all();
      if (gzwrite(gz_, chunk.data(), static_cast<unsigned>(chunk.size())) != static_cast<int>(chunk.size())) ok_ = false;
    }
  }

  static constexpr std::size_t kChunk = 1 << 20;
  gzFile gz_;
  std::string buf_;
  std::size_t bytes_ = 0;
  std::atomic<bool> ok_{true};
  std::thread worker_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool done_ = false;
  double compress_cpu_s_ = 0;
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

// The collective's NCCL args, as PyTorch's record_param_comms writes them (bytes as a Byte tensor).
void collective_args(Context& c, const Kernel& k, std::string& s) {
  const CollectiveCall& call = c.collectives[k.collective - 1];
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
    if (!c.wl.groups[g].empty()) {
      std::string ranks = "[";
      for (std::size_t i = 0; i < c.wl.groups[g].size(); ++i) ranks += (i ? ", " : "") + std::to_string(c.wl.groups[g][i]);
      s += ",\"Process Group Ranks\":";
      quoted(s, ranks + "]");
    }
  } else {
    s += ",\"Group size\":1";  // the rank's own (folded) tensor-parallel group: its time is in the duration
  }
  if (call.peer >= 0 && (call.kind == CollectiveKind::send || call.kind == CollectiveKind::recv)) {
    s += call.kind == CollectiveKind::send ? ",\"Dst Rank\":" : ",\"Src Rank\":";
    num(s, static_cast<long long>(call.peer));
  }
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
  if (k.work == WorkSource::unknown) return;
  s += ",\"work\":{\"source\":\"";
  s += to_string(k.work);
  s += "\",\"tensor precision\":\"";
  s += to_string(k.tensor_precision);
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
  c.out.maybe_flush();
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
  c.out.maybe_flush();
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
    const double t0 = static_cast<double>(i) * dt, width = std::min(dt, g.outcome->stats.end_s - t0);
    if (width <= 0) break;
    const TimelinePoint& p = m.timeline()[i];
    counter_event(c, "power (W)", "power_w", g.pid, t0, p.energy_j / width);
    counter_event(c, "SM clock (MHz)", "sm_mhz", g.pid, t0, p.sm_mhz_time / width);
    counter_event(c, "memory clock (MHz)", "mem_mhz", g.pid, t0, p.mem_mhz_time / width);
    counter_event(c, "energy (J)", "energy_j", g.pid, t0, cumulative);
    cumulative += p.energy_j;
    t_end = t0 + width;
    c.out.maybe_flush();
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

void write_document(Context& c) {
  std::string& s = c.out.buf();
  s += "{\"schemaVersion\":1,\"displayTimeUnit\":\"ms\",\"deviceProperties\":[";
  for (std::size_t i = 0; i < c.t.gpus.size(); ++i) {
    s += i ? ",{\"id\":" : "{\"id\":";
    num(s, static_cast<long long>(c.t.gpus[i].pid));
    s += ",\"name\":";
    quoted(s, c.t.device_name);
    s += ",\"numSms\":";
    num(s, static_cast<long long>(c.t.sm_count));
    s += "}";
  }
  s += "],\"dvfs_sim\":" + c.t.metadata.dump() + ",\"traceEvents\":[";
  for (const ExportedGpu& g : c.t.gpus) {
    if (!g.program || !g.outcome) throw std::logic_error("trace export: a GPU without its program or outcome");
    if (!g.outcome->meter.recording_activities())
      throw std::logic_error("trace export: the replay did not record its activities (ReplayOptions::record_activities)");
    gpu_events(c, g);
  }
  c.out.buf() += "\n]}\n";
}

TraceExportStats export_into(const TraceExport& t, Sink& sink) {
  if (!t.workload) throw std::logic_error("trace export: no workload");
  Context c{t, *t.workload, t.collectives ? *t.collectives : t.workload->collectives, quoted_all(t.workload->names),
            quoted_all(t.workload->annotation_names), sink, {}};
  write_document(c);
  c.stats.bytes = sink.bytes();
  return c.stats;
}

// The directories above `path` (mkdir -p); a failure shows when the file is opened.
void make_parent_directories(const std::string& path) {
  for (std::size_t i = 1; i < path.size(); ++i)
    if (path[i] == '/') ::mkdir(path.substr(0, i).c_str(), 0755);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string trace_export_text(const TraceExport& t, TraceExportStats* stats) {
  Sink sink;
  const TraceExportStats st = export_into(t, sink);
  if (stats) *stats = st;
  return std::move(sink.buf());
}

static double cpu_now_s() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

TraceExportStats write_trace_export(const TraceExport& t, const std::string& path) {
  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_now_s();
  TraceExportStats st;
  make_parent_directories(path);
  if (ends_with(path, ".gz")) {
    gzFile gz = gzopen(path.c_str(), "wb1");  // fastest level: a 1,024-GPU iteration in seconds
    if (!gz) throw InputError(path, "", "cannot write the trace file");
    bool ok = false;
    {
      Sink sink(gz);
      st = export_into(t, sink);
      ok = sink.finish();
      st.compress_cpu_s = sink.compress_cpu_s();
    }
    ok = gzclose(gz) == Z_OK && ok;
    if (!ok) throw InputError(path, "", "cannot write the trace file");
  } else {
    const std::string text = trace_export_text(t, &st);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f) std::fclose(f);
    if (!ok) throw InputError(path, "", "cannot write the trace file");
  }
  struct stat sb {};
  if (::stat(path.c_str(), &sb) == 0) st.file_bytes = static_cast<std::size_t>(sb.st_size);
  st.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  st.cpu_s = cpu_now_s() - cpu0;
  return st;
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
