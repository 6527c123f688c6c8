// The workload cache's entry format (traces/src/workload_cache.hpp): a Workload and its ImportReport come back
// field for field, and any entry that is not intact and of this key and version is refused.
#include "support/scratch_dir.hpp"
#include <filesystem>
#include "sim/core/content_hash.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/workload_cache.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

using namespace dvfs;

namespace {

// A fresh directory per call, inside one scratch directory that goes when the test process ends.
std::string temp_dir() {
  static const dvfs::testing::ScratchDir root("dvfs-wlc-test");
  static int made = 0;
  const std::string dir = root / std::to_string(made++);
  std::filesystem::create_directories(dir);
  return dir;
}

// A workload with every field set to a value other than its default.
CachedImport every_field() {
  CachedImport c;
  Workload& w = c.workload;
  w.source = "/traces/a.json.gz";
  w.names = {"gemm_kernel", "nccl_allreduce", ""};
  w.annotation_names = {"forward", "ProfilerStep#3"};
  w.annotation_sets.push_back({{0, 1}, Phase::backward});
  Rank r;
  r.id = 3;
  r.device_name = "NVIDIA H200";
  Kernel k;
  k.gap_before_s = 1.25e-6;
  k.duration_s = 3.5e-4;
  k.recorded_sm_mhz = 1980;
  k.recorded_mem_mhz = 3201;
  k.sm_fill = 0.5f;
  k.name_id = 1;
  k.annotation_set = 1;
  k.step = 0;
  k.collective = 1;
  k.stream = 7;
  k.cls = KernelClass::communication;
  k.kind = ActivityKind::memset;
  k.tensor_tflops = 101.5f;
  k.fma_tflops = 2.25f;
  k.alu_tops = 3.125f;
  k.memory_tbps = 1.5f;
  k.memory_fill_tbps = 0.25f;
  k.unvectorised_tbps = 0.75f;
  k.tensor_precision = TensorPrecision::fp8;
  k.work = WorkSource::launch_shape;
  k.tensor_issue = TensorIssue::warp;
  r.kernels = {k, Kernel{}};
  LaunchShape s;
  s.grid[0] = 1, s.grid[1] = 2, s.grid[2] = 3, s.block[0] = 128, s.block[1] = 4, s.block[2] = 5;
  s.registers_per_thread = 96, s.shared_memory_bytes = 49152, s.bytes = (1ull << 40) + 7;
  r.shapes = {s, LaunchShape{}};
  r.steps = {{"ProfilerStep#3", 0, 1, 2e-3, 4e-3}};
  r.origin_epoch_ns = 1.7e18;
  r.recorded_start_s = {0.0, 0.125};
  r.correlations = {-1, 1234567890123};
  r.clipped = {{1, 0.0625, 0.25}};
  w.ranks = {r, Rank{}};
  w.groups = {{0, 1}, {}};
  w.group_names = {"0", "tp"};
  w.group_sizes = {2, 8};
  w.collectives = {{CollectiveKind::recv, 4096.5, 1, 2}};
  ImportReport& rep = c.report;
  rep.schema = "kineto-2021";
  rep.activities = 12345678901;
  rep.overlapped_activities = 17;
  rep.step_source = "gpu_user_annotation";
  rep.annotation_source = "cpu annotation via correlation";
  rep.device_name = "NVIDIA H200";
  rep.device_platform = "rocm";
  rep.world_size = 16;
  rep.backend = "nccl";
  rep.notes = {"one note", "another"};
  return c;
}

void require_equal(const Kernel& a, const Kernel& b) {
  CHECK(a.gap_before_s == b.gap_before_s);
  CHECK(a.duration_s == b.duration_s);
  CHECK(a.recorded_sm_mhz == b.recorded_sm_mhz);
  CHECK(a.recorded_mem_mhz == b.recorded_mem_mhz);
  CHECK(a.sm_fill == b.sm_fill);
  CHECK(a.name_id == b.name_id);
  CHECK(a.annotation_set == b.annotation_set);
  CHECK(a.step == b.step);
  CHECK(a.collective == b.collective);
  CHECK(a.stream == b.stream);
  CHECK(a.cls == b.cls);
  CHECK(a.kind == b.kind);
  CHECK(a.tensor_tflops == b.tensor_tflops);
  CHECK(a.fma_tflops == b.fma_tflops);
  CHECK(a.alu_tops == b.alu_tops);
  CHECK(a.memory_tbps == b.memory_tbps);
  CHECK(a.memory_fill_tbps == b.memory_fill_tbps);
  CHECK(a.unvectorised_tbps == b.unvectorised_tbps);
  CHECK(a.tensor_precision == b.tensor_precision);
  CHECK(a.work == b.work);
  CHECK(a.tensor_issue == b.tensor_issue);
}

void require_equal(const LaunchShape& a, const LaunchShape& b) {
  for (int i = 0; i < 3; ++i) CHECK(a.grid[i] == b.grid[i]);
  for (int i = 0; i < 3; ++i) CHECK(a.block[i] == b.block[i]);
  CHECK(a.registers_per_thread == b.registers_per_thread);
  CHECK(a.shared_memory_bytes == b.shared_memory_bytes);
  CHECK(a.bytes == b.bytes);
}

void require_equal(const Rank& a, const Rank& b) {
  CHECK(a.id == b.id);
  CHECK(a.device_name == b.device_name);
  REQUIRE(a.kernels.size() == b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) require_equal(a.kernels[i], b.kernels[i]);
  REQUIRE(a.shapes.size() == b.shapes.size());
  for (std::size_t i = 0; i < a.shapes.size(); ++i) require_equal(a.shapes[i], b.shapes[i]);
  REQUIRE(a.steps.size() == b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    CHECK(a.steps[i].label == b.steps[i].label);
    CHECK(a.steps[i].first_kernel == b.steps[i].first_kernel);
    CHECK(a.steps[i].last_kernel == b.steps[i].last_kernel);
    CHECK(a.steps[i].lead_s == b.steps[i].lead_s);
    CHECK(a.steps[i].tail_s == b.steps[i].tail_s);
  }
  CHECK(a.origin_epoch_ns == b.origin_epoch_ns);
  CHECK(a.recorded_start_s == b.recorded_start_s);
  CHECK(a.correlations == b.correlations);
  REQUIRE(a.clipped.size() == b.clipped.size());
  for (std::size_t i = 0; i < a.clipped.size(); ++i) {
    CHECK(a.clipped[i].kernel == b.clipped[i].kernel);
    CHECK(a.clipped[i].start_s == b.clipped[i].start_s);
    CHECK(a.clipped[i].duration_s == b.clipped[i].duration_s);
  }
}

void require_equal_imports(const CachedImport& a, const CachedImport& b) {
  const Workload& x = a.workload;
  const Workload& y = b.workload;
  CHECK(x.source == y.source);
  CHECK(x.names == y.names);
  CHECK(x.annotation_names == y.annotation_names);
  REQUIRE(x.annotation_sets.size() == y.annotation_sets.size());
  for (std::size_t i = 0; i < x.annotation_sets.size(); ++i) {
    CHECK(x.annotation_sets[i].annotations == y.annotation_sets[i].annotations);
    CHECK(x.annotation_sets[i].phase == y.annotation_sets[i].phase);
  }
  REQUIRE(x.ranks.size() == y.ranks.size());
  for (std::size_t i = 0; i < x.ranks.size(); ++i) require_equal(x.ranks[i], y.ranks[i]);
  CHECK(x.groups == y.groups);
  CHECK(x.group_names == y.group_names);
  CHECK(x.group_sizes == y.group_sizes);
  REQUIRE(x.collectives.size() == y.collectives.size());
  for (std::size_t i = 0; i < x.collectives.size(); ++i) {
    CHECK(x.collectives[i].kind == y.collectives[i].kind);
    CHECK(x.collectives[i].bytes == y.collectives[i].bytes);
    CHECK(x.collectives[i].group == y.collectives[i].group);
    CHECK(x.collectives[i].peer == y.collectives[i].peer);
  }
  const ImportReport& p = a.report;
  const ImportReport& q = b.report;
  CHECK(p.schema == q.schema);
  CHECK(p.activities == q.activities);
  CHECK(p.overlapped_activities == q.overlapped_activities);
  CHECK(p.step_source == q.step_source);
  CHECK(p.annotation_source == q.annotation_source);
  CHECK(p.device_name == q.device_name);
  CHECK(p.device_platform == q.device_platform);
  CHECK(p.world_size == q.world_size);
  CHECK(p.backend == q.backend);
  CHECK(p.notes == q.notes);
}

}  // namespace

