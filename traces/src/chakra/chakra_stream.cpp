#include "traces/src/chakra/chakra_stream.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/gzip_file.hpp"

#include <google/protobuf/stubs/logging.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>

namespace dvfs {

namespace {

// The varint at `pos`: false when the bytes end inside it; `ok` false when it is longer than 5 bytes or over 32 bits.
bool read_varint32(const std::string& b, std::size_t& pos, std::uint64_t& value, bool& ok) {
  value = 0;
  ok = true;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= b.size()) return false;
    const auto byte = static_cast<unsigned char>(b[pos++]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      ok = value <= 0x7fffffffULL;
      return true;
    }
  }
  ok = false;
  return true;
}

std::string message_label(std::size_t index) {
  return index == 0 ? "message 0 (GlobalMetadata)" : "message " + std::to_string(index) + " (Node)";
}

}  // namespace

ChakraFile parse_chakra_bytes(const std::string& bytes, const std::string& path) {
  // A malformed message is our one-line error; protobuf's own log line (e.g. "String field ... contains invalid UTF-8
  // data") on stderr beside it would be a second.
  const google::protobuf::LogSilencer quiet;
  ChakraFile f;
  std::size_t pos = 0, index = 0;
  while (pos < bytes.size()) {
    const std::size_t at = pos;
    std::uint64_t size = 0;
    bool ok = true;
    if (!read_varint32(bytes, pos, size, ok))
      throw InputError(path, message_label(index) + " size", "the file ends inside the size prefix at byte " + std::to_string(at) +
                                                                 ": expected a complete varint (truncated file?)");
    if (!ok)
      throw InputError(path, message_label(index) + " size", "the size prefix at byte " + std::to_string(at) +
                                                                 " is not a 32-bit varint: expected a Chakra .et file");
    if (size > bytes.size() - pos)
      throw InputError(path, message_label(index), "declares " + std::to_string(size) + " bytes at byte " + std::to_string(at) +
                                                       ", the file has " + std::to_string(bytes.size() - pos) +
                                                       " left: expected the whole message (truncated file?)");
    const char* data = bytes.data() + pos;
    const int n = static_cast<int>(size);
    bool parsed = false;
    if (index == 0) {
      parsed = f.metadata.ParseFromArray(data, n);
    } else {
      f.nodes.emplace_back();
      parsed = f.nodes.back().ParseFromArray(data, n);
    }
    if (!parsed)
      throw InputError(path, message_label(index), "the " + std::to_string(size) + " bytes at byte " + std::to_string(pos) +
                                                       " do not decode as a Chakra " + (index == 0 ? "GlobalMetadata" : "Node") +
                                                       " message (et_def.proto)");
    pos += size;
    ++index;
  }
  if (index == 0) throw InputError(path, "GlobalMetadata", "the file is empty: expected a GlobalMetadata message, then Nodes");
  return f;
}

ChakraFile read_chakra_file(const std::string& path) { return parse_chakra_bytes(read_maybe_gzip(path), path); }

void append_delimited(std::string& out, const google::protobuf::MessageLite& msg) {
  const std::size_t size = msg.ByteSizeLong();  // caches the sizes the serializer below uses
  for (std::size_t v = size;;) {
    unsigned char byte = static_cast<unsigned char>(v & 0x7f);
    v >>= 7;
    if (v) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
    if (!v) break;
  }
  const std::size_t at = out.size();
  out.resize(at + size);
  msg.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t*>(&out[at]));
}

void write_chakra_bytes(const std::string& path, const std::string& bytes) {
  if (ends_with(path, ".gz")) {
    gzFile gz = gzopen(path.c_str(), "wb1");
    if (!gz) throw InputError(path, "", "cannot write the Chakra trace file");
    bool ok = true;
    for (std::size_t off = 0; off < bytes.size() && ok; off += 1u << 30) {
      const std::size_t n = std::min<std::size_t>(bytes.size() - off, 1u << 30);
      ok = gzwrite(gz, bytes.data() + off, static_cast<unsigned>(n)) == static_cast<int>(n);
    }
    if (gzclose(gz) != Z_OK || !ok) throw InputError(path, "", "writing the Chakra trace file failed");
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw InputError(path, "", "cannot write the Chakra trace file");
}

}  // namespace dvfs
