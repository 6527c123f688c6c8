// The staging copy's CPU price (split.json day3): per GB, per file, a folder-size growth and the scan of recently
// freed inodes on the target disk.
#include "sim/lifecycle/lifecycle_spec.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;

namespace {

// File by file: file j scans the free inodes left in its group, the freed inodes filling groups one after another.
double scanned_one_by_one(long n, long k, long per_group) {
  double s = 0;
  for (long j = k; j < k + n; ++j) s += static_cast<double>(per_group - j % per_group);
  return s;
}

}  // namespace

TEST_CASE("the inodes scanned on recently freed inodes add up file by file, group by group", "[lifecycle]") {
  for (long per_group : {1L, 7L, 8192L})
    for (long k : {0L, 3L, 8191L, 20000L})
      for (long n : {0L, 1L, 5L, 8192L, 44000L})
        CHECK(recent_free_inodes_scanned(static_cast<double>(n), static_cast<double>(k), static_cast<double>(per_group)) ==
              Approx(scanned_one_by_one(n, k, per_group)));
  // one whole group from its start: G + (G - 1) + ... + 1
  CHECK(recent_free_inodes_scanned(8192, 0, 8192) == Approx(8192.0 * 8193 / 2));
}

TEST_CASE("a copy onto recently freed inodes in tiny block groups is priced at once, not group by group", "[lifecycle]") {
  // One inode per group: 1e10 files would have taken 1e10 steps; each scans only its own group's one inode.
  CHECK(recent_free_inodes_scanned(1e10, 0, 1) == Approx(1e10));
}

TEST_CASE("the staging copy's CPU is today's linear price unless the folder-size or recently-freed terms are given", "[lifecycle]") {
  LifecyclePhase ph;
  ph.bytes = 2e9;
  ph.files = 1000;
  ph.core_s_per_gb = 0.5;
  ph.core_s_per_file = 1e-4;
  StorageSpec dst;
  CHECK(staging_copy_core_s(ph, dst) == Approx(0.5 * 2 + 1e-4 * 1000));
  ph.recently_freed_inodes = 5000;  // freed inodes but no scan price on the disk: no change
  CHECK(staging_copy_core_s(ph, dst) == Approx(1.1));
  dst.recent_free_scan_core_s = 1e-7;
  dst.inodes_per_group = 400;
  ph.reused_before = 4500;  // 500 of the pool left: 500 of the 1000 files scan, from inode 4500 (a group's 100th)
  CHECK(staging_copy_core_s(ph, dst) == Approx(1.1 + 1e-7 * scanned_one_by_one(500, 4500, 400)));
  ph.reused_before = 5000;  // the pool taken before the copy: nothing scanned
  CHECK(staging_copy_core_s(ph, dst) == Approx(1.1));
  ph.core_s_per_file_growth = 1e-8;  // each file pays 10 ns per file already in the folder
  CHECK(staging_copy_core_s(ph, dst) == Approx(1.1 + 1e-8 * 1000 * 999 / 2));
}
