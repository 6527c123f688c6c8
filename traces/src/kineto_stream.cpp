#include "traces/src/kineto_stream.hpp"

#include "sim/core/json_util.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/parallel.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/kineto_raw.hpp"

#include <simdjson.h>
#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace dvfs {

// ---------------------------------------------------------------------------------------------------------------
// BatchQueue: text handed from one thread to another

namespace {

// The batches between the reading thread and the parser: at most `depth` waiting; their buffers are reused.
class BatchQueue {
 public:
  struct Batch {
    std::string text;
    std::size_t first = 0, count = 0;
  };
  explicit BatchQueue(std::size_t depth) : depth_(depth) {}

  // The reading thread: a buffer to fill (a used one when there is one), then push it; false once cancelled.
  std::string buffer() {
    std::lock_guard<std::mutex> lock(m_);
    if (spare_.empty()) return {};
    std::string b = std::move(spare_.back());
    spare_.pop_back();
    b.clear();
    return b;
  }
  bool push(Batch b) {
    std::unique_lock<std::mutex> lock(m_);
    not_full_.wait(lock, [&] { return cancelled_ || queue_.size() < depth_; });
    if (cancelled_) return false;
    queue_.push_back(std::move(b));
    not_empty_.notify_one();
    return true;
  }
  void finish(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(m_);
    done_ = true, error_ = error;
    not_empty_.notify_one();
  }

