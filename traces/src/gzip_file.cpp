#include "traces/src/gzip_file.hpp"

#include "sim/core/errors.hpp"

#include <fstream>
#include <sstream>
#include <zlib.h>

namespace dvfs {

std::string read_maybe_gzip(const std::string& path) {
  require_regular_file(path, "a JSON file, or one compressed with gzip");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string raw = buf.str();
  if (raw.size() < 2 || static_cast<unsigned char>(raw[0]) != 0x1f || static_cast<unsigned char>(raw[1]) != 0x8b)
    return raw;

  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(path, "", "cannot initialise zlib");
  zs.next_in = reinterpret_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    try {
      out.append(chunk, sizeof(chunk) - zs.avail_out);
    } catch (const std::bad_alloc&) {  // a gzip bomb (1 MB of gzip, a GB of spaces) was "internal error: std::bad_alloc"
      inflateEnd(&zs);
      throw InputError(path, "", "out of memory inflating the gzip data after " + std::to_string(out.size() >> 20) +
                                     " MiB (from " + std::to_string(raw.size() >> 10) + " KiB compressed): expected a trace that fits in memory");
    }
    // Concatenated gzip members are legal: continue with the next one.
    if (rc == Z_STREAM_END && zs.avail_in > 0) rc = inflateReset(&zs);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    const char* why = rc == Z_BUF_ERROR ? "truncated gzip stream (the file ends before the compressed data does)"
                                        : "corrupt gzip data";
    throw InputError(path, "", std::string(why) + "; expected a complete .json.gz file");
  }
  return out;
}

Json read_json_maybe_gzip(const std::string& path) { return parse_json_text(read_maybe_gzip(path), path); }

}  // namespace dvfs
