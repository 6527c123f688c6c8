#include "traces/src/workload_cache.hpp"

#include "sim/core/content_hash.hpp"
#include "sim/core/text_format.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

namespace dvfs {

// The encoder lists every field below; these sizes catch a field added to a struct without it. When one fails:
// add the field to the matching fields() overload, bump kWorkloadCacheVersion, then update the size here.
static_assert(sizeof(Kernel) == 80, "Kernel changed: add the field to fields(Kernel) and bump kWorkloadCacheVersion");
static_assert(sizeof(LaunchShape) == 40, "LaunchShape changed: update fields(LaunchShape), bump kWorkloadCacheVersion");
static_assert(sizeof(CollectiveCall) == 32, "CollectiveCall changed: update fields(), bump kWorkloadCacheVersion");

namespace {

constexpr char kMagic[8] = {'D', 'V', 'F', 'S', 'W', 'L', 'C', '\0'};
constexpr std::uint32_t kByteOrderMark = 0x01020304u;
// magic, version, byte-order mark, key hash, payload size, payload checksum
constexpr std::size_t kHeaderSize = 8 + 4 + 4 + 8 + 8 + 8;

struct Corrupt {
  std::string why;
};

// Appends plain values and length-prefixed strings and arrays to a byte string.
class Writer {
 public:
  std::string bytes;
  template <class T>
  void operator()(const T& v) {
    static_assert(std::is_arithmetic<T>::value || std::is_enum<T>::value, "plain values only");
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void operator()(const std::string& s) {
    (*this)(static_cast<std::uint64_t>(s.size()));
    bytes.append(s);
  }
  template <class T>
  void operator()(const std::vector<T>& v);
};

// Reads back what Writer wrote; every read is bounds-checked (a truncated or corrupt payload throws Corrupt).
class Reader {
 public:
  Reader(const char* p, const char* end) : p_(p), end_(end) {}
  template <class T>
  void operator()(T& v) {
    static_assert(std::is_arithmetic<T>::value || std::is_enum<T>::value, "plain values only");
    need(sizeof v);
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
  }
  void operator()(std::string& s) {
    const std::size_t n = count(1);
    s.assign(p_, n);
    p_ += n;
  }
  template <class T>
  void operator()(std::vector<T>& v);
  // A length prefix, checked against what is left (each element takes at least min_bytes).
  std::size_t count(std::size_t min_bytes) {
    std::uint64_t n = 0;
    (*this)(n);
    if (n > static_cast<std::uint64_t>(end_ - p_) / min_bytes) throw Corrupt{"a length runs past the end of the entry"};
    return static_cast<std::size_t>(n);
  }
  bool done() const { return p_ == end_; }

