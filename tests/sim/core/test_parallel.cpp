#include "sim/core/parallel.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <string>

using namespace dvfs;

TEST_CASE("parallel_for_each_index runs every index once, on any number of threads", "[core][parallel]") {
  for (std::size_t threads : {1, 2, 8, 100}) {
    std::vector<std::atomic<int>> runs(37);
    parallel_for_each_index(runs.size(), threads, [&](std::size_t i) { ++runs[i]; });
    for (const auto& r : runs) CHECK(r == 1);
  }
  parallel_for_each_index(0, 4, [](std::size_t) { FAIL("no index to run"); });
}

TEST_CASE("parallel_for_each_index rethrows the lowest failing index's error after every index ran", "[core][parallel]") {
  std::atomic<int> ran{0};
  const auto fail_at = [&](std::size_t i) {
    ++ran;
    if (i == 5 || i == 11) throw std::runtime_error("index " + std::to_string(i));
  };
  CHECK_THROWS_WITH(parallel_for_each_index(20, 4, fail_at), "index 5");
  CHECK(ran == 20);
}
