#include "sim/core/content_hash.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace dvfs {

namespace {

constexpr std::uint64_t P1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t P2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t P3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t P4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t P5 = 0x27D4EB2F165667C5ULL;

inline std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline std::uint64_t read64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts (x86-64, aarch64): the reference byte order
}
inline std::uint32_t read32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint64_t round64(std::uint64_t acc, std::uint64_t input) { return rotl(acc + input * P2, 31) * P1; }
inline std::uint64_t merge64(std::uint64_t acc, std::uint64_t v) { return (acc ^ round64(0, v)) * P1 + P4; }

// The four lanes over whole 32-byte stripes of [p, end); returns where the stripes stop.
const unsigned char* stripes(std::uint64_t (&v)[4], const unsigned char* p, const unsigned char* end) {
  for (; end - p >= 32; p += 32) {
    v[0] = round64(v[0], read64(p));
    v[1] = round64(v[1], read64(p + 8));
    v[2] = round64(v[2], read64(p + 16));
    v[3] = round64(v[3], read64(p + 24));
  }
  return p;
}

void init_lanes(std::uint64_t (&v)[4], std::uint64_t seed) {
  v[0] = seed + P1 + P2, v[1] = seed + P2, v[2] = seed, v[3] = seed - P1;
}

// The digest from the lanes (when total >= 32), the total length and the tail [p, end) (< 32 bytes).
std::uint64_t finish(const std::uint64_t (&v)[4], std::uint64_t seed, std::uint64_t total, const unsigned char* p,
                     const unsigned char* end) {
  std::uint64_t h;
  if (total >= 32) {
    h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
    for (std::uint64_t lane : v) h = merge64(h, lane);
  } else {
    h = seed + P5;
  }
  h += total;
  for (; p + 8 <= end; p += 8) h = rotl(h ^ round64(0, read64(p)), 27) * P1 + P4;
  if (p + 4 <= end) {
    h = rotl(h ^ (static_cast<std::uint64_t>(read32(p)) * P1), 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; ++p) h = rotl(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

}  // namespace

std::uint64_t xxh64(const void* data, std::size_t size, std::uint64_t seed) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  std::uint64_t v[4];
  init_lanes(v, seed);
  return finish(v, seed, size, stripes(v, p, p + size), p + size);
}

Xxh64Stream::Xxh64Stream(std::uint64_t seed) : seed_(seed) { init_lanes(v_, seed); }

void Xxh64Stream::update(const void* data, std::size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  const unsigned char* const end = p + size;
  total_ += size;
  if (buffered_ > 0) {  // complete the stripe held back by the previous call
    const std::size_t take = std::min<std::size_t>(32 - buffered_, size);
    std::memcpy(buf_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    if (buffered_ < 32) return;
    stripes(v_, buf_, buf_ + 32);
    buffered_ = 0;
  }
  p = stripes(v_, p, end);
  std::memcpy(buf_, p, static_cast<std::size_t>(end - p));
  buffered_ = static_cast<std::size_t>(end - p);
}

std::uint64_t Xxh64Stream::digest() const { return finish(v_, seed_, total_, buf_, buf_ + buffered_); }

bool hash_file(const std::string& path, std::uint64_t& hash, std::uint64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  constexpr std::uint64_t kBlock = 4u << 20;  // part of the digest (each block seeds the next): never change it
  // Read in small pieces into one small buffer (a fresh 4 MiB buffer costs a page fault per 4 KiB it is filled
  // with: ~1 ms of a cached run's start for the default trace), each block hashed as it streams by.
  constexpr std::size_t kPiece = 64u << 10;
  const std::unique_ptr<unsigned char[]> buf(new unsigned char[kPiece]);
  hash = 0;
  size = 0;
  Xxh64Stream block(hash);
  bool ok = true;
  for (;;) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, kBlock - block.size()));
    const ssize_t n = ::read(fd, buf.get(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    block.update(buf.get(), static_cast<std::size_t>(n));
    size += static_cast<std::uint64_t>(n);
    if (block.size() == kBlock) {
      hash = block.digest();
      block = Xxh64Stream(hash);
    }
  }
  if (block.size() > 0) hash = block.digest();
  ::close(fd);
  return ok;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace dvfs