 private:
  void need(std::size_t n) const {
    if (static_cast<std::size_t>(end_ - p_) < n) throw Corrupt{"truncated payload"};
  }
  const char* p_;
  const char* end_;
};

// Every field of every struct, in one list per struct: the encoder and the decoder both walk it.
template <class K, class F>
void kernel_fields(K& k, F& f) {
  f(k.gap_before_s), f(k.duration_s), f(k.recorded_sm_mhz), f(k.recorded_mem_mhz), f(k.sm_fill), f(k.name_id);
  f(k.annotation_set), f(k.step), f(k.collective), f(k.stream), f(k.cls), f(k.kind), f(k.tensor_tflops);
  f(k.fma_tflops), f(k.alu_tops), f(k.memory_tbps), f(k.memory_fill_tbps), f(k.tensor_precision), f(k.work);
  f(k.tensor_issue), f(k.unvectorised_tbps);
}
template <class F> void fields(Kernel& k, F& f) { kernel_fields(k, f); }
template <class F> void fields(const Kernel& k, F& f) { kernel_fields(k, f); }

template <class S, class F>
void shape_fields(S& s, F& f) {
  for (int i = 0; i < 3; ++i) f(s.grid[i]);
  for (int i = 0; i < 3; ++i) f(s.block[i]);
  f(s.registers_per_thread), f(s.shared_memory_bytes), f(s.bytes);
}
template <class F> void fields(LaunchShape& s, F& f) { shape_fields(s, f); }
template <class F> void fields(const LaunchShape& s, F& f) { shape_fields(s, f); }

template <class S, class F>
void step_fields(S& s, F& f) { f(s.label), f(s.first_kernel), f(s.last_kernel), f(s.lead_s), f(s.tail_s); }
template <class F> void fields(Step& s, F& f) { step_fields(s, f); }
template <class F> void fields(const Step& s, F& f) { step_fields(s, f); }

template <class R, class F>
void rank_fields(R& r, F& f) {
  f(r.id), f(r.device_name), f(r.kernels), f(r.shapes), f(r.steps), f(r.origin_epoch_ns), f(r.recorded_start_s);
  f(r.correlations), f(r.clipped);
}
template <class F> void fields(Rank& r, F& f) { rank_fields(r, f); }
template <class F> void fields(const Rank& r, F& f) { rank_fields(r, f); }

template <class S, class F>
void span_fields(S& s, F& f) { f(s.kernel), f(s.start_s), f(s.duration_s); }
template <class F> void fields(ClippedSpan& s, F& f) { span_fields(s, f); }
template <class F> void fields(const ClippedSpan& s, F& f) { span_fields(s, f); }

template <class A, class F>
void set_fields(A& a, F& f) { f(a.annotations), f(a.phase); }
template <class F> void fields(AnnotationSet& a, F& f) { set_fields(a, f); }
template <class F> void fields(const AnnotationSet& a, F& f) { set_fields(a, f); }

template <class C, class F>
void call_fields(C& c, F& f) { f(c.kind), f(c.bytes), f(c.group), f(c.peer), f(c.batched); }
template <class F> void fields(CollectiveCall& c, F& f) { call_fields(c, f); }
template <class F> void fields(const CollectiveCall& c, F& f) { call_fields(c, f); }

template <class W, class F>
void workload_fields(W& w, F& f) {
  f(w.source), f(w.names), f(w.annotation_names), f(w.annotation_sets), f(w.ranks), f(w.groups), f(w.group_names);
  f(w.group_sizes), f(w.collectives);
}

template <class R, class F>
void report_fields(R& r, F& f) {
  f(r.schema), f(r.activities), f(r.overlapped_activities), f(r.step_source), f(r.annotation_source);
  f(r.device_name), f(r.device_platform), f(r.world_size), f(r.backend), f(r.notes);
}

template <class T>
constexpr bool is_plain() { return std::is_arithmetic<T>::value || std::is_enum<T>::value; }

template <class T>
void Writer::operator()(const std::vector<T>& v) {
  (*this)(static_cast<std::uint64_t>(v.size()));
  if constexpr (is_plain<T>()) {
    bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  } else if constexpr (std::is_same<T, std::string>::value || std::is_same<T, std::vector<int>>::value) {
    for (const T& e : v) (*this)(e);
  } else {
    for (const T& e : v) fields(e, *this);
  }
}

template <class T>
void Reader::operator()(std::vector<T>& v) {
  if constexpr (is_plain<T>()) {
    const std::size_t n = count(sizeof(T));
    v.resize(n);
    if (n) std::memcpy(v.data(), p_, n * sizeof(T));
    p_ += n * sizeof(T);
  } else {
    const std::size_t n = count(1);
    v.clear();
    v.resize(n);
    if constexpr (std::is_same<T, std::string>::value || std::is_same<T, std::vector<int>>::value) {
      for (T& e : v) (*this)(e);
    } else {
      for (T& e : v) fields(e, *this);
    }
  }
}

template <class T>
void put(std::string& out, std::size_t at, const T& v) {
  std::memcpy(&out[at], &v, sizeof v);
}
template <class T>
T get(const char* in, std::size_t at) {
  T v;
  std::memcpy(&v, in + at, sizeof v);
  return v;
}

bool write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void make_dirs(const std::string& dir) {
  std::string partial;
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if ((i == dir.size() || dir[i] == '/') && !partial.empty()) ::mkdir(partial.c_str(), 0755);
    if (i < dir.size()) partial += dir[i];
  }
}

std::atomic<bool> g_enabled{true};
std::atomic<unsigned> g_tmp_counter{0};

}  // namespace

std::string workload_cache_key(const std::string& kind, const std::string& path, const std::vector<std::string>& files) {
  std::ostringstream key;
  key << "dvfs-sim workload cache " << kWorkloadCacheVersion << "\nload " << kind << "\npath " << path << "\n";
  for (const std::string& f : files) {
    std::uint64_t hash = 0, size = 0;
    if (!hash_file(f, hash, size)) return "";
    key << "file " << f << " " << size << " " << hex64(hash) << "\n";
  }
  return key.str();
}

std::string encode_cached_import(const std::string& key, const CachedImport& c) {
  return encode_cached_import(key, c.workload, c.report);
}

std::string encode_cached_import(const std::string& key, const Workload& workload, const ImportReport& report) {
  Writer w;
  w.bytes.assign(kHeaderSize, '\0');
  w(key);
  workload_fields(workload, w);
  report_fields(report, w);
  std::string& out = w.bytes;
  std::memcpy(&out[0], kMagic, 8);
  put(out, 8, kWorkloadCacheVersion);
  put(out, 12, kByteOrderMark);
  put(out, 16, xxh64(key));
  put(out, 24, static_cast<std::uint64_t>(out.size() - kHeaderSize));
  put(out, 32, xxh64(out.data() + kHeaderSize, out.size() - kHeaderSize));
  return std::move(out);
}

bool decode_cached_import(const std::string& bytes, const std::string& key, CachedImport& out, std::string* why) {
  return decode_cached_import(bytes.data(), bytes.size(), key, out, why);
}

bool decode_cached_import(const char* in, std::size_t size, const std::string& key, CachedImport& out,
                          std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  if (size < kHeaderSize) return fail("shorter than its header");
  if (std::memcmp(in, kMagic, 8) != 0) return fail("not a workload cache entry (wrong magic)");
  if (get<std::uint32_t>(in, 8) != kWorkloadCacheVersion)
    return fail("cache version " + std::to_string(get<std::uint32_t>(in, 8)) + ", expected " +
                std::to_string(kWorkloadCacheVersion));
  if (get<std::uint32_t>(in, 12) != kByteOrderMark) return fail("written with another byte order");
  if (get<std::uint64_t>(in, 16) != xxh64(key)) return fail("key hash mismatch");
  if (get<std::uint64_t>(in, 24) != size - kHeaderSize) return fail("payload size mismatch (truncated entry)");
  if (get<std::uint64_t>(in, 32) != xxh64(in + kHeaderSize, size - kHeaderSize))
    return fail("payload checksum mismatch");
  try {
    Reader r(in + kHeaderSize, in + size);
    std::string stored_key;
    r(stored_key);
    if (stored_key != key) return fail("key text mismatch");
    CachedImport c;
    workload_fields(c.workload, r);
    report_fields(c.report, r);
    if (!r.done()) return fail("bytes after the payload");
    out = std::move(c);
    return true;
  } catch (const Corrupt& e) {
    return fail(e.why);
  }
}

WorkloadCache WorkloadCache::user() {
  const char* dir = std::getenv("DVFS_SIM_CACHE_DIR");
  if (dir && *dir) return WorkloadCache(dir);
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return WorkloadCache(std::string(xdg) + "/dvfs-sim");
  const char* home = std::getenv("HOME");
  return WorkloadCache(std::string(home && *home ? home : "/tmp") + "/.cache/dvfs-sim");
}

std::string WorkloadCache::entry_path(const std::string& key) const { return dir_ + "/" + hex64(xxh64(key)) + ".wlc"; }

bool WorkloadCache::load(const std::string& key, CachedImport& out) const {
  // Non-blocking: a FIFO at the entry's path blocked open() for ever (the run hung) before fstat could refuse it.
  const int fd = ::open(entry_path(key).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
  // Mapped, not read into a fresh buffer (its page faults were ~1 ms of a cached run's start). Entries are only
  // ever replaced by rename (store), never rewritten in place, so the mapping cannot shrink under the decoder.
  void* map = regular ? ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)
                      : MAP_FAILED;
  ::close(fd);
  if (map == MAP_FAILED) return false;
  const bool ok = decode_cached_import(static_cast<const char*>(map), static_cast<std::size_t>(st.st_size), key, out);
  ::munmap(map, static_cast<std::size_t>(st.st_size));
  return ok;
}

void WorkloadCache::store(const std::string& key, const CachedImport& c) const {
  make_dirs(dir_);
  const std::string final_path = entry_path(key);
  const std::string tmp = final_path + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(g_tmp_counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  const bool ok = write_all(fd, encode_cached_import(key, c));
  if (::close(fd) != 0 || !ok || std::rename(tmp.c_str(), final_path.c_str()) != 0) ::unlink(tmp.c_str());
}

namespace {

// A regular file (not followed through a link): what an entry or a temporary file is. A directory, FIFO or link named
// x.wlc is not an entry: info counted a directory that clear then left.
bool regular_file_at(const std::string& path, struct stat& st) { return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode); }

}  // namespace

std::string WorkloadCache::unusable() const {
  // Probed by doing what store does, then undoing it (access() says yes to root on /proc or a read-only mount).
  struct stat st {};
  if (::stat(dir_.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return "not a directory";
    const std::string probe = dir_ + "/probe.wlc.tmp." + std::to_string(::getpid()) + "." + std::to_string(g_tmp_counter.fetch_add(1));
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return std::string("not writable (") + std::strerror(errno) + ")";
    ::close(fd);
    ::unlink(probe.c_str());
    return "";
  }
  // Not there yet: store creates it and its missing parents. The first missing one is created and removed again.
  std::string missing = dir_;
  while (missing.size() > 1 && missing.back() == '/') missing.pop_back();
  for (;;) {
    const std::size_t slash = missing.find_last_of('/');
    const std::string up = slash == std::string::npos ? "." : slash == 0 ? "/" : missing.substr(0, slash);
    if (::stat(up.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return "cannot be created: " + up + " is not a directory";
      break;
    }
    missing = up;
  }
  if (::mkdir(missing.c_str(), 0755) != 0) return "cannot be created (" + missing + ": " + std::strerror(errno) + ")";
  ::rmdir(missing.c_str());
  return "";
}

WorkloadCacheInfo WorkloadCache::info() const {
  WorkloadCacheInfo out;
  out.dir = dir_;
  out.unusable = unusable();
  DIR* d = ::opendir(dir_.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st {};
    if (!ends_with(name, ".wlc")) continue;
    if (!regular_file_at(dir_ + "/" + name, st)) {
      ++out.not_entries;
      continue;
    }
    ++out.entries;
    out.bytes += static_cast<std::uint64_t>(st.st_size);
  }
  ::closedir(d);
  return out;
}

std::size_t WorkloadCache::clear() const {
  std::vector<std::string> doomed;
  DIR* d = ::opendir(dir_.c_str());
  if (!d) return 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st {};
    if ((ends_with(name, ".wlc") || name.find(".wlc.tmp.") != std::string::npos) && regular_file_at(dir_ + "/" + name, st))
      doomed.push_back(name);
  }
  ::closedir(d);
  std::size_t removed = 0;
  for (const std::string& name : doomed)
    if (::unlink((dir_ + "/" + name).c_str()) == 0 && ends_with(name, ".wlc")) ++removed;
  return removed;
}

bool workload_cache_enabled() {
  if (!g_enabled.load()) return false;
  const char* off = std::getenv("DVFS_SIM_NO_CACHE");
  return !(off && *off && std::strcmp(off, "0") != 0);
}

void set_workload_cache_enabled(bool enabled) { g_enabled.store(enabled); }

CachedImport cached_import(const std::string& key, const std::function<CachedImport()>& import) {
  if (key.empty() || !workload_cache_enabled()) return import();
  const WorkloadCache cache = WorkloadCache::user();
  CachedImport c;
  if (cache.load(key, c)) return c;
  c = import();
  cache.store(key, c);
  return c;
}

}  // namespace dvfs
