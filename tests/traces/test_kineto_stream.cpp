// The Kineto importer's streaming reader (traces/src/kineto_stream.*) against its checked reader: the same
// workload byte for byte wherever the streaming reader reads a trace, the checked reader's error message wherever
// the input is bad, and the checked reader's limits (depth, number range) kept.
#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/kineto_stream.hpp"
#include "traces/src/workload_cache.hpp"

#include <catch2/catch.hpp>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace dvfs;

namespace {

std::string fixture(const std::string& name) { return std::string(DVFS_TEST_FIXTURES) + "/" + name; }

const Classifier& classifier() {
  static Classifier c = Classifier::load_default();
  return c;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What an import gives: "ok:" and the workload and report as the cache encodes them (every field), "error:" and
// the one-line message, or "declined" (the streaming reader only).
std::string outcome(const std::string& text, KinetoReader reader) {
  try {
    CachedImport c;
    c.workload = import_kineto_text(text, "t.json", classifier(), &c.report, reader);
    return "ok:" + encode_cached_import("key", c);
  } catch (const InputError& e) {
    return std::string("error:") + e.what();
  } catch (const StreamingDeclined&) {
    return "declined";
  }
}

std::string file_outcome(const std::string& path, KinetoReader reader) {
  try {
    CachedImport c;
    c.workload = import_kineto(path, classifier(), &c.report, reader);
    return "ok:" + encode_cached_import("key", c);
  } catch (const InputError& e) {
    return std::string("error:") + e.what();
  } catch (const StreamingDeclined&) {
    return "declined";
  }
}

// Wherever the streaming reader reads the text, the checked reader reads the same; the importer as users call it
// gives the checked reader's outcome. Returns whether the streaming reader read it.
bool same_as_checked(const std::string& text) {
  const std::string checked = outcome(text, KinetoReader::checked);
  const std::string streaming = outcome(text, KinetoReader::streaming);
  INFO("input: " << text.substr(0, 300));
  if (streaming != "declined") {
    CHECK(streaming.substr(0, 3) == "ok:");
    CHECK(streaming == checked);
  }
  CHECK(outcome(text, KinetoReader::automatic) == checked);
  return streaming != "declined";
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// The first cpu_op of the ddp fixture that launched kernels, renamed and given `args` (merged into its own); its
// External id, -1 when none.
long rewrite_first_launching_operator(Json& events, const std::string& name, const Json& args) {
  std::set<long> with_kernels;
  for (const Json& e : events)
    if (e.value("cat", "") == "kernel" && e["args"].contains("External id")) with_kernels.insert(e["args"]["External id"].get<long>());
  for (Json& e : events)
    if (e.value("cat", "") == "cpu_op" && e["args"].contains("External id") && with_kernels.count(e["args"]["External id"].get<long>())) {
      e["name"] = name;
      for (const auto& [k, v] : args.items()) e["args"][k] = v;
      return e["args"]["External id"].get<long>();
    }
  return -1;
}

}  // namespace

TEST_CASE("streaming reader: the checked reader's workload, byte for byte, on every fixture", "[traces][stream]") {
  for (const char* name : {"kineto_current.json", "kineto_current.json.gz", "kineto_2021.json", "overlapping_streams.json",
                           "pytorch/ddp_rank0_wait.json", "pytorch/ddp_rank1_wait.json", "pytorch/kineto_2021_operator_steps.json",
                           "pytorch/profiler_steps_launched_late.json", "pytorch/profiler_steps_overlap.json", "pytorch/rocm_mi300x.json"}) {
    INFO(name);
    CachedImport a, b;
    a.workload = import_kineto(fixture(name), classifier(), &a.report, KinetoReader::checked);
    b.workload = import_kineto(fixture(name), classifier(), &b.report, KinetoReader::streaming);
    CHECK(encode_cached_import("k", a) == encode_cached_import("k", b));
  }
}

TEST_CASE("streaming reader: the default scenario's trace imports as the checked reader imports it", "[traces][stream]") {
  const std::string trace = data_dir() + "/traces/recordings/h200-gpt3xl/trace.json.gz";
  CachedImport a, b;
  a.workload = import_kineto(trace, classifier(), &a.report, KinetoReader::checked);
  b.workload = import_kineto(trace, classifier(), &b.report, KinetoReader::streaming);
  CHECK(encode_cached_import("k", a) == encode_cached_import("k", b));
}

// Every shipped recording (about a minute: `build/dvfs_tests "[.all-traces]"`, run for issue 18's report).
TEST_CASE("streaming reader: every shipped recording imports as the checked reader imports it", "[.all-traces]") {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(data_dir() + "/traces/recordings")) {
    const std::string p = e.path().string();
    if (e.path().filename() != "trace.json.gz" && e.path().filename() != "trace.json") continue;
    INFO(p);
    const std::string checked = file_outcome(p, KinetoReader::checked);
    const std::string streaming = file_outcome(p, KinetoReader::streaming);
    // A recording without device activity (an idle one) is an error for both: the streaming reader declines.
    CHECK(streaming == (checked.substr(0, 3) == "ok:" ? checked : std::string("declined")));
    n += checked.substr(0, 3) == "ok:";
  }
  CHECK(n > 100);  // read alike
}

TEST_CASE("streaming reader: bad or unusual JSON gets the checked reader's outcome", "[traces][stream]") {
  const std::string good = read_text(fixture("kineto_current.json"));
  const std::string ev = "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1.5, \"dur\": 2, \"args\": {ARGS}}";
  auto trace = [&](const std::string& args, const std::string& tail = "") {
    return "{\"traceEvents\": [" + with(ev, "ARGS", args) + "]" + tail + "}";
  };
  CHECK(same_as_checked(good));
  CHECK(same_as_checked(trace("")));
  CHECK(same_as_checked("[" + with(ev, "ARGS", "") + "]"));  // a bare array of events
  // The checked reader's limits, where the streaming reader skips the value.
  CHECK_FALSE(same_as_checked(trace("\"x\": 1e400")));
  CHECK_FALSE(same_as_checked(trace("", ", \"x\": -1e400")));
  CHECK_FALSE(same_as_checked(trace("\"x\": " + std::string(70, '[') + std::string(70, ']'))));
  CHECK_FALSE(same_as_checked(trace("", ", \"x\": " + std::string(70, '{') + std::string(70, '}'))));
  // Past 64 bits: a double in both readers (simdjson 3.0.1 reads it as neither; the token is read as nlohmann reads it).
  CHECK(same_as_checked(trace("\"x\": 18446744073709551616")));
  CHECK(same_as_checked(trace("\"x\": -100000000000000000000")));
  // Strings simdjson and nlohmann must both refuse.
  for (const char* bad : {"\"a\x01z\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\x\"", "\"\xff\"", "\"\xed\xa0\x80\"", "tru", "nul", "01", "1.", "-"})
    CHECK_FALSE(same_as_checked(trace(std::string("\"x\": ") + bad)));
  // Structure around and between the events.
  for (const std::string& t : {trace("", ", ") + "", trace("") + " x", trace("") + "}", "\xef\xbb\xbf" + trace(""),
                               with(trace(""), "]", ",]"), with(trace(""), "[", "[,"), with(trace(""), "}]", "} {}]"),
                               std::string("{\"traceEvents\": []}"), std::string("{}"), std::string("[]"), std::string(""),
                               std::string("{\"traceEvents\": {}}"), "{\"trace\\u0045vents\": [" + with(ev, "ARGS", "") + "]}",
                               trace("", ", \"traceEvents\": []"), std::string("5"), trace("\"grid\": [1, 2]]")})
    same_as_checked(t);
  // Values the streaming reader hands to the checked reader's code, or reads itself.
  for (const char* args : {"\"stream\": \"stream 7\"", "\"stream\": 1e25", "\"stream\": 3.7", "\"stream\": -0", "\"device\": null",
                                  "\"grid\": [1.5, 2, 3]", "\"grid\": [4294967296]", "\"grid\": [\"a\", 2.0, 3, 4]", "\"correlation\": 18446744073709551615",
                                  "\"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": 10, \"Group size\": 2",
                                  "\"Collective name\": \"frobnicate\"", "\"sm clock (MHz)\": 1980", "\"work\": 5", "\"blocks per SM\": \"x\"",
                                  "\"stream\": 1, \"stream\": 2", "\"bytes\": -1", "\"shared memory\": 4294967296"})
    same_as_checked(trace(args));
  for (const std::string& t : {with(trace(""), "\"ts\": 1.5", "\"ts\": 1e18"), with(trace(""), "\"dur\": 2", "\"dur\": -2"),
                               with(trace(""), "\"dur\": 2", "\"dur\": 1e12"), with(trace(""), "\"ph\": \"X\"", "\"ph\": 5"),
                               with(trace(""), "\"ph\": \"X\"", "\"ph\": \"B\""), with(trace(""), "\"name\": \"k\"", "\"name\": 3"),
                               with(trace(""), "\"cat\": \"kernel\"", "\"cat\": \"Kernel\""), with(trace(""), "\"ts\": 1.5", "\"ts\": 1.5, \"ts\": 9"),
                               with(trace(""), "\"args\": {}", "\"args\": []"), with(trace(""), "\"tid\": 7", "\"tid\": \"stream 7\"")})
    same_as_checked(t);
}

TEST_CASE("streaming reader: every truncation and many one-byte edits of a trace get the checked reader's outcome", "[traces][stream]") {
  const std::string good = read_text(fixture("pytorch/ddp_rank0_wait.json"));
  std::size_t read = 0, variants = 0;
  for (std::size_t at = 0; at < good.size(); at += 7) {
    read += same_as_checked(good.substr(0, at));
    ++variants;
  }
  for (std::size_t at = 0; at < good.size(); at += 11)
    for (char c : {'"', '\\', '{', '}', '[', ']', ',', ':', '1', 'e', '-', ' ', '\x01'}) {
      std::string t = good;
      t[at] = c;
      read += same_as_checked(t);
      ++variants;
    }
  INFO(read << " of " << variants << " read by the streaming reader");
  CHECK(read > variants / 20);  // the edits inside names and numbers leave valid traces
}

TEST_CASE("split_trace_events: events and skeleton whatever the read and batch sizes", "[traces][stream]") {
  const std::string text = read_text(fixture("pytorch/ddp_rank0_wait.json"));
  const Json doc = parse_json_text(text, "t.json");
  Json rest = doc;
  rest["traceEvents"] = Json::array();
  for (std::size_t read_bytes : {1, 3, 17, 4096})
    for (std::size_t batch : {1, 200, 1 << 20}) {
      INFO("read " << read_bytes << " batch " << batch);
      ByteSource src = ByteSource::of_text(text);
      Json events = Json::array();
      std::size_t next = 0;
      const std::string skeleton = split_trace_events(
          src,
          [&](std::string_view t, std::size_t first, std::size_t count) {
            CHECK(first == next);
            const Json part = parse_json_text("[" + std::string(t) + "]", "batch");
            CHECK(part.size() == count);
            for (const Json& e : part) events.push_back(e);
            next += count;
          },
          batch, read_bytes);
      CHECK(events == doc["traceEvents"]);
      CHECK(parse_json_text(skeleton, "skeleton") == rest);
    }
}

TEST_CASE("ByteSource: gzip members one after another, truncated and corrupt gzip", "[traces][stream]") {
  const std::string plain = read_text(fixture("kineto_current.json"));
  const std::string gz = read_text(fixture("kineto_current.json.gz"));
  const std::string dir = dvfs::testing::scratch_path("gzip-members");
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  auto all = [](ByteSource s) {
    std::string out;
    while (s.read(out, 5) > 0) {
    }
    return out;
  };
  CHECK(all(ByteSource::open(fixture("kineto_current.json.gz"))) == plain);
  CHECK(all(ByteSource::open(fixture("kineto_current.json"))) == plain);
  CHECK(all(ByteSource::open(write("dvfs_two_members.json.gz", gz + gz))) == plain + plain);
  CHECK_THROWS(all(ByteSource::open(write("dvfs_truncated.json.gz", gz.substr(0, gz.size() / 2)))));
  std::string corrupt = gz;
  corrupt[corrupt.size() / 2] ^= 0x55;
  CHECK_THROWS(all(ByteSource::open(write("dvfs_corrupt.json.gz", corrupt))));
  CHECK_THROWS(ByteSource::open(dir + "/dvfs_no_such_file.json"));
  // Read ahead on a thread of its own: the same bytes, the same errors, and a source dropped half-read stops it.
  for (std::size_t chunk : {1, 7, 4096})
    for (std::size_t depth : {1, 3}) {
      INFO("chunk " << chunk << " depth " << depth);
      CHECK(all(ByteSource::read_ahead(ByteSource::open(fixture("kineto_current.json.gz")), chunk, depth)) == plain);
      CHECK(all(ByteSource::read_ahead(ByteSource::open(dir + "/dvfs_two_members.json.gz"), chunk, depth)) == plain + plain);
      CHECK_THROWS(all(ByteSource::read_ahead(ByteSource::open(dir + "/dvfs_truncated.json.gz"), chunk, depth)));
      CHECK_THROWS(all(ByteSource::read_ahead(ByteSource::open(dir + "/dvfs_corrupt.json.gz"), chunk, depth)));
      ByteSource half = ByteSource::read_ahead(ByteSource::open(fixture("kineto_current.json.gz")), chunk, depth);
      std::string some;
      CHECK(half.read(some, 10) > 0);
    }  // `half` ends here with its thread blocked on a full queue
  CHECK_FALSE(ByteSource::open(fixture("kineto_current.json")).in_memory());
  CHECK(ByteSource::of_text(plain).in_memory());
}

namespace {

// `text` as one gzip member written by zlib: `level` 0 stores it, and the header carries a name, comment, extra
// field and header CRC when `fields` (the optional parts ISA-L's header reader must skip).
std::string gzip_member(const std::string& text, int level = 6, bool fields = false) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  gz_header h{};
  char name[] = "trace.json", comment[] = "a comment";
  unsigned char extra[] = {'A', 'B', 2, 0, 'x', 'y'};
  if (fields) {
    h.name = reinterpret_cast<Bytef*>(name), h.comment = reinterpret_cast<Bytef*>(comment);
    h.extra = extra, h.extra_len = sizeof(extra), h.hcrc = 1;
    REQUIRE(deflateSetHeader(&zs, &h) == Z_OK);
  }
  std::string out(deflateBound(&zs, text.size()) + 1024, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(out.size() - zs.avail_out);
  deflateEnd(&zs);
  return out;
}

std::string temp_file(const std::string& name, const std::string& bytes) {
  const std::string path = dvfs::testing::scratch_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string read_all(ByteSource s, std::size_t step) {
  std::string out;
  while (s.read(out, step) > 0) {
  }
  return out;
}

}  // namespace

TEST_CASE("ByteSource: gzip inflated by ISA-L gives zlib's bytes for every member layout and header field", "[traces][stream]") {
  const std::string plain = read_text(fixture("kineto_current.json"));
  // Incompressible bytes, so that a stored member spans several of the reader's 256 KiB input blocks.
  std::string noise(700000, '\0');
  std::uint32_t x = 12345;
  for (char& c : noise) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  // A stored first member sized so that the second member's 10-byte header straddles the first input block's end.
  std::string first;
  std::size_t first_plain = 262144 - 30;
  for (; first_plain > 0; --first_plain) {
    first = gzip_member(noise.substr(0, first_plain), 0);
    if (first.size() <= 262144 - 4) break;
  }
  REQUIRE(first.size() == 262144 - 4);
  struct Layout {
    const char* what;
    std::string gz, expected;
  };
  const std::vector<Layout> layouts = {
      {"one member, header fields", gzip_member(plain, 9, true), plain},
      {"three members, one empty", gzip_member(plain, 1) + gzip_member("") + gzip_member(plain, 6, true), plain + plain},
      {"stored member across input blocks, then another", gzip_member(noise, 0) + gzip_member(plain), noise + plain},
      {"a header across an input block's end", first + gzip_member(plain, 6, true), noise.substr(0, first_plain) + plain},
  };
  for (const Layout& l : layouts)
    for (std::size_t step : {std::size_t{1}, std::size_t{4093}, std::size_t{1} << 20}) {
      INFO(l.what << ", read " << step << " at a time");
      CHECK(read_all(ByteSource::open(temp_file("dvfs_isal.json.gz", l.gz)), step) == l.expected);
    }
}

TEST_CASE("ByteSource: gzip that zlib refuses is refused, and the importer then gives the checked reader's message", "[traces][stream]") {
  const std::string text = read_text(fixture("kineto_current.json"));
  const std::string gz = gzip_member(text);
  auto flip = [&](std::size_t at, unsigned char bits) {
    std::string g = gz;
    g[at] = static_cast<char>(g[at] ^ bits);
    return g;
  };
  const std::vector<std::pair<const char*, std::string>> bad = {
      {"truncated in the data", gz.substr(0, gz.size() / 2)},
      {"truncated in the trailer", gz.substr(0, gz.size() - 3)},
      {"header only", gz.substr(0, 10)},
      {"magic only", gz.substr(0, 2)},
      {"a wrong CRC-32", flip(gz.size() - 6, 0x01)},
      {"a wrong length", flip(gz.size() - 2, 0x01)},
      {"a reserved header flag", flip(3, 0x20)},
      {"not deflate", flip(2, 0x0f)},
      {"corrupt data", flip(gz.size() / 2, 0x55)},
      {"garbage after the member", gz + "garbage"},
      {"a second member truncated", gz + gz.substr(0, 40)},
  };
  for (const auto& [what, bytes] : bad) {
    INFO(what);
    const std::string path = temp_file("dvfs_bad_trace.json.gz", bytes);
    CHECK_THROWS(read_all(ByteSource::open(path), 1 << 16));
    const std::string automatic = file_outcome(path, KinetoReader::automatic);
    CHECK(automatic == file_outcome(path, KinetoReader::checked));
    CHECK(automatic.rfind("error:" + path + ":", 0) == 0);  // an InputError naming the file
  }
  // A complete member followed by nothing more imports as the checked reader imports it.
  const std::string good = temp_file("dvfs_good_trace.json.gz", gz);
  CHECK(file_outcome(good, KinetoReader::streaming) == file_outcome(good, KinetoReader::checked));
}

namespace {

struct SeenBatch {
  std::string text;
  std::size_t first, count;
  bool operator==(const SeenBatch& o) const { return text == o.text && first == o.first && count == o.count; }
};

// The batches and skeleton (or the error) of a split, pipelined with `depth` (0: split_trace_events itself).
std::pair<std::vector<SeenBatch>, std::string> split_with(ByteSource src, std::size_t depth, std::size_t batch, std::size_t read) {
  std::vector<SeenBatch> seen;
  std::string end;
  try {
    end = "skeleton:" + split_trace_events_pipelined(
                            src,
                            [&](std::string_view framed, std::size_t first, std::size_t count) {
                              CHECK(framed.front() == '[');
                              CHECK(framed.back() == ']');
                              seen.push_back({std::string(framed.substr(1, framed.size() - 2)), first, count});
                            },
                            depth, batch, read);
  } catch (const std::exception& e) {
    end = std::string("error:") + e.what();
  }
  return {seen, end};
}

}  // namespace

TEST_CASE("split_trace_events_pipelined: the batches and skeleton of split_trace_events for every queue depth", "[traces][stream]") {
  const std::string text = read_text(fixture("pytorch/ddp_rank0_wait.json"));
  for (std::size_t batch : {1, 200, 1 << 20})
    for (std::size_t read : {3, 4096}) {
      const auto reference = split_with(ByteSource::of_text(text), 0, batch, read);
      REQUIRE(reference.second.substr(0, 9) == "skeleton:");
      for (std::size_t depth : {1, 2, 5}) {
        INFO("batch " << batch << " read " << read << " depth " << depth);
        CHECK(split_with(ByteSource::of_text(text), depth, batch, read) == reference);
      }
    }
  // From a gzip file, inflated on the reading thread.
  const auto gz = split_with(ByteSource::open(fixture("kineto_current.json.gz")), 2, 300, 1000);
  CHECK(gz == split_with(ByteSource::open(fixture("kineto_current.json")), 0, 300, 1000));
  CHECK(gz == split_with(ByteSource::read_ahead(ByteSource::open(fixture("kineto_current.json.gz")), 500, 2), 2, 300, 1000));
  CHECK(gz.first.size() > 1);
}

TEST_CASE("split_trace_events_pipelined: errors in the document's order, and a failing batch stops the reader", "[traces][stream]") {
  const std::string text = read_text(fixture("pytorch/ddp_rank0_wait.json"));
  // A split error (the document ends early) comes after every batch before it, as without the thread.
  const std::string cut = text.substr(0, text.size() * 2 / 3);
  const auto reference = split_with(ByteSource::of_text(cut), 0, 200, 64);
  REQUIRE(reference.second.substr(0, 6) == "error:");
  REQUIRE(reference.first.size() > 3);
  for (std::size_t depth : {1, 2, 5}) CHECK(split_with(ByteSource::of_text(cut), depth, 200, 64) == reference);
  // An error of on_batch is rethrown at once, not after the rest of the document (the reader stops).
  for (std::size_t depth : {1, 3}) {
    std::size_t calls = 0;
    ByteSource src = ByteSource::of_text(text);
    CHECK_THROWS_WITH(split_trace_events_pipelined(
                          src,
                          [&](std::string_view, std::size_t, std::size_t) {
                            if (++calls == 2) throw std::runtime_error("bad batch");
                          },
                          depth, 200, 64),
                      "bad batch");
    CHECK(calls == 2);
  }
}

TEST_CASE("streaming reader: batches parsed side by side merge as one pass over the events would read them", "[traces][stream]") {
  // What depends on earlier events: the rank (the first comm record that gives one, here not the first comm
  // record), collective indices, a later launch time or operator of the same id replacing the earlier one.
  Json doc = parse_json_text(read_text(fixture("pytorch/ddp_rank0_wait.json")), "ddp");
  doc.erase("distributedInfo");
  Json& events = doc["traceEvents"];
  bool first_comm = true;
  int rank = 1;
  Json launch, op;
  for (Json& e : events) {
    Json& args = e["args"];
    if (args.contains("Collective name")) {
      if (first_comm) args.erase("Rank");
      else args["Rank"] = rank++;  // 1 is the trace's rank; the later ones are never read
      first_comm = false;
    }
    if (e["cat"] == "cuda_runtime" && launch.is_null()) launch = e;
    if (e["cat"] == "cpu_op" && args.contains("Input Dims") && op.is_null()) op = e;
  }
  REQUIRE_FALSE(first_comm);
  REQUIRE_FALSE(launch.is_null());
  launch["ts"] = launch["ts"].get<double>() + 2.0;
  events.push_back(launch);
  if (!op.is_null()) {
    op["args"]["Input Dims"] = Json::array({Json::array({7, 9})});
    op["args"]["Input type"] = Json::array({"float"});
    events.push_back(op);
  }
  const std::string text = doc.dump();
  const std::string checked = outcome(text, KinetoReader::checked);
  REQUIRE(checked.substr(0, 3) == "ok:");
  for (std::size_t batch : {std::size_t{1}, std::size_t{400}})
    for (std::size_t parse : {1, 2, 3}) {
      INFO("batch " << batch << " parse threads " << parse);
      CachedImport c;
      c.workload = kineto::import_streaming(ByteSource::of_text(text), "t.json", classifier(), &c.report, {batch, 0, 0, parse});
      CHECK(encode_cached_import("key", c) == checked.substr(3));
    }
}

TEST_CASE("streaming reader: a tensor list's element shapes are read as the checked reader reads them", "[traces][stream]") {
  // An operator of the fixture made a concatenation over a sized list (aten::cat's nested Input Dims), its kernels
  // ATen's cat kernel: both readers price it the same, and differently from the list without sizes.
  Json doc = parse_json_text(read_text(fixture("pytorch/ddp_rank0_wait.json")), "ddp");
  Json& events = doc["traceEvents"];
  const long id = rewrite_first_launching_operator(
      events, "aten::cat",
      Json{{"Input Dims", Json::array({Json::array({Json::array({4, 16, 275, 64}), Json::array({4, 16, 1, 64})}), Json::array()})},
           {"Input type", Json::array({"TensorList", "Scalar"})}});
  REQUIRE(id >= 0);
  for (Json& e : events)
    if (e.value("cat", "") == "kernel" && e["args"].value("External id", -1L) == id)
      e["name"] = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>";
  const std::string sized = doc.dump();
  CHECK(same_as_checked(sized));
  for (Json& e : events)
    if (e.value("name", "") == "aten::cat") e["args"]["Input Dims"] = Json::array({Json::array(), Json::array()});
  const std::string unsized = doc.dump();
  CHECK(same_as_checked(unsized));
  CHECK(outcome(sized, KinetoReader::checked) != outcome(unsized, KinetoReader::checked));
}

TEST_CASE("streaming reader: the same workload for every batch size, queue depth and number of parse threads", "[traces][stream]") {
  for (const std::string& path : {fixture("pytorch/ddp_rank0_wait.json"), fixture("kineto_current.json.gz"),
                                  data_dir() + "/traces/recordings/h200-gpt3xl/trace.json.gz"}) {
    CachedImport reference;
    reference.workload = import_kineto(path, classifier(), &reference.report, KinetoReader::checked);
    const std::string expected = encode_cached_import("k", reference);
    for (std::size_t batch : {std::size_t{1}, std::size_t{5000}, kStreamBatchBytes})
      for (std::size_t ahead : {0, 1, 2})
        for (std::size_t depth : {0, 1, 4})
          for (std::size_t parse : {1, 2, 3}) {  // > 1: batches parsed side by side and merged in order (depth unused)
            if (batch == 1 && path.find("recordings") != std::string::npos) continue;  // one event a batch: slow, and covered above
            if (parse > 1 && depth > 0) continue;
            INFO(path << " batch " << batch << " read-ahead " << ahead << " split depth " << depth << " parse threads " << parse);
            CachedImport c;
            c.workload = kineto::import_streaming(ByteSource::open(path), path, classifier(), &c.report, {batch, ahead, depth, parse});
            CHECK(encode_cached_import("k", c) == expected);
          }
  }
  // A bad event in a late batch: the streaming reader declines whatever the split, and the importer names the
  // field as the checked reader does.
  const std::string good = read_text(fixture("pytorch/ddp_rank0_wait.json"));
  const std::string bad = with(good, "\"ts\": 830.0, \"dur\": 30.0", "\"ts\": 830.0, \"dur\": -30.0");  // the last kernel
  for (std::size_t depth : {0, 2})
    for (std::size_t parse : {1, 2, 4})
      CHECK_THROWS(kineto::import_streaming(ByteSource::of_text(bad), "t.json", classifier(), nullptr, {300, 2, depth, parse}));
  const std::string message = outcome(bad, KinetoReader::checked);
  CHECK(message.substr(0, 6) == "error:");
  CHECK(message.find("t.json") != std::string::npos);
  CHECK(message.find(".dur") != std::string::npos);
  CHECK(outcome(bad, KinetoReader::automatic) == message);
}

TEST_CASE("both readers leave an operator with a sparse operand (dimensions, no strides) unpriced by shapes", "[traces][stream]") {
  // torch.sparse.mm over a CSR adjacency: the profiler writes the sparse matrix's dense shape and an empty strides
  // entry; its nonzeros are not in the trace (split sparse_and_int8). With strides the same operator is a dense GEMM.
  Json doc = parse_json_text(read_text(fixture("pytorch/ddp_rank0_wait.json")), "ddp");
  Json& events = doc["traceEvents"];
  REQUIRE(rewrite_first_launching_operator(
              events, "aten::addmm",
              Json{{"Input Dims", Json::array({Json::array({150000, 64}), Json::array({150000, 150000}), Json::array({150000, 64})})},
                   {"Input type", Json::array({"float", "float", "float"})},
                   {"Input Strides", Json::array({Json::array({64, 1}), Json::array(), Json::array({64, 1})})}}) >= 0);
  const std::string sparse = doc.dump();
  CHECK(same_as_checked(sparse));
  for (Json& e : events)
    if (e.value("name", "") == "aten::addmm") e["args"]["Input Strides"][1] = Json::array({150000, 1});
  const std::string dense = doc.dump();
  CHECK(same_as_checked(dense));
  CHECK(outcome(sparse, KinetoReader::checked) != outcome(dense, KinetoReader::checked));
  // and the sparse operator prices as one without shapes at all
  for (Json& e : events)
    if (e.value("name", "") == "aten::addmm") e["args"].erase("Input Dims");
  CHECK(outcome(sparse, KinetoReader::checked) == outcome(doc.dump(), KinetoReader::checked));
}

TEST_CASE("both readers read an expanded operand (a stride 0) at its stored elements", "[traces][stream]") {
  // x + y.expand(1000, 1000): the profiler writes y's logical shape and a 0 stride; y's 1000 stored floats are read
  // once, as a [1000] row broadcast would be (split counting_fixes)
  Json doc = parse_json_text(read_text(fixture("pytorch/ddp_rank0_wait.json")), "ddp");
  Json& events = doc["traceEvents"];
  REQUIRE(rewrite_first_launching_operator(
              events, "aten::add",
              Json{{"Input Dims", Json::array({Json::array({1000, 1000}), Json::array({1000, 1000}), Json::array()})},
                   {"Input type", Json::array({"float", "float", "Scalar"})},
                   {"Input Strides", Json::array({Json::array({1000, 1}), Json::array({0, 1}), Json::array()})}}) >= 0);
  const std::string expanded = doc.dump();
  CHECK(same_as_checked(expanded));
  for (Json& e : events)
    if (e.value("name", "") == "aten::add") e["args"]["Input Strides"][1] = Json::array({1000, 1});
  const std::string contiguous = doc.dump();
  CHECK(same_as_checked(contiguous));
  CHECK(outcome(expanded, KinetoReader::checked) != outcome(contiguous, KinetoReader::checked));
  for (Json& e : events)
    if (e.value("name", "") == "aten::add") {
      e["args"]["Input Dims"][1] = Json::array({1000});
      e["args"]["Input Strides"][1] = Json::array({1});
    }
  CHECK(outcome(expanded, KinetoReader::checked) == outcome(doc.dump(), KinetoReader::checked));
  // a strides entry with a non-integer element (of the dims' rank once the integers alone are counted, or not):
  // neither reader notes an expanded view, and both agree
  for (const Json& bad : {Json::parse("[0, null, 1]"), Json::parse("[0, 1.5]"), Json::parse("[[0], 0, 1]"), Json::parse("[0, \"x\"]")}) {
    for (Json& e : events)
      if (e.value("name", "") == "aten::add") {
        e["args"]["Input Dims"][1] = Json::array({1000, 1000});
        e["args"]["Input Strides"][1] = bad;
      }
    INFO(bad.dump());
    CHECK(same_as_checked(doc.dump()));
    CHECK(outcome(doc.dump(), KinetoReader::checked) == outcome(contiguous, KinetoReader::checked));
  }
}

TEST_CASE("streaming reader: a trace without device activity names the categories the checked reader names", "[traces][stream][errors]") {
  // Categories read before the first device activity, counted across batches parsed side by side; a handled host
  // event (cpu_op), one the reader passes to the checked reader's code (an operator without sizes) and one it skips
  // ("cuda_profiler_range") each counted once.
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"Input Dims": [[2, 2], [2, 2]]}},
    {"ph": "X", "cat": "cuda_profiler_range", "name": "k", "ts": 3, "dur": 1},
    {"ph": "f", "cat": "ac2g", "name": "flow", "ts": 3, "id": 1},
    {"ph": "X", "cat": "Operator", "name": "aten::add", "ts": 5, "dur": 2},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 8, "dur": 2}]})";
  const std::string checked = outcome(text, KinetoReader::checked);
  REQUIRE(checked.find("the categories of its complete events: \"cpu_op\" x2, \"cuda_profiler_range\" x1, \"Operator\" x1") !=
          std::string::npos);
  for (std::size_t batch : {std::size_t{1}, std::size_t{400}})
    for (std::size_t parse : {1, 2, 3}) {
      INFO("batch " << batch << " parse threads " << parse);
      try {
        kineto::import_streaming(ByteSource::of_text(text), "t.json", classifier(), nullptr, {batch, 0, 0, parse});
        FAIL("expected an InputError");
      } catch (const InputError& e) {
        CHECK(std::string("error:") + e.what() == checked);
      }
    }
}

