#include "traces/src/nsys/nsys_importer.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/text_format.hpp"
#include "traces/src/kineto_raw.hpp"

#include <sqlite3.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <unordered_map>

namespace dvfs {

namespace {

// The open database and the file name errors carry.
class Db {
 public:
  explicit Db(const std::string& path) : path_(path) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
      sqlite3_close(db);
      throw InputError(path, "", "cannot open as an SQLite database (" + why + ")");
    }
    db_.reset(db);
  }
  const std::string& path() const { return path_; }
  bool has_table(const std::string& table) const { return !columns(table).empty(); }
  std::set<std::string> columns(const std::string& table) const {
    std::set<std::string> out;
    Stmt st(*this, "PRAGMA table_info(\"" + table + "\")");
    while (st.step()) out.insert(st.text(1));
    return out;
  }
  // Throws unless `table` has every column of `required`.
  void require(const std::string& table, const std::vector<std::string>& required) const {
    const std::set<std::string> cols = columns(table);
    if (cols.empty()) throw InputError(path_, table, "missing table: expected an `nsys export --type sqlite` file (docs/nsys-import.md)");
    for (const std::string& c : required)
      if (!cols.count(c)) throw InputError(path_, table + "." + c, "missing column (docs/nsys-import.md lists the columns read)");
  }

  class Stmt {
   public:
    Stmt(const Db& db, const std::string& sql) : db_(db) {
      if (sqlite3_prepare_v2(db.db_.get(), sql.c_str(), -1, &st_, nullptr) != SQLITE_OK)
        throw InputError(db.path_, "", std::string("cannot read the database (") + sqlite3_errmsg(db.db_.get()) + ")");
    }
    ~Stmt() { sqlite3_finalize(st_); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    bool step() {
      const int rc = sqlite3_step(st_);
      if (rc == SQLITE_ROW) return true;
      if (rc == SQLITE_DONE) return false;
      throw InputError(db_.path_, "", std::string("cannot read the database (") + sqlite3_errmsg(db_.db_.get()) + ")");
    }
    bool null(int i) const { return sqlite3_column_type(st_, i) == SQLITE_NULL; }
    long long integer(int i) const { return sqlite3_column_int64(st_, i); }
    std::string text(int i) const {
      const unsigned char* t = sqlite3_column_text(st_, i);
      return t ? reinterpret_cast<const char*>(t) : "";
    }
    // An integer column that must hold one: InputError naming table.column and the row otherwise.
    long long required_integer(int i, const std::string& field, long long row) const {
      if (sqlite3_column_type(st_, i) != SQLITE_INTEGER)
        throw InputError(db_.path_, field, "expected an integer, row " + std::to_string(row));
      return integer(i);
    }

   private:
    const Db& db_;
    sqlite3_stmt* st_ = nullptr;
  };

 private:
  struct Close {
    void operator()(sqlite3* d) const { sqlite3_close(d); }
  };
  std::string path_;
  std::unique_ptr<sqlite3, Close> db_;
};

std::unordered_map<long long, std::string> string_ids(const Db& db) {
  std::unordered_map<long long, std::string> ids;
  if (!db.has_table("StringIds")) return ids;
  db.require("StringIds", {"id", "value"});
  Db::Stmt st(db, "SELECT id, value FROM StringIds");
  while (st.step()) ids.emplace(st.integer(0), st.text(1));
  return ids;
}

// "col" when the table has it, else "NULL" (optional columns).
std::string col_or_null(const std::set<std::string>& cols, const char* c) { return cols.count(c) ? std::string("\"") + c + "\"" : "NULL"; }

struct Converter {
  const Db& db;
  std::unordered_map<long long, std::string> strings;
  Json events = Json::array();
  std::set<long long> devices;

  std::string string_of(long long id, const std::string& field) const {
    auto it = strings.find(id);
    if (it == strings.end()) throw InputError(db.path(), field, "expected an id of StringIds, got " + std::to_string(id));
    return it->second;
  }