  // The parser: the next batch (false at the end; the reading thread's error, if any, is rethrown only after
  // every batch it pushed before it), and the buffer back when done with it.
  bool pop(Batch& out) {
    std::unique_lock<std::mutex> lock(m_);
    not_empty_.wait(lock, [&] { return done_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void give_back(std::string b) {
    std::lock_guard<std::mutex> lock(m_);
    if (spare_.size() <= depth_) spare_.push_back(std::move(b));
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(m_);
    cancelled_ = true;
    not_full_.notify_one();
  }

 private:
  std::size_t depth_;
  std::mutex m_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Batch> queue_;
  std::vector<std::string> spare_;
  bool done_ = false, cancelled_ = false;
  std::exception_ptr error_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// ByteSource

struct ByteSource::Impl {
  std::FILE* file = nullptr;
  const std::string* text = nullptr;
  std::size_t text_pos = 0;
  bool gzip = false, member_ended = false, done = false;
  std::unique_ptr<inflate_state> gz;  // ISA-L's inflate state (~200 KB), gzip only
  std::vector<std::uint8_t> in;
  std::string plain_head;  // the first bytes of a plain file, read to look for gzip's magic
  // read_ahead: a thread reads `inner` into chunks, handed over through `ahead`
  std::unique_ptr<ByteSource> inner;
  std::unique_ptr<BatchQueue> ahead;
  std::thread ahead_thread;
  BatchQueue::Batch chunk;
  std::size_t chunk_pos = 0;
  bool ahead_done = false;

  ~Impl() {
    if (ahead) {
      ahead->cancel();
      ahead_thread.join();
    }
    if (file) std::fclose(file);
  }

  std::size_t read_ahead(std::string& out, std::size_t n) {
    while (chunk_pos >= chunk.text.size()) {
      if (ahead_done) return 0;
      ahead->give_back(std::move(chunk.text));
      chunk.text.clear();
      chunk_pos = 0;
      if (!ahead->pop(chunk)) {
        ahead_done = true;
        return 0;
      }
    }
    const std::size_t k = std::min(n, chunk.text.size() - chunk_pos);
    out.append(chunk.text, chunk_pos, k);
    chunk_pos += k;
    return k;
  }

  std::size_t read_plain(std::string& out, std::size_t n) {
    const std::size_t old = out.size();
    if (!plain_head.empty()) {
      out += plain_head;
      plain_head.clear();
      return out.size() - old;
    }
    out.resize(old + n);
    const std::size_t got = std::fread(out.data() + old, 1, n, file);
    out.resize(old + got);
    return got;
  }

  // gzip through ISA-L's streaming inflate (igzip: ~3x zlib's speed on the default trace). Each member's header is
  // checked here for what ISA-L lets through but zlib refuses (reserved flag bits); ISA-L checks the rest
  // (method, header CRC, the trailer's CRC-32 and length). Anything it refuses throws: the importer then reads
  // the file with the checked reader (zlib), which gives today's message.
  std::size_t read_gzip(std::string& out, std::size_t n) {
    const std::size_t old = out.size();
    out.resize(old + n);
    gz->next_out = reinterpret_cast<std::uint8_t*>(out.data() + old);
    gz->avail_out = static_cast<std::uint32_t>(n);
    while (gz->avail_out > 0 && !done) {
      if (member_ended && !next_member()) {
        done = true;
        break;
      }
      const bool at_eof = gz->avail_in == 0 && !refill(0);  // ISA-L may still hold output of input it took
      const std::uint32_t in_before = gz->avail_in, out_before = gz->avail_out;
      const int rc = isal_inflate(gz.get());
      if (rc < 0 || rc == ISAL_NEED_DICT) throw std::runtime_error("corrupt gzip data");
      if (gz->block_state == ISAL_BLOCK_FINISH) member_ended = true;
      else if (gz->avail_in == in_before && gz->avail_out == out_before)
        throw std::runtime_error(at_eof ? "truncated gzip stream" : "gzip inflate stalled");
    }
    out.resize(old + n - gz->avail_out);
    return out.size() - old;
  }

  // Input bytes after the unread ones (moved to the front of `in`) until at least `want` wait; false at the end of
  // the file with none read.
  bool refill(std::size_t want) {
    std::size_t have = gz->avail_in;
    if (have > 0 && gz->next_in != in.data()) std::memmove(in.data(), gz->next_in, have);
    gz->next_in = in.data();
    bool any = false;
    while (have == 0 || have < want) {
      const std::size_t got = std::fread(in.data() + have, 1, in.size() - have, file);
      if (got == 0) break;
      have += got, any = true;
    }
    gz->avail_in = static_cast<std::uint32_t>(have);
    return any;
  }

  // After a member's end: false at the end of the file; a next member (concatenated gzip members are legal) is
  // started; anything else throws.
  bool next_member() {
    if (gz->avail_in < kGzipHead) refill(kGzipHead);
    if (gz->avail_in == 0) return false;
    start_member();
    return true;
  }
  void start_member() {
    const std::uint8_t* h = gz->next_in;
    if (gz->avail_in < kGzipHead || h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 || (h[3] & 0xe0) != 0)
      throw std::runtime_error("corrupt gzip data");
    isal_inflate_reset(gz.get());
    gz->crc_flag = ISAL_GZIP;
    member_ended = false;
  }
  static constexpr std::size_t kGzipHead = 10;  // magic, method, flags, mtime, xfl, os
};

ByteSource::ByteSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ByteSource::ByteSource(ByteSource&&) noexcept = default;
ByteSource& ByteSource::operator=(ByteSource&&) noexcept = default;
ByteSource::~ByteSource() = default;

ByteSource ByteSource::open(const std::string& path) {
  require_regular_file(path, "a Kineto trace (JSON, or JSON compressed with gzip)");
  auto impl = std::make_unique<Impl>();
  impl->file = std::fopen(path.c_str(), "rb");
  if (!impl->file) throw std::runtime_error("cannot open " + path);
  impl->in.resize(std::size_t{1} << 18);
  const std::size_t got = std::fread(impl->in.data(), 1, impl->in.size(), impl->file);
  if (got >= 2 && impl->in[0] == 0x1f && impl->in[1] == 0x8b) {
    impl->gzip = true;
    impl->gz = std::make_unique<inflate_state>();
    isal_inflate_init(impl->gz.get());
    impl->gz->next_in = impl->in.data();
    impl->gz->avail_in = static_cast<std::uint32_t>(got);
    if (got < Impl::kGzipHead) impl->refill(Impl::kGzipHead);
    impl->start_member();
  } else {
    impl->plain_head.assign(reinterpret_cast<const char*>(impl->in.data()), got);
  }
  return ByteSource(std::move(impl));
}

ByteSource ByteSource::of_text(const std::string& text) {
  auto impl = std::make_unique<Impl>();
  impl->text = &text;
  return ByteSource(std::move(impl));
}

ByteSource ByteSource::read_ahead(ByteSource inner, std::size_t chunk_bytes, std::size_t depth) {
  auto impl = std::make_unique<Impl>();
  impl->inner = std::make_unique<ByteSource>(std::move(inner));
  impl->ahead = std::make_unique<BatchQueue>(std::max<std::size_t>(depth, 1));
  Impl* s = impl.get();  // the thread ends (~Impl) before *s goes
  impl->ahead_thread = std::thread([s, chunk_bytes] {
    try {
      for (;;) {
        BatchQueue::Batch b{s->ahead->buffer(), 0, 0};
        if (s->inner->read(b.text, chunk_bytes) == 0 || !s->ahead->push(std::move(b))) break;
      }
      s->ahead->finish(nullptr);
    } catch (...) {
      s->ahead->finish(std::current_exception());
    }
  });
  return ByteSource(std::move(impl));
}

bool ByteSource::in_memory() const { return impl_->text != nullptr; }

std::size_t ByteSource::read(std::string& out, std::size_t n) {
  Impl& s = *impl_;
  if (s.text) {
    const std::size_t k = std::min(n, s.text->size() - s.text_pos);
    out.append(*s.text, s.text_pos, k);
    s.text_pos += k;
    return k;
  }
  if (s.ahead) return s.read_ahead(out, n);
  return s.gzip ? s.read_gzip(out, n) : s.read_plain(out, n);
}

// ---------------------------------------------------------------------------------------------------------------
// split_trace_events

namespace {

[[noreturn]] void decline(const char* why) { throw std::runtime_error(std::string("streaming reader declined: ") + why); }

// The deepest nesting the splitter lets through (the checked reader decides nearer kMaxJsonDepth).
constexpr std::size_t kStreamMaxDepth = kMaxJsonDepth - 4;

class TraceSplitter {
 public:
  TraceSplitter(ByteSource& src, const std::function<void(std::string_view, std::size_t, std::size_t)>& on_batch,
                std::size_t batch_bytes, std::size_t read_bytes)
      : src_(src), on_batch_(on_batch), batch_bytes_(batch_bytes), read_bytes_(read_bytes) {}

  std::string run() {
    skip_ws();
    if (at_end()) decline("empty document");
    if (buf_[pos_] == '[') {
      ++pos_;
      events(1);
      skeleton_ = "[]";
    } else if (buf_[pos_] == '{') {
      ++pos_;
      object();
    } else {
      decline("top level is not an object or array");
    }
    skip_ws();
    if (!at_end()) decline("content after the document");
    return std::move(skeleton_);
  }

 private:
  static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  // Reads more; text before keep_from_ (before pos_ when nothing is kept) is dropped first, so positions are
  // only ever kept relative to keep_from_.
  bool more() {
    const std::size_t keep = keep_from_ == npos ? pos_ : keep_from_;
    if (keep > 4 * read_bytes_) {
      buf_.erase(0, keep);
      pos_ -= keep;
      if (keep_from_ != npos) keep_from_ -= keep;
    }
    return src_.read(buf_, read_bytes_) > 0;
  }
  bool at_end() { return pos_ >= buf_.size() && !more(); }
  char peek() {
    if (at_end()) decline("document ends early");
    return buf_[pos_];
  }
  void skip_ws() {
    while (!at_end() && is_ws(buf_[pos_])) ++pos_;
  }

  // pos_ to the next '"', '{', '}', '[' or ']' in the buffer (or its end): inside a container everything else
  // (numbers, literals, ',', ':', blanks) is skipped, in one tight loop instead of a peek() per byte.
  void skip_to_structural() {
    static const auto table = [] {
      std::array<bool, 256> t{};
      for (unsigned char c : {'"', '{', '}', '[', ']'}) t[c] = true;
      return t;
    }();
    const char* p = buf_.data() + pos_;
    const char* const end = buf_.data() + buf_.size();
    while (p < end && !table[static_cast<unsigned char>(*p)]) ++p;
    pos_ = static_cast<std::size_t>(p - buf_.data());
  }

  // pos_ at the opening quote; leaves pos_ past the closing one.
  void string() {
    ++pos_;
    for (;;) {
      if (pos_ >= buf_.size() && !more()) decline("unterminated string");
      // Most strings of an event are short (keys, categories): looked at byte by byte first, memchr past that.
      const std::size_t near = std::min(buf_.size() - pos_, std::size_t{24});
      const void* q = nullptr;
      for (std::size_t k = 0; k < near; ++k)
        if (buf_[pos_ + k] == '"') {
          q = buf_.data() + pos_ + k;
          break;
        }
      if (!q && near < buf_.size() - pos_) q = std::memchr(buf_.data() + pos_ + near, '"', buf_.size() - pos_ - near);
      if (!q) {
        pos_ = buf_.size();
        continue;
      }
      const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(q) - buf_.data());
      std::size_t slashes = 0;
      while (buf_[at - 1 - slashes] == '\\') ++slashes;  // the opening quote stops the run
      pos_ = at + 1;
      if (slashes % 2 == 0) return;
    }
  }

  // Any value, its extent only (its parser checks the rest); `depth`: the levels open around it.
  void value(std::size_t depth) {
    const char c = peek();
    if (c == '"') return string();
    if (c == '{' || c == '[') {
      std::size_t open = 0;
      for (;;) {
        skip_to_structural();
        const char d = peek();
        if (d == '"') {
          string();
          continue;
        }
        ++pos_;
        if (d == '{' || d == '[') {
          if (depth + ++open > kStreamMaxDepth) decline("deep nesting");
        } else if (d == '}' || d == ']') {
          if (--open == 0) return;
        }
      }
    }
    std::size_t length = 0;
    while (!at_end()) {
      const char d = buf_[pos_];
      if (d == ',' || d == ']' || d == '}' || d == ':' || is_ws(d) || d == '"' || d == '{' || d == '[') break;
      ++pos_, ++length;
    }
    if (length == 0) decline("missing value");
  }

  // The members of the top-level object (pos_ past its '{').
  void object() {
    skeleton_ = "{";
    bool found = false;
    skip_ws();
    if (peek() == '}') decline("no traceEvents");
    for (;;) {
      skip_ws();
      if (peek() != '"') decline("expected a key");
      keep_from_ = pos_;
      string();
      const std::string key = buf_.substr(keep_from_, pos_ - keep_from_);
      if (key.find('\\') != std::string::npos) decline("escaped key");
      skip_ws();
      if (peek() != ':') decline("expected ':'");
      ++pos_;
      skip_ws();
      if (skeleton_.size() > 1) skeleton_ += ',';
      if (key == "\"traceEvents\"") {
        if (found || peek() != '[') decline("traceEvents twice or not an array");
        found = true;
        keep_from_ = npos;
        ++pos_;
        events(2);
        skeleton_ += key + ":[]";
      } else {
        keep_from_ = pos_;
        value(1);
        skeleton_.append(key).append(":").append(buf_, keep_from_, pos_ - keep_from_);
        keep_from_ = npos;
        if (skeleton_.size() > (std::size_t{64} << 20)) decline("large top-level values");
      }
      skip_ws();
      const char c = peek();
      ++pos_;
      if (c == '}') break;
      if (c != ',') decline("expected ',' or '}'");
    }
    skeleton_ += '}';
    if (!found) decline("no traceEvents");
  }

  // The elements of the events array (pos_ past its '['), in batches.
  void events(std::size_t depth) {
    skip_ws();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    keep_from_ = pos_;
    std::size_t count = 0;
    for (;;) {
      const char c = peek();
      if (c == ']' || c == ',') decline("missing element");
      value(depth);
      ++count;
      const std::size_t length = pos_ - keep_from_;  // of the batch so far
      skip_ws();
      const char next = peek();
      if (next != ',' && next != ']') decline("expected ',' or ']'");
      if (next == ']' || length >= batch_bytes_) {
        on_batch_(std::string_view(buf_.data() + keep_from_, length), first_, count);
        first_ += count;
        count = 0;
      }
      ++pos_;
      if (next == ']') break;
      skip_ws();
      if (count == 0) keep_from_ = pos_;
    }
    keep_from_ = npos;
  }

  static constexpr std::size_t npos = std::string::npos;
  ByteSource& src_;
  const std::function<void(std::string_view, std::size_t, std::size_t)>& on_batch_;
  std::size_t batch_bytes_, read_bytes_;
  std::string buf_;
  std::size_t pos_ = 0;
  std::size_t keep_from_ = npos;  // text from here on is still needed (a batch or key being read)
  std::size_t first_ = 0;         // index of the batch's first event
  std::string skeleton_;
};

}  // namespace

std::string split_trace_events(ByteSource& source,
                               const std::function<void(std::string_view, std::size_t, std::size_t)>& on_batch,
                               std::size_t batch_bytes, std::size_t read_bytes) {
  return TraceSplitter(source, on_batch, batch_bytes, read_bytes).run();
}

// ---------------------------------------------------------------------------------------------------------------
// split_trace_events_pipelined

namespace {

struct PipelineCancelled {};

}  // namespace

std::string split_trace_events_pipelined(ByteSource& source,
                                         const std::function<void(std::string_view, std::size_t, std::size_t)>& on_batch,
                                         std::size_t queue_depth, std::size_t batch_bytes, std::size_t read_bytes) {
  auto frame = [](std::string& b, std::string_view text) {
    b.reserve(text.size() + 2 + kBatchPadding);
    b += '[';
    b.append(text);
    b += ']';
  };
  if (queue_depth == 0) {
    std::string b;
    return split_trace_events(
        source,
        [&](std::string_view text, std::size_t first, std::size_t count) {
          b.clear();
          frame(b, text);
          on_batch(b, first, count);
        },
        batch_bytes, read_bytes);
  }
  BatchQueue queue(queue_depth);
  std::string skeleton;
  std::thread reader([&] {
    try {
      skeleton = split_trace_events(
          source,
          [&](std::string_view text, std::size_t first, std::size_t count) {
            BatchQueue::Batch b{queue.buffer(), first, count};
            frame(b.text, text);
            if (!queue.push(std::move(b))) throw PipelineCancelled{};
          },
          batch_bytes, read_bytes);
      queue.finish(nullptr);
    } catch (const PipelineCancelled&) {
      queue.finish(nullptr);
    } catch (...) {
      queue.finish(std::current_exception());
    }
  });
  try {
    BatchQueue::Batch b;
    while (queue.pop(b)) {
      on_batch(b.text, b.first, b.count);
      queue.give_back(std::move(b.text));
    }
  } catch (...) {
    queue.cancel();
    reader.join();
    throw;
  }
  reader.join();
  return skeleton;
}

// ---------------------------------------------------------------------------------------------------------------
// The events of a batch, with simdjson On-Demand

namespace kineto {
namespace {

namespace od = simdjson::ondemand;
static_assert(simdjson::SIMDJSON_PADDING <= kBatchPadding, "batches must carry simdjson's padding");

constexpr long kIntMin = std::numeric_limits<int>::min(), kIntMax = std::numeric_limits<int>::max();
constexpr long kLongMin = std::numeric_limits<long>::min(), kLongMax = std::numeric_limits<long>::max();
constexpr std::uint32_t kNone = 0xffffffffu;

// Whether a number token (as simdjson's raw_json_token gives it, with what follows up to the next structural
// character) is a JSON integer of 20 digits or more: one simdjson 3.0.1 reads neither as an integer nor as a double,
// and nlohmann reads as a double. Anything else simdjson refused is malformed ("01", "1.", "-").
bool big_integer(std::string_view raw) {
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\n' || raw.back() == '\r')) raw.remove_suffix(1);
  if (!raw.empty() && raw.front() == '-') raw.remove_prefix(1);
  if (raw.size() < 20 || raw.front() == '0') return false;
  for (char c : raw)
    if (c < '0' || c > '9') return false;
  return true;
}

// One event, every value of it read (so simdjson checks all of it), in a flat tree that is reused.
struct Node {
  enum Type : std::uint8_t { k_null, k_bool, k_i64, k_u64, k_f64, k_str, k_arr, k_obj } type = k_null;
  bool b = false;
  std::uint32_t child = kNone, next = kNone;
  std::string_view key, str;  // into the parser's string buffer (valid for the batch)
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
};

class EventTree {
 public:
  void clear() { nodes_.clear(); }
  std::uint32_t build(od::value v, std::size_t depth, std::string_view key = {}) {
    const auto at = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    nodes_[at].key = key;
    switch (v.type()) {
      case od::json_type::object: {
        if (depth >= kMaxJsonDepth) decline("deep nesting");
        nodes_[at].type = Node::k_obj;
        std::uint32_t last = kNone;
        for (auto field : v.get_object()) {
          const std::string_view k = field.unescaped_key();
          link(at, last, build(field.value(), depth + 1, k));
        }
        break;
      }
      case od::json_type::array: {
        if (depth >= kMaxJsonDepth) decline("deep nesting");
        nodes_[at].type = Node::k_arr;
        std::uint32_t last = kNone;
        for (auto element : v.get_array()) link(at, last, build(element.value(), depth + 1));
        break;
      }
      case od::json_type::number: {
        // The type first, then the typed getter. simdjson 3.0.1 misreads long decimals without an error:
        // get_number() gives 0.0 from 19 significant digits (simdjson issue 2099: every `ts` of a Kineto trace written
        // at ns resolution on the epoch clock, 1712195495519689.047), get_double() a wrong value below 1 from 20
        // (issue 2093: 0.95000000000000000000 reads 0.0277). get_double() still checks the number (1e400 throws);
        // a token of 19 digits or more is then read by the C++ library, correctly rounded as nlohmann's strtod.
        Node& x = nodes_[at];
        od::number_type type = od::number_type::floating_point_number;
        if (v.get_number_type().get(type) != simdjson::SUCCESS) type = od::number_type::floating_point_number;
        // An integer beyond 64 bits: simdjson 3.0.1 types it an integer and then reads it as none, nor as a double;
        // nlohmann reads it as a double, so this reader does too (beyond the double range both fail).
        if (type == od::number_type::signed_integer && v.get_int64().get(x.i) == simdjson::SUCCESS) {
          x.type = Node::k_i64;
        } else if (type == od::number_type::unsigned_integer && v.get_uint64().get(x.u) == simdjson::SUCCESS) {
          x.type = Node::k_u64;
        } else {
          const std::string_view raw = v.raw_json_token();
          x.type = Node::k_f64;
          if (v.get_double().get(x.d) != simdjson::SUCCESS) {  // the integer beyond 64 bits, or a number in error
            if (!big_integer(raw) || std::from_chars(raw.data(), raw.data() + raw.size(), x.d).ec != std::errc())
              throw simdjson::simdjson_error(simdjson::NUMBER_ERROR);
          } else {
            std::size_t digits = 0;
            for (std::size_t c = 0; c < raw.size() && raw[c] != 'e' && raw[c] != 'E'; ++c) digits += raw[c] >= '0' && raw[c] <= '9';
            double exact = 0;
            if (digits >= 19 && std::from_chars(raw.data(), raw.data() + raw.size(), exact).ec == std::errc()) x.d = exact;
          }
        }
        break;
      }
      case od::json_type::string: {
        const std::string_view s = v.get_string();
        nodes_[at].type = Node::k_str, nodes_[at].str = s;
        break;
      }
      case od::json_type::boolean: {
        const bool b = v.get_bool();
        nodes_[at].type = Node::k_bool, nodes_[at].b = b;
        break;
      }
      case od::json_type::null: {
        const bool is_null = v.is_null();
        if (!is_null) decline("bad literal");
        break;
      }
    }
    return at;
  }

  const Node& operator[](std::uint32_t k) const { return nodes_[k]; }
  template <class F>
  void each(const Node& container, F f) const {
    for (std::uint32_t c = container.child; c != kNone; c = nodes_[c].next) f(nodes_[c]);
  }
  std::size_t size(const Node& container) const {
    std::size_t n = 0;
    for (std::uint32_t c = container.child; c != kNone; c = nodes_[c].next) ++n;
    return n;
  }

  // The value as the checked reader holds it (nlohmann: non-negative integers unsigned, later keys replacing
  // earlier ones).
  Json to_json(const Node& n) const {
    switch (n.type) {
      case Node::k_null: return Json(nullptr);
      case Node::k_bool: return Json(n.b);
      case Node::k_i64: return n.i >= 0 ? Json(static_cast<std::uint64_t>(n.i)) : Json(n.i);
      case Node::k_u64: return Json(n.u);
      case Node::k_f64: return Json(n.d);
      case Node::k_str: return Json(std::string(n.str));
      case Node::k_arr: {
        Json j = Json::array();
        each(n, [&](const Node& c) { j.push_back(to_json(c)); });
        return j;
      }
      case Node::k_obj: {
        Json j = Json::object();
        each(n, [&](const Node& c) { j[std::string(c.key)] = to_json(c); });
        return j;
      }
    }
    return Json();
  }

 private:
  void link(std::uint32_t parent, std::uint32_t& last, std::uint32_t c) {
    if (last == kNone) nodes_[parent].child = c;
    else nodes_[last].next = c;
    last = c;
  }
  std::vector<Node> nodes_;
};

bool is_number(const Node* n) { return n && (n->type == Node::k_i64 || n->type == Node::k_u64 || n->type == Node::k_f64); }
bool is_integer(const Node* n) { return n && (n->type == Node::k_i64 || n->type == Node::k_u64); }
bool is_string(const Node* n) { return n && n->type == Node::k_str; }
double number_of(const Node& n) {
  return n.type == Node::k_i64 ? static_cast<double>(n.i) : n.type == Node::k_u64 ? static_cast<double>(n.u) : n.d;
}

// The checked reader's int_field (kineto_importer.cpp) where it gives a value; nullopt where it would fail (the
// event then goes through the checked reader's code, which names the problem).
std::optional<long> int_field(const Node* n, long fallback, long lo = kLongMin, long hi = kLongMax) {
  if (!n) return fallback;
  switch (n->type) {
    case Node::k_f64: {
      const double t = std::trunc(n->d);
      if (!(t >= static_cast<double>(lo) && t <= static_cast<double>(hi)) || std::fabs(t) > 9e18) return std::nullopt;
      return static_cast<long>(t);
    }
    case Node::k_i64:
      if (n->i < lo || n->i > hi) return std::nullopt;
      return static_cast<long>(n->i);
    case Node::k_u64:
      if (hi < 0 || n->u > static_cast<std::uint64_t>(hi) || (lo > 0 && n->u < static_cast<std::uint64_t>(lo))) return std::nullopt;
      return static_cast<long>(n->u);
    case Node::k_str: {
      const std::string_view s = n->str;
      const auto pos = s.find_first_of("0123456789");
      if (pos == std::string_view::npos) return fallback;
      const auto end = s.find_first_not_of("0123456789", pos);
      const std::string_view digits = s.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
      if (digits.size() > 18) return std::nullopt;
      long v = 0;
      for (char c : digits) v = v * 10 + (c - '0');
      if (v < lo || v > hi) return std::nullopt;
      return v;
    }
    default: return fallback;
  }
}

// A launch dimension (grid, block) as the checked reader's read_dim3 reads it; false where it would fail.
bool read_dim3(const EventTree& tree, const Node* dims, std::uint32_t out[3]) {
  if (!dims || dims->type != Node::k_arr) return true;
  std::size_t d = 0;
  bool ok = true;
  tree.each(*dims, [&](const Node& x) {
    if (d >= 3 || !ok) return;
    if (is_number(&x)) {
      const double v = number_of(x);
      if (x.type == Node::k_f64 ? !(v >= 0 && v <= 4294967295.0 && v == std::floor(v))
                              : (x.type == Node::k_i64 ? x.i < 0 || x.i > 0xffffffffL : x.u > 0xffffffffUL))
        ok = false;
      else out[d] = static_cast<std::uint32_t>(x.type == Node::k_f64 ? v : x.type == Node::k_i64 ? static_cast<double>(x.i) : static_cast<double>(x.u));
    }
    ++d;
  });
  return ok;
}

// The members of an event and of its args the reader looks at: each object's members are matched once, in one
// pass (the last of equal keys wins, as the checked reader keeps it).
enum EvField { f_cat, f_ph, f_args, f_ts, f_dur, f_name, f_pid, f_tid, kEvFields };
enum ArgField {
  a_collective, a_sm_clock, a_mem_clock, a_work, a_device, a_stream, a_External_id, a_external_id, a_correlation, a_registers,
  a_shared_memory, a_bytes, a_grid, a_block, a_blocks_per_sm, a_Input_Dims, a_Input_dims, a_Input_type, a_Concrete_Inputs, a_Input_Strides,
  a_batched_calls, kArgFields
};
// `k` (already known to be as long as `lit`) is `lit`: a memcmp of a constant length, which the compiler turns into
// a few integer compares (string_view's == called compare() and memcmp once per member of every event).
template <std::size_t N>
bool is(std::string_view k, const char (&lit)[N]) {
  return std::memcmp(k.data(), lit, N - 1) == 0;
}
int ev_field(std::string_view k) {
  switch (k.size()) {
    case 2: return is(k, "ph") ? f_ph : is(k, "ts") ? f_ts : -1;
    case 3: return is(k, "cat") ? f_cat : is(k, "dur") ? f_dur : is(k, "pid") ? f_pid : is(k, "tid") ? f_tid : -1;
    case 4: return is(k, "args") ? f_args : is(k, "name") ? f_name : -1;
    default: return -1;
  }
}
int arg_field(std::string_view k) {
  switch (k.size()) {
    case 4: return is(k, "work") ? a_work : is(k, "grid") ? a_grid : -1;
    case 5: return is(k, "bytes") ? a_bytes : is(k, "block") ? a_block : -1;
    case 6: return is(k, "device") ? a_device : is(k, "stream") ? a_stream : -1;
    case 10: return is(k, "Input Dims") ? a_Input_Dims : is(k, "Input dims") ? a_Input_dims : is(k, "Input type") ? a_Input_type : -1;
    case 11: return is(k, "External id") ? a_External_id : is(k, "external id") ? a_external_id : is(k, "correlation") ? a_correlation : -1;
    case 13:
      return is(k, "shared memory") ? a_shared_memory : is(k, "blocks per SM") ? a_blocks_per_sm : is(k, "Input Strides") ? a_Input_Strides
             : is(k, "Batched calls") ? a_batched_calls : -1;
    case 14: return is(k, "sm clock (MHz)") ? a_sm_clock : -1;
    case 15:
      return is(k, "Collective name") ? a_collective : is(k, "mem clock (MHz)") ? a_mem_clock : is(k, "Concrete Inputs") ? a_Concrete_Inputs : -1;
    case 20: return is(k, "registers per thread") ? a_registers : -1;
    default: return -1;
  }
}
// out[field(key)]: the member of `obj` of that key (nullptr for every field when `obj` is no object).
template <std::size_t N, class Field>
void fields_of(const EventTree& tree, const Node* obj, Field field, const Node* (&out)[N]) {
  for (const Node*& o : out) o = nullptr;
  if (!obj || obj->type != Node::k_obj) return;
  tree.each(*obj, [&](const Node& m) {
    const int k = field(m.key);
    if (k >= 0) out[k] = &m;
  });
}

// Turns the events of each batch into raw records.
class EventReader {
 public:
  EventReader(RawTrace& t, const std::string& file) : t_(&t), file_(file) {}
  void read_into(RawTrace& t) { t_ = &t; }  // the records of the next batches go to `t`

  // `framed`: "[events]" and kBatchPadding readable bytes after it (split_trace_events_pipelined).
  void batch(std::string_view framed, std::size_t first, std::size_t count) {
    od::document doc = parser_.iterate(framed.data(), framed.size(), framed.size() + kBatchPadding);
    std::size_t i = first;
    for (auto element : doc.get_array()) {
      if (i >= first + count) decline("more events than split");
      tree_.clear();
      const Node& ev = tree_[tree_.build(element.value(), 2)];
      event(ev, i++);
    }
    if (i != first + count) decline("fewer events than split");
  }

 private:
  void event(const Node& ev, std::size_t i) {
    if (ev.type != Node::k_obj) return;
    fields_of(tree_, &ev, ev_field, f_);
    const Node* cat = f_[f_cat];
    if (!is_string(cat)) return;
    const Node* ph = f_[f_ph];
    ActivityKind kind;
    bool old = false;
    const bool device = kind_of(cat->str, kind, old);
    if (ph && !(is_string(ph) && ph->str == "X")) {
      if (device) read_event(*t_, tree_.to_json(ev), file_, i);  // refuses it, as the checked reader does
      if (!device && is_string(ph) && cat->str == "cpu_instant_event" && is_string(f_[f_name]) && f_[f_name]->str == "[memory]")
        ++t_->memory_events;  // profile_memory's, counted as the checked reader counts them
      if (is_string(ph) || device) return;
    }
    const HostCategory host = device ? HostCategory::other : host_category_of(cat->str);
    if (!device && t_->acts.empty() && host == HostCategory::other) note_host_category(*t_, cat->str);
    if (!device && host == HostCategory::other) {  // nothing else the importer reads; an unknown one on a device is noted
      if (cat->str == "python_function") return void(++t_->python_function_events);
      if (kineto_category(cat->str)) return;
      fields_of(tree_, f_[f_args], arg_field, a_);
      if (a_[a_device] || a_[a_stream]) note_unknown_device_event(*t_, cat->str);
      return;
    }
    fields_of(tree_, f_[f_args], arg_field, a_);  // none when args is no object
    const bool handled = device ? device_activity(kind, old) : host_event(host);
    if (!handled) read_event(*t_, tree_.to_json(ev), file_, i);  // the checked reader's code for this one (notes it)
    else if (!device && t_->acts.empty()) note_host_category(*t_, cat->str);
  }

  // The checked reader's add_device_activity for an activity without collective or simulated args.
  bool device_activity(ActivityKind kind, bool old) {
    for (int key : {a_collective, a_batched_calls, a_sm_clock, a_mem_clock, a_work})
      if (a_[key]) return false;
    const Node* ts = f_[f_ts];
    const Node* dur = f_[f_dur];
    const Node* name = f_[f_name];
    if (!is_number(ts) || !is_number(dur) || !is_string(name)) return false;
    RawActivity a;
    a.ts_us = number_of(*ts);
    a.dur_us = number_of(*dur);
    if (!(std::fabs(a.ts_us) <= kMaxTraceTimeUs) || !(std::fabs(a.dur_us) <= kMaxTraceTimeUs) || a.dur_us < 0 ||
        a.dur_us * 1e-6 > kMaxTraceSpanS)
      return false;
    const Node* device = a_[a_device];
    const Node* stream = a_[a_stream];
    const Node* external = a_[a_External_id];
    const auto dev = device ? int_field(device, 0, 0, kIntMax) : int_field(f_[f_pid], 0, kIntMin, kIntMax);  // as the checked reader
    const auto str = stream ? int_field(stream, 0, kIntMin, kIntMax) : int_field(f_[f_tid], 0, kIntMin, kIntMax);
    const auto corr = int_field(a_[a_correlation], -1);
    const auto ext = external ? int_field(external, -1) : int_field(a_[a_external_id], -1);
    const auto regs = int_field(a_[a_registers], 0, 0, 0xffffffffL);
    const auto shared = int_field(a_[a_shared_memory], 0, 0, 0xffffffffL);
    const auto bytes = int_field(a_[a_bytes], 0, 0, kLongMax);
    if (!dev || !str || !corr || !ext || !regs || !shared || !bytes) return false;
    if (kind != ActivityKind::kernel && !plausible_copy_bytes(static_cast<double>(*bytes), a.dur_us)) return false;  // named there
    LaunchShape shape;
    if (!read_dim3(tree_, a_[a_grid], shape.grid) || !read_dim3(tree_, a_[a_block], shape.block)) return false;
    t_->old_schema = t_->old_schema || old;
    a.name = t_->names.intern(name->str);
    a.kind = kind;
    a.device = static_cast<int>(*dev), a.stream = static_cast<int>(*str), a.correlation = *corr, a.external_id = *ext;
    shape.registers_per_thread = static_cast<std::uint32_t>(*regs);
    shape.shared_memory_bytes = static_cast<std::uint32_t>(*shared);
    shape.bytes = static_cast<std::uint64_t>(*bytes);
    const Node* bps = a_[a_blocks_per_sm];
    a.blocks_per_sm = is_number(bps) ? number_of(*bps) : -1;
    add_activity(*t_, std::move(a), shape);
    return true;
  }

  // The checked reader's add_host_event for operators, annotation ranges and launches.
  bool host_event(HostCategory lc) {
    const Node* name = f_[f_name];
    const bool op = lc == HostCategory::operator_2021 || lc == HostCategory::cpu_op;
    if (op && is_string(name) && name->str.substr(0, 13) == "ProfilerStep#") return false;
    if (lc == HostCategory::cpu_op && a_[a_collective]) return false;
    // mid-2021 schemas: operators of cat "Operator" that already spell it "Input Dims" (the earlier "Input dims": the checked reader)
    if (lc == HostCategory::cpu_op || (lc == HostCategory::operator_2021 && a_[a_Input_Dims])) return !is_string(name) || add_operator(name->str);
    if (lc == HostCategory::operator_2021 && a_[a_Input_dims]) return false;
    const Node* ts = f_[f_ts];
    if (lc == HostCategory::gpu_user_annotation || lc == HostCategory::user_annotation) {
      const Node* dur = f_[f_dur];
      if (!is_string(name) || !is_number(ts) || !is_number(dur)) return true;
      Range r{number_of(*ts), number_of(*ts) + number_of(*dur), -1, std::string(name->str)};
      if (lc == HostCategory::user_annotation) {
        if (starts_with(r.name, "nccl:")) add_annotated_comm(r);
        t_->cpu_ranges.push_back(std::move(r));
        return true;
      }
      const Node* device = a_[a_device];
      const auto dev = device ? int_field(device, 0) : int_field(f_[f_pid], 0);
      if (!dev) return false;
      r.device = *dev;
      t_->gpu_ranges.push_back(std::move(r));
    } else if (lc == HostCategory::launch && a_[a_correlation]) {
      const auto corr = int_field(a_[a_correlation], -1);
      if (is_number(ts) && !corr) return false;
      if (is_string(name) && name->str.substr(0, 3) == "hip") t_->hip_runtime = true;
      if (corr && is_string(name) && is_graph_launch(name->str)) t_->graph_launches.push_back(*corr);
      if (is_number(ts)) t_->launch_ts.set(*corr, number_of(*ts), host_tid(), is_string(name) && is_extended_launch(name->str));
    }
    return true;
  }

  // OperatorIndex::add (kernel_activity.cpp) on the tree.
  bool add_operator(std::string_view name) {
    const Node* dims = a_[a_Input_Dims];
    const Node* id = a_[a_External_id];
    if (!dims || dims->type != Node::k_arr || !is_integer(id)) return true;
    const long external_id = id->type == Node::k_u64 ? static_cast<long>(id->u) : static_cast<long>(id->i);
    if (const Node *ts = f_[f_ts], *dur = f_[f_dur]; is_number(ts) && is_number(dur))  // its span (add_operator_span)
      t_->operators.add_span({number_of(*ts), number_of(*ts) + number_of(*dur), host_tid(), external_id});
    OperatorCall op;
    bool sized = true;
    auto integers_of = [&](const Node& x, std::vector<std::int64_t>& v) {
      if (!is_integer(&x) || (x.type == Node::k_u64 ? x.u > static_cast<std::uint64_t>(kMaxOperandSize)
                                                  : x.i < -kMaxOperandSize || x.i > kMaxOperandSize))
        sized = false;
      else
        v.push_back(x.type == Node::k_u64 ? static_cast<std::int64_t>(x.u) : x.i);
    };
    tree_.each(*dims, [&](const Node& d) {
      std::vector<std::int64_t> v;
      std::vector<std::vector<std::int64_t>> list;  // a tensor list's element shapes (OperatorCall::list_dims)
      if (d.type == Node::k_arr)
        tree_.each(d, [&](const Node& x) {
          if (x.type != Node::k_arr) return integers_of(x, v);
          list.emplace_back();
          tree_.each(x, [&](const Node& e) { integers_of(e, list.back()); });
        });
      if (!list.empty()) {  // one list at most, and no integers beside its shapes
        if (!op.list_dims.empty() || !v.empty()) sized = false;
        op.list_dims = std::move(list);
        v.clear();
      }
      op.dims.push_back(std::move(v));
    });
    if (!sized) return true;  // garbage, a second tensor list, or beyond any tensor: no sizes
    // a sparse operand (dimensions, no strides): not priced from shapes (OperatorIndex::add, split sparse_and_int8)
    if (const Node* strides = a_[a_Input_Strides]; strides && strides->type == Node::k_arr) {
      std::size_t i = 0;
      bool sparse = false;
      tree_.each(*strides, [&](const Node& st) {
        if (i < op.dims.size() && !op.dims[i].empty() && st.type == Node::k_arr && st.child == kNone) sparse = true;
        if (i < op.dims.size() && st.type == Node::k_arr) {  // an expanded view (stride 0) is read at its stored elements
          std::vector<std::int64_t> v;
          std::size_t children = 0;  // every child an integer, or none noted (as the checked reader)
          tree_.each(st, [&](const Node& x) {
            ++children;
            if (is_integer(&x)) v.push_back(x.type == Node::k_u64 ? static_cast<std::int64_t>(std::min<std::uint64_t>(x.u, 1u << 30)) : x.i);
          });
          if (v.size() == children) note_expanded_operand(op, i, v);
        }
        ++i;
      });
      if (sparse) return true;
    }
    op.name = std::string(name);
    auto strings = [&](int key, std::vector<std::string>& out) {
      const Node* list = a_[key];
      if (!list || list->type != Node::k_arr) return;
      tree_.each(*list, [&](const Node& x) { out.push_back(x.type == Node::k_str ? std::string(x.str) : std::string()); });
    };
    strings(a_Input_type, op.types);
    strings(a_Concrete_Inputs, op.concrete);
    t_->operators.add_call(external_id, std::move(op));
    return true;
  }

  // The checked reader's add_annotated_comm on the tree: the annotation and its inputs' bytes.
  void add_annotated_comm(const Range& r) {
    std::vector<std::vector<std::int64_t>> dims;
    std::vector<std::string> types;
    const Node* d = a_[a_Input_Dims];
    const Node* ty = a_[a_Input_type];
    bool integral = d && ty && d->type == Node::k_arr && ty->type == Node::k_arr;
    if (integral) {
      tree_.each(*d, [&](const Node& entry) {
        dims.emplace_back();
        if (entry.type != Node::k_arr) integral = false;
        else
          tree_.each(entry, [&](const Node& x) {
            if (!is_integer(&x)) integral = false;
            else dims.back().push_back(x.type == Node::k_u64 ? static_cast<std::int64_t>(std::min<std::uint64_t>(x.u, kMaxOperandSize + 1)) : x.i);
          });
      });
      tree_.each(*ty, [&](const Node& x) { types.push_back(x.type == Node::k_str ? std::string(x.str) : std::string()); });
    }
    t_->annotated_comms.push_back({r.t0_us, r.t1_us, host_tid(), r.name, integral ? annotated_input_bytes(dims, types) : -1.0});
  }

  // The event's host thread id, -1 when it is no integer (host_tid in the checked reader).
  long host_tid() const {
    const Node* tid = f_[f_tid];
    if (!is_integer(tid)) return -1;
    return tid->type == Node::k_u64 ? static_cast<long>(tid->u) : static_cast<long>(tid->i);
  }

  RawTrace* t_;
  const std::string& file_;
  od::parser parser_;
  EventTree tree_;
  const Node* f_[kEvFields];   // of the event being read
  const Node* a_[kArgFields];  // of its args
};

}  // namespace

namespace {

// The batches parsed on `threads` threads, each batch into a RawTrace of its own, merged into `t` in document
// order (append_events) as they are done, so that `t` ends as one reader's pass would leave it. The calling thread
// splits (and merges); at most 2 * threads batches are split and not yet merged (their text and records), so
// memory stays bounded. The first error (of the split or of any batch) stops the rest and is rethrown.
// Counts the streaming imports running at once in this process (a multi-rank job imports its files side by
// side), so that each takes its share of the cores for parsing rather than every one all of them.
class ConcurrentImport {
 public:
  ConcurrentImport() { ++running(); }
  ~ConcurrentImport() { --running(); }
  ConcurrentImport(const ConcurrentImport&) = delete;
  ConcurrentImport& operator=(const ConcurrentImport&) = delete;
  // The parse threads of an import: the cores over the imports running, 1 to kMaxParseThreads.
  std::size_t fair_share() const {
    const std::size_t n = std::max<std::size_t>(1, running().load());
    return std::clamp<std::size_t>(hardware_threads() / n, 1, kMaxParseThreads);
  }

 private:
  static std::atomic<std::size_t>& running() {
    static std::atomic<std::size_t> n{0};
    return n;
  }
};

std::string split_and_parse_in_parallel(ByteSource& source, RawTrace& t, const std::string& file, std::size_t threads,
                                        std::size_t batch_bytes) {
  struct Job {
    std::string text;
    std::size_t first = 0, count = 0, index = 0;
  };
  std::mutex m;
  std::condition_variable work_ready, progress;
  std::deque<Job> jobs;
  std::map<std::size_t, RawTrace> parsed;  // by batch index, not yet merged
  std::vector<std::string> spare;          // the texts of parsed batches, to be reused
  std::size_t split = 0, merged = 0;       // batches
  bool no_more = false;
  std::exception_ptr error;
  const std::size_t max_pending = 2 * threads;

  auto worker = [&] {
    EventReader reader(t, file);  // retargeted before each batch
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(m);
        work_ready.wait(lock, [&] { return error || no_more || !jobs.empty(); });
        if (error || jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      RawTrace piece;
      try {
        reader.read_into(piece);
        reader.batch(job.text, job.first, job.count);
        std::lock_guard<std::mutex> lock(m);
        parsed.emplace(job.index, std::move(piece));
        spare.push_back(std::move(job.text));
        progress.notify_all();
      } catch (...) {
        std::lock_guard<std::mutex> lock(m);
        if (!error) error = std::current_exception();
        work_ready.notify_all();
        progress.notify_all();
        return;
      }
    }
  };
  // Merges the batches parsed next in order; `until`: wait until that many are merged. Throws a worker's error.
  auto merge_ready = [&](std::unique_lock<std::mutex>& lock, std::size_t until) {
    for (;;) {
      if (error) std::rethrow_exception(error);
      auto next = parsed.find(merged);
      if (next == parsed.end()) {
        if (merged >= until) return;
        progress.wait(lock);
        continue;
      }
      RawTrace piece = std::move(next->second);
      parsed.erase(next);
      lock.unlock();
      append_events(t, std::move(piece));
      lock.lock();
      ++merged;
    }
  };

  std::vector<std::thread> pool;
  auto stop = [&] {
    {
      std::lock_guard<std::mutex> lock(m);
      no_more = true;
      work_ready.notify_all();
    }
    for (std::thread& th : pool) th.join();
  };
  std::string skeleton;
  try {
    for (std::size_t k = 0; k < threads; ++k) pool.emplace_back(worker);
    skeleton = split_trace_events(
        source,
        [&](std::string_view text, std::size_t first, std::size_t count) {
          std::unique_lock<std::mutex> lock(m);
          merge_ready(lock, split >= max_pending ? split - max_pending + 1 : 0);  // room for this batch
          std::string b;
          if (!spare.empty()) b = std::move(spare.back()), spare.pop_back();
          lock.unlock();
          b.clear();
          b.reserve(text.size() + 2 + kBatchPadding);
          b += '[';
          b.append(text);
          b += ']';
          lock.lock();
          jobs.push_back(Job{std::move(b), first, count, split++});
          work_ready.notify_one();
        },
        batch_bytes);
    std::unique_lock<std::mutex> lock(m);
    merge_ready(lock, split);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(m);
      if (!error) error = std::current_exception();
    }
    stop();
    throw;
  }
  stop();
  return skeleton;
}

}  // namespace

Workload import_streaming(ByteSource source, const std::string& file, const Classifier& classifier, ImportReport* report,
                          const StreamOptions& options) {
  RawTrace t;
  if (options.read_ahead_depth > 0 && !source.in_memory())
    source = ByteSource::read_ahead(std::move(source), std::size_t{1} << 20, options.read_ahead_depth);
  std::string skeleton;
  const ConcurrentImport counted;
  const std::size_t threads = options.parse_threads > 0 ? options.parse_threads : counted.fair_share();
  if (threads > 1) {
    skeleton = split_and_parse_in_parallel(source, t, file, threads, options.batch_bytes);
#if defined(__GLIBC__)
    // The parse threads' batches were freed into their own malloc arenas, which the building below (on this
    // thread) does not reuse: hand them back (an 836k-kernel trace peaked ~50 MB lower).
    malloc_trim(0);
#endif
  } else {
    EventReader reader(t, file);
    skeleton = split_trace_events_pipelined(
        source, [&](std::string_view text, std::size_t first, std::size_t count) { reader.batch(text, first, count); },
        options.split_depth, options.batch_bytes);
  }
  const Json doc = parse_json_text(skeleton, file, DuplicateKeys::last_wins);
  const TraceHeader header = read_header(doc, file);
  // The checked reader starts from distributedInfo's rank and reads comm records' "Rank" only while it is < 0;
  // distributedInfo may come after the events here.
  if (header.global_rank >= 0 || !t.rank_from_events) t.global_rank = header.global_rank;
  finish_events(t, file);
  return build_workload(t, header, classifier, file, report);
}

}  // namespace kineto

double simdjson_parse_only_s(const std::string& text, bool* ok) {
  simdjson::padded_string padded(text);
  simdjson::dom::parser parser;
  if (parser.allocate(padded.size()) != simdjson::SUCCESS) {
    if (ok) *ok = false;
    return 0;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto doc = parser.parse(padded);
  const auto t1 = std::chrono::steady_clock::now();
  if (ok) *ok = doc.error() == simdjson::SUCCESS;
  return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace dvfs