TEST_CASE("streaming reader: unknown device categories, launches after their kernels and copy bytes give the checked reader's outcome", "[traces][stream]") {
  const std::string good = read_text(fixture("kineto_current.json"));
  // Read by the streaming reader itself: the same workload and notes, byte for byte.
  CHECK(same_as_checked(with(good, "\"cat\": \"kernel\", \"name\": \"void at::native::vectorized", "\"cat\": \"weird\", \"name\": \"void at::native::vectorized")));
  CHECK(same_as_checked(with(good, "\"cat\": \"gpu_memset\"", "\"cat\": \"gpu_op\"")));
  CHECK(same_as_checked(with(good, "\"ts\": 1002.0, \"dur\": 3.0, \"args\": {\"correlation\": 11}", "\"ts\": 1012.0, \"dur\": 3.0, \"args\": {\"correlation\": 11}")));
  CHECK(same_as_checked(with(good, "\"bytes\": 4096", "\"bytes\": 1000000000")));  // 1 GB in 2 us (5e14 B/s): within the bound, read
  // Refused: the streaming reader declines and the checked reader names the problem.
  CHECK_FALSE(same_as_checked(with(good, "\"bytes\": 4096", "\"bytes\": 9000000000000000000")));
  CHECK_FALSE(same_as_checked(with(good, "\"bytes\": 4096", "\"bytes\": 10000000000")));
  CHECK_FALSE(same_as_checked(with(good, "\"deviceProperties\": [", "\"deviceProperties\": 5, \"x\": [")));
  CHECK_FALSE(same_as_checked(with(good, "\"deviceProperties\": [", "\"deviceProperties\": [7, ")));
  CHECK_FALSE(same_as_checked(with(good, "\"schemaVersion\": 1", "\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": -1}")));
  CHECK_FALSE(same_as_checked(with(good, "\"schemaVersion\": 1", "\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 0, \"world_size\": 0}")));
  CHECK_FALSE(same_as_checked(with(good, "\"schemaVersion\": 1", "\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 4, \"world_size\": 4}")));
}

TEST_CASE("both readers refuse a baseTimeNanoseconds that is no epoch, naming the field", "[traces][stream][errors]") {
  // It was dropped without a word, and a recording then called it "missing".
  const std::string ev = "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1.5, \"dur\": 2, \"args\": {}}";
  for (const char* bad : {"\"1700000000000000000\"", "-5", "null", "1e30", "[1]"}) {
    const std::string text = "{\"baseTimeNanoseconds\": " + std::string(bad) + ", \"traceEvents\": [" + ev + "]}";
    INFO(bad);
    for (KinetoReader reader : {KinetoReader::checked, KinetoReader::automatic, KinetoReader::streaming}) {
      const std::string got = outcome(text, reader);
      INFO(got);
      // the streaming reader may hand a document this small to the checked one (declined)
      CHECK((got.rfind("error:t.json: baseTimeNanoseconds: expected the trace clock's epoch in nanoseconds", 0) == 0 ||
             (reader == KinetoReader::streaming && got == "declined")));
    }
  }
  const std::string ok = "{\"baseTimeNanoseconds\": 1700000000000000000, \"traceEvents\": [" + ev + "]}";
  CHECK(outcome(ok, KinetoReader::checked).rfind("ok:", 0) == 0);
  CHECK(outcome(ok, KinetoReader::automatic) == outcome(ok, KinetoReader::checked));
}

TEST_CASE("both readers read timestamps of 19 significant digits (ns resolution on the epoch clock) exactly", "[traces][stream]") {
  // A Kineto trace written at ns resolution with no baseTimeNanoseconds holds "ts": 1712195495519689.047: simdjson
  // 3.0.1's get_number() returned 0.0 for such a number without an error (simdjson issue 2099), so the streaming
  // reader put every activity at t = 0 (one stream's kernels "overlapping", the steps lost) where the checked reader
  // read the times right.
  std::string text = read_text(fixture("kineto_current.json"));
  text = with(text, "\"baseTimeNanoseconds\": 1700000000000000000,", "");
  std::string shifted;
  const std::string key = "\"ts\": ";
  std::size_t at = 0, from = 0;
  while ((at = text.find(key, from)) != std::string::npos) {
    const std::size_t value = at + key.size(), end = text.find_first_of(",}", value);
    const double ts = std::stod(text.substr(value, end - value));
    char epoch[64];
    std::snprintf(epoch, sizeof epoch, "%.0f.047", 1712195495000000.0 + ts);  // 19 significant digits
    shifted += text.substr(from, value - from) + epoch;
    from = end;
  }
  shifted += text.substr(from);
  REQUIRE(shifted.find("\"ts\": 1712195495001010.047") != std::string::npos);
  CHECK(same_as_checked(shifted));  // read by the streaming reader itself, to the checked reader's workload
  // below 1 with 20 digits, get_double() itself misread them (simdjson issue 2093: 0.95000000000000000000 as 0.0277)
  const std::string long_fraction = with(text, "\"dur\": 100.0", "\"dur\": 0.95000000000000000000");
  CHECK(same_as_checked(long_fraction));
  CHECK(import_kineto_text(long_fraction, "t.json", classifier(), nullptr, KinetoReader::streaming).ranks[0].kernels[0].duration_s ==
        Approx(0.95e-6));
  const Workload plain = import_kineto_text(text, "t.json", classifier(), nullptr, KinetoReader::checked);
  const Workload epoch = import_kineto_text(shifted, "t.json", classifier(), nullptr, KinetoReader::streaming);
  REQUIRE(epoch.ranks.size() == plain.ranks.size());
  const Rank &p = plain.ranks[0], &e = epoch.ranks[0];
  CHECK(e.steps.size() == p.steps.size());
  REQUIRE(e.kernels.size() == p.kernels.size());
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    CHECK(e.kernels[i].duration_s == Approx(p.kernels[i].duration_s).margin(1e-9));
    CHECK(e.kernels[i].gap_before_s == Approx(p.kernels[i].gap_before_s).margin(1e-9));
  }
}
