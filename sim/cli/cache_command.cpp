// `dvfs-sim cache info|clear`: the workload cache (traces/src/workload_cache.hpp; README "Workload cache").
#include "sim/cli/command.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "traces/src/workload_cache.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>

namespace dvfs {

namespace {

bool is_path_but_not_directory(const std::string& path) { return file_exists(path) && !is_directory(path); }

int cache_main(const std::string& action) {
  const WorkloadCache cache = WorkloadCache::user();
  if (action == "info" || action.empty()) {
    const WorkloadCacheInfo i = cache.info();
    // An unusable directory (DVFS_SIM_CACHE_DIR naming a file or an unwritable path) said "enabled: yes" while every
    // run imported afresh and stored nothing.
    const std::string enabled = !workload_cache_enabled() ? "no (--no-cache or DVFS_SIM_NO_CACHE)"
                                : i.unusable.empty()      ? "yes"
                                                          : "yes, but the directory is unusable: " + i.unusable +
                                                                " (every load imports afresh; nothing is stored)";
    std::printf("workload cache: %s\n  entries: %zu\n  bytes: %llu (%.1f MiB)\n  format version: %u\n  enabled: %s\n",
                i.dir.c_str(), i.entries, static_cast<unsigned long long>(i.bytes),
                static_cast<double>(i.bytes) / (1024.0 * 1024.0), kWorkloadCacheVersion, enabled.c_str());
    if (i.not_entries)
      std::printf("  not entries: %zu named *.wlc but not regular files (neither counted nor cleared)\n", i.not_entries);
    if (!i.unusable.empty())
      std::fprintf(stderr, "dvfs-sim: warning: workload cache %s: %s (set DVFS_SIM_CACHE_DIR to a writable directory)\n",
                   i.dir.c_str(), i.unusable.c_str());
    return 0;
  }
  if (action == "clear") {
    if (is_path_but_not_directory(cache.dir()))
      throw InputError(cache.dir(), "", "not a directory: expected the workload cache directory (DVFS_SIM_CACHE_DIR, XDG_CACHE_HOME or HOME)");
    const std::size_t n = cache.clear();
    std::printf("workload cache: removed %zu entr%s from %s\n", n, n == 1 ? "y" : "ies", cache.dir().c_str());
    return 0;
  }
  throw UsageError("cache: expected info or clear, got \"" + action + "\"");
}

}  // namespace

Command cache_command() {
  Command c;
  c.name = "cache";
  c.summary = "the workload cache of imported traces: `cache info` (where, entries, bytes), `cache clear`";
  c.description =
      "Imported traces are kept in a binary cache keyed by the trace files' content hashes and the importer's\n"
      "version ($DVFS_SIM_CACHE_DIR, else $XDG_CACHE_HOME/dvfs-sim, else ~/.cache/dvfs-sim). `cache info` prints the\n"
      "directory, its entries and bytes; `cache clear` removes them. `--no-cache` (any command) or\n"
      "DVFS_SIM_NO_CACHE=1 imports without reading or writing it.";
  c.unknown_option = "unknown option for cache: ";
  c.extra_argument = "cache takes one action: info or clear";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto action = std::make_shared<std::string>();
    app.add_option("action", *action, "info (default) or clear");
    return [action] { return cache_main(*action); };
  };
  return c;
}

}  // namespace dvfs
