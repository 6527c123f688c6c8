#pragma once
// A fast 64-bit content hash (XXH64, Yann Collet's xxHash algorithm, written out here: Debian 12's libxxhash-dev
// is not a dependency). Used to key and check the workload cache (traces/src/workload_cache.hpp); not cryptographic.
#include <cstddef>
#include <cstdint>
#include <string>

namespace dvfs {

// XXH64 of bytes [data, data + size) with `seed`.
std::uint64_t xxh64(const void* data, std::size_t size, std::uint64_t seed = 0);
inline std::uint64_t xxh64(const std::string& s, std::uint64_t seed = 0) { return xxh64(s.data(), s.size(), seed); }

// XXH64 fed in pieces: digest() after update(a), update(b) equals xxh64(a + b, seed).
class Xxh64Stream {
 public:
  explicit Xxh64Stream(std::uint64_t seed = 0);
  void update(const void* data, std::size_t size);
  std::uint64_t digest() const;
  std::uint64_t size() const { return total_; }  // bytes fed so far

 private:
  std::uint64_t seed_, v_[4];
  std::uint64_t total_ = 0;
  unsigned char buf_[32] = {};
  std::size_t buffered_ = 0;
};

// A file's content hash: XXH64 chained over its 4 MiB blocks (each block's seed is the previous block's hash),
// so a large file is hashed without holding it in memory. False when the file cannot be read.
bool hash_file(const std::string& path, std::uint64_t& hash, std::uint64_t& size);

// 16 lower-case hex digits.
std::string hex64(std::uint64_t v);

}  // namespace dvfs
