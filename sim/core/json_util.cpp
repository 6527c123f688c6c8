#include "sim/core/json_util.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <sys/stat.h>
#include <unordered_set>
#include <vector>

namespace dvfs {

Json read_json_file(const std::string& path) {
  require_regular_file(path, "a readable JSON file");
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open file (expected a readable JSON file)");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), path);
}

void require_regular_file(const std::string& path, const std::string& expected) {
  struct stat st {};
  if (path.empty()) throw InputError("(empty path)", "", "expected " + expected + ", got an empty file name");
  if (::stat(path.c_str(), &st) != 0) throw InputError(path, "", "cannot open file: no such file (expected " + expected + ")");
  if (S_ISDIR(st.st_mode)) throw InputError(path, "", "is a directory (expected " + expected + ")");
  if (!S_ISREG(st.st_mode)) throw InputError(path, "", "is not a regular file (a device, pipe or socket; expected " + expected + ")");
}

namespace {

// Builds the document through nlohmann's (iterative) SAX parser, keeping the JSON path of the value
// being read so that an error names its field, and refusing nesting deeper than kMaxJsonDepth as soon
// as it is opened.
class CheckedDomBuilder {
 public:
  CheckedDomBuilder(Json& root, const std::string& file, bool refuse_duplicates)
      : dom_(root, true), file_(file), refuse_duplicates_(refuse_duplicates) {}

  bool null() { return element(), dom_.null(); }
  bool boolean(bool v) { return element(), dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return element(), dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return element(), dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) { return element(), dom_.number_float(v, s); }
  bool string(Json::string_t& v) { return element(), dom_.string(v); }
  bool binary(Json::binary_t& v) { return element(), dom_.binary(v); }
  bool start_object(std::size_t n) { return open(false), dom_.start_object(n); }
  bool key(Json::string_t& k) {
    Frame& f = frames_.back();
    f.key = k;
    // A key given twice: nlohmann keeps the last one, so `"policy": "native", "policy": "max"` ran max without a word.
    if (refuse_duplicates_ && !f.seen.insert(k).second)
      throw InputError(file_, clipped(path(false)), "duplicate key (expected each key once in an object; the last one would silently win)");
    return dom_.key(k);
  }
  bool end_object() { return frames_.pop_back(), dom_.end_object(); }
  bool start_array(std::size_t n) { return open(true), dom_.start_array(n); }
  bool end_array() { return frames_.pop_back(), dom_.end_array(); }

  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& token, const Exception& e) {
    const std::string at = path(true);
    if (e.id == 406)  // nlohmann's out_of_range.406: a number beyond a double's range
      throw InputError(file_, at.empty() ? "(top level)" : at,
                       "number " + token + " is out of range (expected a finite number, |x| < 1.8e308)");
    throw InputError(file_, "", std::string("malformed JSON") + (at.empty() ? "" : " in " + at) + " (" + e.what() + ")");
  }

 private:
  struct Frame {
    bool array;
    std::size_t next = 0;  // elements started (arrays)
    std::string key;       // the last key read (objects)
    std::unordered_set<std::string> seen;  // every key read (objects)
  };

  void element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next;
  }
  void open(bool array) {
    element();
    if (frames_.size() >= kMaxJsonDepth)
      throw InputError(file_, clipped(path(false)), "nested deeper than " + std::to_string(kMaxJsonDepth) +
                                               " levels (expected at most " + std::to_string(kMaxJsonDepth) +
                                               " levels of objects and arrays)");
    frames_.push_back({array, 0, {}, {}});
  }
  // A path cut to its first 80 and last 20 characters (one of 64 levels can be long).
  static std::string clipped(const std::string& p) {
    if (p.empty()) return "(top level)";
    return p.size() <= 110 ? p : p.substr(0, 80) + "..." + p.substr(p.size() - 20);
  }
  // The path of the value being read; `pending`: the innermost array's next element is not started yet.
  std::string path(bool pending) const {
    std::string p;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      const bool innermost = i + 1 == frames_.size();
      if (f.array) {
        const std::size_t idx = innermost && pending ? f.next : (f.next > 0 ? f.next - 1 : 0);
        p += "[" + std::to_string(idx) + "]";
      } else if (!f.key.empty() || !innermost) {
        p += (p.empty() ? "" : ".") + f.key;
      }
    }
    return p;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  const std::string& file_;
  bool refuse_duplicates_;
  std::vector<Frame> frames_;
};

}  // namespace

