#pragma once
// Strict readers for JSON documents: every key is checked, every type is checked, and a failure
// names the file and the JSON path of the field.
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>

namespace dvfs {

using Json = nlohmann::json;

// Every file the tool reads goes through these two: malformed JSON, a number that overflows a double
// (1e400) and nesting deeper than kMaxJsonDepth (sim/core/limits.hpp) are InputErrors naming the file and the JSON path.
Json read_json_file(const std::string& path);
// JSON text that came from `file` (malformed JSON is an InputError naming it).
// Duplicate keys: refused in the files we define (scenarios, models, plans, policies), where the last one silently
// won; kept (last wins, as Python's json and nlohmann do) in recorded traces, which third-party tools write.
enum class DuplicateKeys { refuse, last_wins };
Json parse_json_text(const std::string& text, const std::string& file, DuplicateKeys duplicates = DuplicateKeys::refuse);

// `j` as an integer in [lo, hi], or an InputError naming `file` and `field`: an integer, a whole float
// (3.0, 1e3), or with `digits_in_string` a string whose first run of digits is the value ("stream 7").
long checked_integer(const Json& j, const std::string& file, const std::string& field, long lo, long hi,
                     bool digits_in_string = false);
// Whether `path` is a readable JSON object with top-level `key` (false for anything else: no error).
bool is_json_object_with_key(const std::string& path, const char* key);
std::string dirname_of(const std::string& path);
std::string join_path(const std::string& dir, const std::string& rel);
// Lexically removes "." and "dir/.." components (no file-system access).
std::string normalize_path(const std::string& path);
bool file_exists(const std::string& path);
bool is_directory(const std::string& path);
bool is_regular_file(const std::string& path);  // not a directory, device, pipe or socket
// An InputError unless `path` is a regular file (a directory, /dev/zero or a FIFO read for ever or until memory ran
// out); `expected` says what the file should be ("a JSON file").
void require_regular_file(const std::string& path, const std::string& expected);

class JsonReader {
 public:
  JsonReader(const Json& node, std::string file, std::string path);

  // Rejects keys not in `allowed`, so a typo never goes silently unused.
  void only_keys(std::initializer_list<const char*> allowed) const;
  bool has(const char* key) const;
  JsonReader child(const char* key) const;  // required object
  JsonReader at(std::size_t index) const;   // element of an array node

  double number(const char* key) const;
  double number_or(const char* key, double fallback) const;
  double positive(const char* key) const;
  double non_negative(const char* key) const;
  // A number in [lo, hi]; the message gives both limits and the unit (e.g. "W", "s"; a model's or scenario's limit).
  double number_in(const char* key, double lo, double hi, const char* unit) const;
  long integer(const char* key) const;  // any integer a long holds
  long integer_or(const char* key, long fallback) const;
  long integer_in(const char* key, long lo, long hi) const;  // an integer in [lo, hi]
  long integer_in_or(const char* key, long lo, long hi, long fallback) const;
  std::string string(const char* key) const;
  std::string string_or(const char* key, const std::string& fallback) const;
  bool boolean_or(const char* key, bool fallback) const;  // true / false only
  // A required non-empty list of non-empty strings; `what` names them in the messages ("expected a non-empty list of
  // WHAT", "expected WHAT (element i is not a non-empty string)").
  std::vector<std::string> string_list(const char* key, const char* what) const;
  const Json& raw(const char* key) const;  // required, any type
  std::size_t size() const;                // array or object size
  bool is_array() const { return node_.is_array(); }
  bool is_object() const { return node_.is_object(); }

  const Json& node() const { return node_; }
  const std::string& file() const { return file_; }
  std::string field(const char* key) const;  // JSON path of a child, for error messages
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const char* key, const std::string& problem) const;

 private:
  const Json& node_;
  std::string file_;
  std::string path_;
};

std::string json_type_name(const Json& j);

// Sets a model file's provenance entry for the JSON pointer `ptr` and drops the more specific
// entries below it, which would otherwise override the new one.
void set_provenance(Json& provenance, const std::string& ptr, const std::string& source, const std::string& ref);

}  // namespace dvfs
