#include "sim/core/json_util.hpp"

#include "sim/core/errors.hpp"

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <vector>

namespace dvfs {

Json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open file (expected a readable JSON file)");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), path);
}

Json parse_json_text(const std::string& text, const std::string& file) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InputError(file, "", std::string("malformed JSON (") + e.what() + ")");
  }
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

long JsonReader::integer(const char* key) const {
  const Json& j = raw(key);
  if (!j.is_number_integer()) fail(key, "expected an integer, got " + json_type_name(j));
  return j.get<long>();
}

long JsonReader::integer_or(const char* key, long fallback) const {
  return has(key) ? integer(key) : fallback;
}

std::string JsonReader::string(const char* key) const {
  const Json& j = raw(key);
  if (!j.is_string()) fail(key, "expected a string, got " + json_type_name(j));
  return j.get<std::string>();
}

std::string JsonReader::string_or(const char* key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
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