Json parse_json_text(const std::string& text, const std::string& file, DuplicateKeys duplicates) {
  Json doc;
  CheckedDomBuilder builder(doc, file, duplicates == DuplicateKeys::refuse);
  Json::sax_parse(text, &builder);
  return doc;
}

long checked_integer(const Json& j, const std::string& file, const std::string& field, long lo, long hi,
                     bool digits_in_string) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  auto out_of_range = [&](const std::string& got) -> long {
    throw InputError(file, field, "expected an integer in " + range + ", got " + got);
  };
  if (j.is_number_unsigned()) {
    const auto v = j.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(hi) || (lo > 0 && v < static_cast<std::uint64_t>(lo))) return out_of_range(std::to_string(v));
    return static_cast<long>(v);
  }
  if (j.is_number_integer()) {
    const auto v = j.get<std::int64_t>();
    if (v < lo || v > hi) return out_of_range(std::to_string(v));
    return static_cast<long>(v);
  }
  if (j.is_number_float()) {
    const double v = j.get<double>();
    // Compared as doubles before any conversion: a float outside [lo, hi] never reaches static_cast.
    if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi))) return out_of_range(j.dump());
    if (v != std::floor(v)) throw InputError(file, field, "expected an integer, got " + j.dump());
    return static_cast<long>(v);
  }
  if (digits_in_string && j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    const auto pos = s.find_first_of("0123456789");
    if (pos != std::string::npos) {
      const auto end = s.find_first_not_of("0123456789", pos);
      const std::string digits = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      const std::string shown = "\"" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "\"";
      if (digits.size() > 18) return out_of_range(shown);
      const long v = std::stol(digits);  // at most 18 digits: never overflows
      if (v < lo || v > hi) return out_of_range(shown);
      return v;
    }
  }
  throw InputError(file, field, "expected an integer in " + range + ", got " + json_type_name(j));
}

bool is_json_object_with_key(const std::string& path, const char* key) {
  if (!file_exists(path) || is_directory(path)) return false;
  try {
    const Json doc = read_json_file(path);
    return doc.is_object() && doc.contains(key);
  } catch (const InputError&) {
    return false;
  }
}

std::string dirname_of(const std::string& path) {
  auto pos = path.find_last_of('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

std::string join_path(const std::string& dir, const std::string& rel) {
  if (rel.empty() || rel[0] == '/' || dir.empty() || dir == ".") return rel;
  return dir + "/" + rel;
}

std::string normalize_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream is(path);
  while (std::getline(is, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") parts.pop_back();
    else parts.push_back(part);
  }
  std::string out = !path.empty() && path[0] == '/' ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out.empty() ? "." : out;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string json_type_name(const Json& j) {
  if (j.is_number()) return "number";
  return j.type_name();
}

JsonReader::JsonReader(const Json& node, std::string file, std::string path)
    : node_(node), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.is_object() && !node_.is_array())
    throw InputError(file_, path_.empty() ? "(top level)" : path_,
                     "expected an object, got " + json_type_name(node_));
}

std::string JsonReader::field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

void JsonReader::fail(const char* key, const std::string& problem) const {
  throw InputError(file_, key ? field(key) : path_, problem);
}

void JsonReader::only_keys(std::initializer_list<const char*> allowed) const {
  if (!node_.is_object())
    throw InputError(file_, path_.empty() ? "(top level)" : path_, "expected an object, got " + json_type_name(node_));
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok) {
      std::string list;
      for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
      throw InputError(file_, field(it.key().c_str()), "unknown key (expected one of: " + list + ")");
    }
  }
}