TEST_CASE("xxh64 gives the reference digests", "[workload_cache]") {
  // xxHash's published XXH64 values (seed 0).
  CHECK(xxh64("", 0) == 0xEF46DB3751D8E999ULL);
  CHECK(xxh64(std::string("a")) == 0xD24EC4F1A98C6E5BULL);
  CHECK(xxh64(std::string("abc")) == 0x44BC2CF5AD770999ULL);
  const std::string fox = "The quick brown fox jumps over the lazy dog";  // > 32 bytes: the four-lane loop
  CHECK(xxh64(fox) == 0x0B242D361FDA71BCULL);
}

TEST_CASE("xxh64 fed in pieces gives the one-shot digest", "[workload_cache]") {
  std::string data(300, '\0');
  std::uint64_t x = 88172645463325252ULL;
  for (char& c : data) c = static_cast<char>((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
  for (std::size_t size : {std::size_t{0}, std::size_t{5}, std::size_t{31}, std::size_t{32}, std::size_t{33},
                           std::size_t{64}, std::size_t{100}, std::size_t{300}}) {
    const std::uint64_t whole = xxh64(data.data(), size, 7);
    for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{31}, std::size_t{32}, std::size_t{33}, std::size_t{97}}) {
      Xxh64Stream s(7);
      for (std::size_t at = 0; at < size; at += piece) s.update(data.data() + at, std::min(piece, size - at));
      CHECK(s.size() == size);
      CHECK(s.digest() == whole);
    }
  }
}

