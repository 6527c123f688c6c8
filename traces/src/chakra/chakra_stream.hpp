#pragma once
// The framing of a Chakra execution-trace file (docs/chakra.md): a sequence of protobuf messages, each preceded
// by its size in bytes as a base-128 varint (at most 32 bits, as Chakra's protoio / protolib write it), the first
// a GlobalMetadata and every later one a Node; the whole file may be gzip-compressed (Chakra's readers look
// for gzip's magic bytes, as read_maybe_gzip does).
#include "traces/src/chakra/et_def.pb.h"

#include <cstddef>
#include <string>
#include <vector>

namespace dvfs {

struct ChakraFile {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
};

// Reads and decodes a whole file. InputError (file, field, what was expected) on: no metadata message, a size
// prefix or message cut short by the end of the file, a size over 2^31, bytes that do not decode as the message.
ChakraFile read_chakra_file(const std::string& path);
// The same from bytes already in memory (tests, fuzzing); `path` names them in errors.
ChakraFile parse_chakra_bytes(const std::string& bytes, const std::string& path);

// Appends one length-delimited message to `out`.
void append_delimited(std::string& out, const google::protobuf::MessageLite& msg);

// Writes `bytes` to `path` (gzip-compressed when the name ends in .gz). InputError when it cannot be written.
void write_chakra_bytes(const std::string& path, const std::string& bytes);

}  // namespace dvfs