bool JsonReader::has(const char* key) const { return node_.is_object() && node_.contains(key); }

const Json& JsonReader::raw(const char* key) const {
  if (!has(key)) fail(key, "missing required key");
  return node_.at(key);
}

JsonReader JsonReader::child(const char* key) const {
  const Json& j = raw(key);
  if (!j.is_object() && !j.is_array()) fail(key, "expected an object or array, got " + json_type_name(j));
  return JsonReader(j, file_, field(key));
}

JsonReader JsonReader::at(std::size_t index) const {
  const Json& j = node_.at(index);
  return JsonReader(j, file_, path_ + "[" + std::to_string(index) + "]");
}

std::size_t JsonReader::size() const { return node_.size(); }

double JsonReader::number(const char* key) const {
  const Json& j = raw(key);
  if (!j.is_number()) fail(key, "expected a number, got " + json_type_name(j));
  return j.get<double>();
}

double JsonReader::number_or(const char* key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

double JsonReader::positive(const char* key) const {
  double v = number(key);
  if (!(v > 0)) fail(key, "expected a positive number, got " + std::to_string(v));
  return v;
}

double JsonReader::non_negative(const char* key) const {
  double v = number(key);
  if (!(v >= 0)) fail(key, "expected a number >= 0, got " + std::to_string(v));
  return v;
}

double JsonReader::number_in(const char* key, double lo, double hi, const char* unit) const {
  const double v = number(key);
  if (!(v >= lo && v <= hi)) {
    std::ostringstream os;
    os << "expected " << lo << " to " << hi << " " << unit << " (README \"Limits and bad input\"), got " << v;
    fail(key, os.str());
  }
  return v;
}

long JsonReader::integer(const char* key) const {
  const Json& j = raw(key);
  if (!j.is_number_integer()) fail(key, "expected an integer, got " + json_type_name(j));
  return checked_integer(j, file_, field(key), std::numeric_limits<long>::min(), std::numeric_limits<long>::max());
}

long JsonReader::integer_or(const char* key, long fallback) const {
  return has(key) ? integer(key) : fallback;
}

long JsonReader::integer_in(const char* key, long lo, long hi) const {
  const Json& j = raw(key);
  if (!j.is_number_integer()) fail(key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + json_type_name(j));
  return checked_integer(j, file_, field(key), lo, hi);
}

long JsonReader::integer_in_or(const char* key, long lo, long hi, long fallback) const {
  return has(key) ? integer_in(key, lo, hi) : fallback;
}

std::string JsonReader::string(const char* key) const {
  const Json& j = raw(key);
  if (!j.is_string()) fail(key, "expected a string, got " + json_type_name(j));
  return j.get<std::string>();
}

std::string JsonReader::string_or(const char* key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

std::vector<std::string> JsonReader::string_list(const char* key, const char* what) const {
  const Json& list = raw(key);
  if (!list.is_array() || list.empty()) fail(key, std::string("expected a non-empty list of ") + what);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string() || list[i].get<std::string>().empty())
      fail(key, std::string("expected ") + what + " (element " + std::to_string(i) + " is not a non-empty string)");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

bool JsonReader::boolean_or(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const Json& v = raw(key);
  if (!v.is_boolean()) fail(key, "expected true or false, got " + json_type_name(v));
  return v.get<bool>();
}

void set_provenance(Json& provenance, const std::string& ptr, const std::string& source, const std::string& ref) {
  std::vector<std::string> stale;
  for (auto it = provenance.begin(); it != provenance.end(); ++it)
    if (it.key().size() > ptr.size() && it.key().compare(0, ptr.size() + 1, ptr + "/") == 0) stale.push_back(it.key());
  for (const auto& k : stale) provenance.erase(k);
  provenance[ptr] = {{"source", source}, {"ref", ref}};
}

}  // namespace dvfs
