// load_trace through the workload cache (traces/src/workload_cache.hpp): a second load reads the entry, a
// changed trace gets a new one, a damaged entry is rebuilt, and a disabled cache is neither read nor written.
#include "support/scratch_dir.hpp"
#include <filesystem>
#include "sim/core/errors.hpp"
#include "sim/simulation/simulation.hpp"
#include "traces/src/workload_cache.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

using namespace dvfs;

namespace {

// A fresh directory per call, inside one scratch directory that goes when the test process ends.
std::string temp_dir() {
  static const dvfs::testing::ScratchDir root("dvfs-trace-cache");
  static int made = 0;
  const std::string dir = root / std::to_string(made++);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// Points the user's cache at a fresh directory for one test, and back afterwards.
struct ScopedCacheDir {
  std::string saved;
  bool had = false;
  WorkloadCache cache;
  ScopedCacheDir() : cache(temp_dir() + "/cache") {
    if (const char* s = std::getenv("DVFS_SIM_CACHE_DIR")) had = true, saved = s;
    ::setenv("DVFS_SIM_CACHE_DIR", cache.dir().c_str(), 1);
    ::unsetenv("DVFS_SIM_NO_CACHE");
    set_workload_cache_enabled(true);
  }
  ~ScopedCacheDir() {
    if (had) ::setenv("DVFS_SIM_CACHE_DIR", saved.c_str(), 1);
    else ::unsetenv("DVFS_SIM_CACHE_DIR");
    ::unsetenv("DVFS_SIM_NO_CACHE");
    set_workload_cache_enabled(true);
  }
};

// A copy of a fixture trace in its own directory (so a test may change it).
std::string fixture_copy(const std::string& name) {
  const std::string path = temp_dir() + "/" + name;
  write_file(path, read_file(std::string(DVFS_TEST_FIXTURES) + "/" + name));
  return path;
}

std::string entry_of(const std::string& trace) {
  std::ifstream probe(trace);
  REQUIRE(probe.good());
  return WorkloadCache::user().entry_path(workload_cache_key("trace-file", trace, {trace, Classifier::default_path()}));
}

}  // namespace

TEST_CASE("a trace loaded twice is read from the cache the second time", "[workload_cache]") {
  ScopedCacheDir scoped;
  const std::string trace = fixture_copy("kineto_current.json");
  const LoadedTrace first = load_trace(trace);
  REQUIRE(scoped.cache.info().entries == 1);
  // Doctor the entry: a second load must return what the entry says, not a fresh import.
  const std::string key = workload_cache_key("trace-file", trace, {trace, Classifier::default_path()});
  CachedImport doctored{first.workload, first.report};
  doctored.workload.names.front() = "from the cache";
  doctored.report.notes = {"cached note"};
  scoped.cache.store(key, doctored);
  const LoadedTrace second = load_trace(trace);
  CHECK(second.workload.names.front() == "from the cache");
  CHECK(second.report.notes == std::vector<std::string>{"cached note"});
  CHECK(second.workload.kernel_count() == first.workload.kernel_count());
}

TEST_CASE("a cached load equals an uncached one", "[workload_cache]") {
  ScopedCacheDir scoped;
  const std::string trace = fixture_copy("kineto_current.json");
  set_workload_cache_enabled(false);
  const LoadedTrace plain = load_trace(trace);
  set_workload_cache_enabled(true);
  load_trace(trace);
  const LoadedTrace cached = load_trace(trace);
  REQUIRE(cached.workload.kernel_count() == plain.workload.kernel_count());
  // The encoding covers every field (tests/traces/test_workload_cache.cpp); equal entries mean equal imports.
  CHECK(encode_cached_import("k", {cached.workload, cached.report}) ==
        encode_cached_import("k", {plain.workload, plain.report}));
}

TEST_CASE("a changed trace gets a new cache entry", "[workload_cache]") {
  ScopedCacheDir scoped;
  const std::string trace = fixture_copy("kineto_current.json");
  const LoadedTrace before = load_trace(trace);
  // The same trace with one kernel name changed: a different content hash, so a new entry and a fresh import.
  std::string text = read_file(trace);
  const std::size_t at = text.find("\"cat\": \"kernel\"");
  REQUIRE(at != std::string::npos);
  const std::size_t name = text.find("\"name\": \"", at);
  REQUIRE(name != std::string::npos);
  text.insert(name + 9, "renamed_");
  write_file(trace, text);
  const LoadedTrace after = load_trace(trace);
  CHECK(scoped.cache.info().entries == 2);
  CHECK(after.workload.names != before.workload.names);
}

TEST_CASE("a damaged or stale cache entry is rebuilt, never trusted", "[workload_cache]") {
  ScopedCacheDir scoped;
  const std::string trace = fixture_copy("kineto_current.json");
  set_workload_cache_enabled(false);
  const LoadedTrace plain = load_trace(trace);
  set_workload_cache_enabled(true);
  load_trace(trace);
  const std::string entry = entry_of(trace);
  const std::string good = read_file(entry);
  REQUIRE(good.size() > 64);
  std::string bad;
  SECTION("truncated") { bad = good.substr(0, good.size() / 2); }
  SECTION("empty") { bad = ""; }
  SECTION("wrong magic") { bad = "NOTACACHE" + good.substr(9); }
  SECTION("another version") {
    bad = good;
    bad[8] = static_cast<char>(bad[8] + 1);
  }
  SECTION("checksum mismatch") {
    bad = good;
    bad[good.size() - 5] ^= 0x11;
  }
  SECTION("another key's entry under this name") {
    bad = encode_cached_import("another key", {plain.workload, plain.report});
  }
  write_file(entry, bad);
  const LoadedTrace rebuilt = load_trace(trace);
  CHECK(encode_cached_import("k", {rebuilt.workload, rebuilt.report}) ==
        encode_cached_import("k", {plain.workload, plain.report}));
  CHECK(read_file(entry) == good);  // rewritten whole
}

TEST_CASE("a disabled cache is neither read nor written", "[workload_cache]") {
  ScopedCacheDir scoped;
  const std::string trace = fixture_copy("kineto_current.json");
  SECTION("set_workload_cache_enabled(false), as --no-cache does") { set_workload_cache_enabled(false); }
  SECTION("DVFS_SIM_NO_CACHE=1") { ::setenv("DVFS_SIM_NO_CACHE", "1", 1); }
  CHECK_FALSE(workload_cache_enabled());
  load_trace(trace);
  CHECK(scoped.cache.info().entries == 0);
}

TEST_CASE("a missing trace fails as it does without the cache", "[workload_cache]") {
  ScopedCacheDir scoped;
  const std::string missing = temp_dir() + "/missing.json";
  CHECK_THROWS_AS(load_trace(missing), InputError);
  CHECK(scoped.cache.info().entries == 0);
}

TEST_CASE("a multi-rank job's files load on several threads, each as it loads alone", "[workload_cache]") {
  ScopedCacheDir scoped;
  set_workload_cache_enabled(false);
  const std::string dir = std::string(DVFS_TEST_FIXTURES) + "/pytorch/";
  const std::vector<std::string> paths = {dir + "ddp_rank0_wait.json", dir + "ddp_rank1_wait.json",
                                          dir + "ddp_rank0_wait.json", std::string(DVFS_TEST_FIXTURES) + "/kineto_current.json"};
  const std::vector<LoadedTrace> all = load_each_trace(paths);
  REQUIRE(all.size() == paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const LoadedTrace one = load_trace(paths[i]);
    CHECK(encode_cached_import("k", {all[i].workload, all[i].report}) == encode_cached_import("k", {one.workload, one.report}));
  }
}

TEST_CASE("a multi-rank load that fails names the first file that fails", "[workload_cache]") {
  ScopedCacheDir scoped;
  const std::string dir = temp_dir();
  const std::vector<std::string> paths = {std::string(DVFS_TEST_FIXTURES) + "/kineto_current.json", dir + "/first_missing.json",
                                          dir + "/second_missing.json"};
  for (int attempt = 0; attempt < 5; ++attempt) {
    try {
      load_each_trace(paths);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("first_missing.json") != std::string::npos);
    }
  }
}