  void device_event(const char* cat, const std::string& name, long long start, long long end, long long device, long long stream,
                    long long correlation, Json args, const std::string& table, long long row) {
    if (end < start) throw InputError(db.path(), table + ".end", "expected end >= start, row " + std::to_string(row));
    args["device"] = device;
    args["stream"] = stream;
    args["correlation"] = correlation;
    devices.insert(device);
    events.push_back({{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", device}, {"tid", stream},
                      {"ts", static_cast<double>(start) / 1e3}, {"dur", static_cast<double>(end - start) / 1e3}, {"args", std::move(args)}});
  }

  void kernels() {
    const std::string t = "CUPTI_ACTIVITY_KIND_KERNEL";
    db.require(t, {"start", "end", "deviceId", "streamId", "correlationId"});
    const std::set<std::string> c = db.columns(t);
    const char* name_col = c.count("demangledName") ? "demangledName" : c.count("shortName") ? "shortName" : nullptr;
    if (!name_col) throw InputError(db.path(), t + ".demangledName", "missing column: expected demangledName or shortName (StringIds ids)");
    Db::Stmt st(db, "SELECT start, end, deviceId, streamId, correlationId, \"" + std::string(name_col) + "\", " + col_or_null(c, "gridX") + ", " +
                        col_or_null(c, "gridY") + ", " + col_or_null(c, "gridZ") + ", " + col_or_null(c, "blockX") + ", " + col_or_null(c, "blockY") +
                        ", " + col_or_null(c, "blockZ") + ", " + col_or_null(c, "registersPerThread") + ", " + col_or_null(c, "staticSharedMemory") +
                        ", " + col_or_null(c, "dynamicSharedMemory") + " FROM " + t + " ORDER BY start");
    for (long long row = 0; st.step(); ++row) {
      const std::string name = string_of(st.required_integer(5, t + "." + name_col, row), t + "." + name_col);
      Json args = {{"grid", {st.integer(6), st.integer(7), st.integer(8)}}, {"block", {st.integer(9), st.integer(10), st.integer(11)}},
                   {"registers per thread", st.integer(12)}, {"shared memory", st.integer(13) + st.integer(14)}};
      device_event("kernel", name, st.required_integer(0, t + ".start", row), st.required_integer(1, t + ".end", row),
                   st.required_integer(2, t + ".deviceId", row), st.required_integer(3, t + ".streamId", row), st.integer(4), std::move(args), t, row);
    }
  }

  // Memcpy (named by direction, as Kineto names them) and memset activities, where the tables exist.
  void copies() {
    static const std::unordered_map<long long, const char*> kinds = {{1, "HtoD"}, {2, "DtoH"}, {3, "HtoA"}, {4, "AtoH"}, {5, "AtoA"},
                                                                      {6, "AtoD"}, {7, "DtoA"}, {8, "DtoD"}, {9, "HtoH"}, {10, "PtoP"}};
    for (const char* t : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
      if (!db.has_table(t)) continue;
      const bool memcpy = std::strcmp(t, "CUPTI_ACTIVITY_KIND_MEMCPY") == 0;
      db.require(t, {"start", "end", "deviceId", "streamId", "correlationId", "bytes"});
      const std::set<std::string> c = db.columns(t);
      Db::Stmt st(db, std::string("SELECT start, end, deviceId, streamId, correlationId, bytes, ") + (memcpy ? col_or_null(c, "copyKind") : "NULL") +
                          " FROM " + t + " ORDER BY start");
      for (long long row = 0; st.step(); ++row) {
        const long long start = st.required_integer(0, std::string(t) + ".start", row), end = st.required_integer(1, std::string(t) + ".end", row);
        const long long bytes = checked_bytes(st.required_integer(5, std::string(t) + ".bytes", row), start, end, t, row);
        auto kind = kinds.find(st.integer(6));
        const std::string name = memcpy ? std::string("Memcpy ") + (kind != kinds.end() ? kind->second : "") : "Memset (Device)";
        device_event(memcpy ? "gpu_memcpy" : "gpu_memset", name, start, end, st.required_integer(2, std::string(t) + ".deviceId", row),
                     st.required_integer(3, std::string(t) + ".streamId", row), st.integer(4), {{"bytes", bytes}}, t, row);
      }
    }
  }

  // A copy's or fill's bytes, named by table.column and row (the Kineto reader would name the converted event):
  // not negative, and what a copy engine can move (copy_bytes_problem, as for Kineto traces).
  long long checked_bytes(long long bytes, long long start, long long end, const char* table, long long row) const {
    const std::string field = std::string(table) + ".bytes", at_row = ", row " + std::to_string(row);
    if (bytes < 0) throw InputError(db.path(), field, "expected bytes >= 0, got " + std::to_string(bytes) + at_row);
    const double dur_us = end >= start ? static_cast<double>(end - start) / 1e3 : 0.0;
    const std::string problem = kineto::copy_bytes_problem(static_cast<double>(bytes), dur_us);
    if (!problem.empty()) throw InputError(db.path(), field, problem + at_row);
    return bytes;
  }

  // CUDA runtime calls: the host time each launch (by correlation id) was made at.
  void launches() {
    const std::string t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!db.has_table(t)) return;
    db.require(t, {"start", "end", "correlationId"});
    Db::Stmt st(db, "SELECT start, end, correlationId, rowid FROM " + t);
    while (st.step()) {
      // a text or NULL read as 0 put every launch at time 0 or on correlation 0: no step found a kernel
      const long long row = st.integer(3);
      const long long start = st.required_integer(0, t + ".start", row), end = st.required_integer(1, t + ".end", row);
      if (end < start) throw InputError(db.path(), t + ".end", "expected end >= start, row " + std::to_string(row));
      events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunch"}, {"ts", static_cast<double>(start) / 1e3},
                        {"dur", static_cast<double>(end - start) / 1e3},
                        {"args", {{"correlation", st.required_integer(2, t + ".correlationId", row)}}}});
    }
  }

  // NVTX push/pop (59) and start/end (60) ranges, text inline or through StringIds; marks and open ranges are skipped.
  void nvtx() {
    const std::string t = "NVTX_EVENTS";
    if (!db.has_table(t)) return;
    db.require(t, {"start", "end", "eventType"});
    const std::set<std::string> c = db.columns(t);
    {  // an eventType that is no integer was filtered out with the marks: its ranges vanished without a word
      Db::Stmt bad(db, "SELECT rowid FROM " + t + " WHERE typeof(eventType) != 'integer' LIMIT 1");
      if (bad.step()) throw InputError(db.path(), t + ".eventType", "expected an integer (59 push/pop, 60 start/end, ...), row " +
                                                                         std::to_string(bad.integer(0)));
    }
    Db::Stmt st(db, "SELECT start, end, eventType, " + col_or_null(c, "text") + ", " + col_or_null(c, "textId") + ", rowid FROM " + t +
                        " WHERE eventType IN (59, 60) AND end IS NOT NULL ORDER BY start");
    while (st.step()) {
      const long long row = st.integer(5);
      const std::string text = !st.null(3) ? st.text(3) : !st.null(4) ? string_of(st.integer(4), t + ".textId") : "";
      if (text.empty()) continue;
      const long long start = st.required_integer(0, t + ".start", row), end = st.required_integer(1, t + ".end", row);
      if (end < start) throw InputError(db.path(), t + ".end", "expected end >= start, row " + std::to_string(row));
      events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", text}, {"ts", static_cast<double>(start) / 1e3},
                        {"dur", static_cast<double>(end - start) / 1e3}});
    }
  }

  Json device_properties() const {
    Json out = Json::array();
    std::unordered_map<long long, std::string> names;
    if (db.has_table("TARGET_INFO_GPU") && db.columns("TARGET_INFO_GPU").count("name") && db.columns("TARGET_INFO_GPU").count("id")) {
      Db::Stmt st(db, "SELECT id, name FROM TARGET_INFO_GPU");
      while (st.step()) names[st.integer(0)] = st.text(1);
    }
    for (long long d : devices) out.push_back({{"id", d}, {"name", names.count(d) ? names[d] : ""}});
    return out;
  }
};

}  // namespace

bool is_nsys_sqlite(const std::string& path) {
  if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep")) return true;
  std::ifstream f(path, std::ios::binary);
  char head[16] = {};
  f.read(head, sizeof head);
  return f.gcount() == 16 && std::memcmp(head, "SQLite format 3", 16) == 0;
}

Workload import_nsys_sqlite(const std::string& path, const Classifier& classifier, ImportReport* report) {
  if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep"))
    throw InputError(path, "", "an Nsight Systems report: expected its SQLite export (nsys export --type sqlite " + path + ")");
  const Db db(path);
  Converter c{db, string_ids(db), Json::array(), {}};
  c.kernels();
  c.copies();
  c.launches();
  c.nvtx();
  const Json doc = {{"schemaVersion", 1}, {"deviceProperties", c.device_properties()}, {"traceEvents", std::move(c.events)}};
  ImportReport rep;
  Workload wl = import_kineto_text(doc.dump(), path, classifier, &rep);
  rep.schema = "nsys-sqlite";
  if (report) *report = rep;
  return wl;
}

}  // namespace dvfs