TEST_CASE("a file's hash is XXH64 chained over its 4 MiB blocks", "[workload_cache]") {
  // The cache keys of entries already written stay valid only while this digest does.
  const std::string dir = temp_dir();
  constexpr std::size_t kBlock = 4u << 20;
  std::string bytes(2 * kBlock + 1000, '\0');
  std::uint64_t x = 1;
  for (char& c : bytes) c = static_cast<char>((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
  for (std::size_t size : {std::size_t{0}, std::size_t{1000}, kBlock, kBlock + 1, bytes.size()}) {
    const std::string f = dir + "/f" + std::to_string(size);
    std::ofstream(f, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size));
    std::uint64_t expected = 0;
    for (std::size_t at = 0; at < size; at += kBlock) expected = xxh64(bytes.data() + at, std::min(kBlock, size - at), expected);
    std::uint64_t hash = 1, got_size = 1;
    REQUIRE(hash_file(f, hash, got_size));
    CHECK(got_size == size);
    CHECK(hash == expected);
  }
  std::uint64_t hash = 0, size = 0;
  CHECK_FALSE(hash_file(dir + "/missing", hash, size));
  CHECK_FALSE(hash_file(dir, hash, size));  // a directory cannot be read
}

TEST_CASE("a workload comes back from its cache entry field for field", "[workload_cache]") {
  const CachedImport c = every_field();
  const std::string key = "dvfs-sim workload cache test\n";
  CachedImport back;
  std::string why;
  REQUIRE(decode_cached_import(encode_cached_import(key, c), key, back, &why));
  require_equal_imports(c, back);
}

TEST_CASE("an imported trace comes back from its cache entry unchanged", "[workload_cache]") {
  CachedImport c;
  c.workload = import_kineto(std::string(DVFS_TEST_FIXTURES) + "/kineto_current.json", Classifier::load_default(), &c.report);
  REQUIRE(c.workload.kernel_count() > 0);
  CachedImport back;
  REQUIRE(decode_cached_import(encode_cached_import("k", c), "k", back));
  require_equal_imports(c, back);
}

TEST_CASE("a cache entry that is not intact, or of another key or version, is refused", "[workload_cache]") {
  const CachedImport c = every_field();
  const std::string key = "the key\n";
  const std::string good = encode_cached_import(key, c);
  CachedImport out;
  std::string why;
  SECTION("truncated") {
    for (std::size_t n : {std::size_t{0}, std::size_t{10}, std::size_t{40}, good.size() / 2, good.size() - 1})
      CHECK_FALSE(decode_cached_import(good.substr(0, n), key, out, &why));
  }
  SECTION("wrong magic") {
    std::string bad = good;
    bad[0] = 'X';
    CHECK_FALSE(decode_cached_import(bad, key, out, &why));
    CHECK(why.find("magic") != std::string::npos);
  }
  SECTION("another version") {
    std::string bad = good;
    const std::uint32_t other = kWorkloadCacheVersion + 1;
    std::memcpy(&bad[8], &other, 4);
    CHECK_FALSE(decode_cached_import(bad, key, out, &why));
    CHECK(why.find("version") != std::string::npos);
  }
  SECTION("a flipped payload byte") {
    std::string bad = good;
    bad[bad.size() - 3] ^= 0x40;
    CHECK_FALSE(decode_cached_import(bad, key, out, &why));
    CHECK(why.find("checksum") != std::string::npos);
  }
  SECTION("another key") {
    CHECK_FALSE(decode_cached_import(good, "another key\n", out, &why));
    CHECK(why.find("key") != std::string::npos);
  }
  SECTION("bytes appended") {
    CHECK_FALSE(decode_cached_import(good + "x", key, out, &why));
  }
}

TEST_CASE("the cache key follows the files' content, the path and the load kind", "[workload_cache]") {
  const std::string dir = temp_dir();
  const std::string f = dir + "/t.json";
  std::ofstream(f) << "{\"traceEvents\": []}";
  const std::string k1 = workload_cache_key("trace-file", f, {f});
  CHECK(k1 == workload_cache_key("trace-file", f, {f}));
  CHECK(k1 != workload_cache_key("kineto-dir", f, {f}));
  CHECK(k1 != workload_cache_key("trace-file", "./" + f, {f}));
  std::ofstream(f) << "{\"traceEvents\": [ ]}";
  CHECK(k1 != workload_cache_key("trace-file", f, {f}));
  std::ofstream(f) << "{\"traceEvents\": [1]}";  // same size, other bytes
  const std::string k2 = workload_cache_key("trace-file", f, {f});
  std::ofstream(f) << "{\"traceEvents\": [2]}";
  CHECK(k2 != workload_cache_key("trace-file", f, {f}));
  CHECK(workload_cache_key("trace-file", dir + "/missing.json", {dir + "/missing.json"}).empty());
}

TEST_CASE("the cache store writes entries that load, and clear removes them", "[workload_cache]") {
  const WorkloadCache cache(temp_dir() + "/nested/cache");
  CHECK(cache.info().entries == 0);
  const CachedImport c = every_field();
  CachedImport out;
  CHECK_FALSE(cache.load("a", out));
  cache.store("a", c);
  cache.store("b", c);
  REQUIRE(cache.load("a", out));
  require_equal_imports(c, out);
  const WorkloadCacheInfo info = cache.info();
  CHECK(info.entries == 2);
  CHECK(info.bytes > 0);
  CHECK(cache.clear() == 2);
  CHECK(cache.info().entries == 0);
  CHECK_FALSE(cache.load("a", out));
}

TEST_CASE("a cache entry file that is empty, truncated or not a file is refused on load", "[workload_cache]") {
  const WorkloadCache cache(temp_dir());
  const CachedImport c = every_field();
  cache.store("k", c);
  const std::string path = cache.entry_path("k");
  std::string good;
  {
    std::ifstream in(path, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  CachedImport out;
  for (std::size_t n : {std::size_t{0}, std::size_t{20}, good.size() - 1}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(good.data(), static_cast<std::streamsize>(n));
    CHECK_FALSE(cache.load("k", out));
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(good.data(), static_cast<std::streamsize>(good.size()));
  REQUIRE(cache.load("k", out));
  require_equal_imports(c, out);
  std::remove(path.c_str());
  ::mkdir(path.c_str(), 0755);  // a directory where the entry should be
  CHECK_FALSE(cache.load("k", out));
}

TEST_CASE("a FIFO at a cache entry's path is a miss that the next store replaces, not a hang", "[workload_cache][cache-bad-input]") {
  // open() blocked for ever on the FIFO (no writer) before fstat could refuse it: the run hung.
  const WorkloadCache cache(temp_dir());
  const CachedImport c = every_field();
  const std::string path = cache.entry_path("k");
  REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
  CachedImport out;
  CHECK_FALSE(cache.load("k", out));
  cache.store("k", c);
  REQUIRE(cache.load("k", out));
  require_equal_imports(c, out);
}

TEST_CASE("cache info and clear agree on what an entry is: a regular file named *.wlc", "[workload_cache][cache-bad-input]") {
  // A directory named x.wlc was counted as an entry by info and left by clear.
  const WorkloadCache cache(temp_dir());
  cache.store("a", every_field());
  ::mkdir((cache.dir() + "/x.wlc").c_str(), 0755);
  const WorkloadCacheInfo before = cache.info();
  CHECK(before.entries == 1);
  CHECK(before.not_entries == 1);
  CHECK(cache.clear() == 1);
  const WorkloadCacheInfo after = cache.info();
  CHECK(after.entries == 0);
  CHECK(after.not_entries == 1);
  CHECK(std::filesystem::is_directory(cache.dir() + "/x.wlc"));
}

TEST_CASE("a cache directory that is a file or under a file is reported unusable, naming why", "[workload_cache][cache-bad-input]") {
  // DVFS_SIM_CACHE_DIR naming a file: cache info said "enabled: yes" and every run stored nothing, silently.
  const std::string dir = temp_dir();
  std::ofstream(dir + "/file") << "x";
  CHECK(WorkloadCache(dir + "/file").unusable() == "not a directory");
  CHECK(WorkloadCache(dir + "/file").info().unusable == "not a directory");
  CHECK(WorkloadCache(dir + "/file/sub/deeper").unusable() == "cannot be created: " + dir + "/file is not a directory");
  CHECK(WorkloadCache(dir).unusable().empty());
  CHECK(WorkloadCache(dir + "/not/yet").unusable().empty());
  CHECK_FALSE(std::filesystem::exists(dir + "/not"));  // the probe leaves nothing behind
  CHECK(WorkloadCache(dir).info().entries == 0);        // nor a probe file counted as an entry
}

TEST_CASE("the cache's directory comes from DVFS_SIM_CACHE_DIR, XDG_CACHE_HOME or HOME", "[workload_cache]") {
  const char* saved = std::getenv("DVFS_SIM_CACHE_DIR");
  const std::string keep = saved ? saved : "";
  const char* saved_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string keep_xdg = saved_xdg ? saved_xdg : "";
  ::setenv("DVFS_SIM_CACHE_DIR", "/tmp/x-cache", 1);
  CHECK(WorkloadCache::user().dir() == "/tmp/x-cache");
  ::unsetenv("DVFS_SIM_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  CHECK(WorkloadCache::user().dir() == "/tmp/xdg/dvfs-sim");
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(WorkloadCache::user().dir() == std::string(std::getenv("HOME")) + "/.cache/dvfs-sim");
  if (saved) ::setenv("DVFS_SIM_CACHE_DIR", keep.c_str(), 1);
  if (saved_xdg) ::setenv("XDG_CACHE_HOME", keep_xdg.c_str(), 1);
}
