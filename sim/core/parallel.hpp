#pragma once
// Runs fn(i) for every i in [0, n) on up to `threads` threads (the calling thread among them), each taking the next
// index; once all are done, rethrows the error of the lowest index that failed, as a one-by-one loop would report it.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace dvfs {

inline std::size_t hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

template <class Fn>
void parallel_for_each_index(std::size_t n, std::size_t threads, Fn&& fn) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  threads = std::max<std::size_t>(1, std::min(threads, n));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace dvfs
