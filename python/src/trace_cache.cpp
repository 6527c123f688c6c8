// This process's loaded traces (see trace_cache.hpp) and the bindings that hand one to another process.
#include "python/src/trace_cache.hpp"

#include "python/src/core_parts.hpp"

#include "models/src/model_registry.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/scenario_file.hpp"
#include "traces/src/workload_cache.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <list>
#include <sstream>

namespace py = pybind11;

namespace dvfs_py {

namespace {

// Size and modification time of a trace file, or of every file in a recording directory: a cached
// trace is reused only while this is unchanged.
std::string fingerprint(const std::string& path) {
  std::ostringstream os;
  auto add = [&os](const std::string& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) os << p << ':' << st.st_size << ':' << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec << ';';
  };
  add(path);
  if (dvfs::is_directory(path)) {
    if (DIR* d = ::opendir(path.c_str())) {
      std::vector<std::string> names;
      while (const dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
      ::closedir(d);
      std::sort(names.begin(), names.end());
      for (const auto& n : names)
        if (n != "." && n != "..") add(path + "/" + n);
    }
  }
  return os.str();
}

// What a loaded trace depends on: the recording GPU it is retargeted from, the model it is retargeted to, and
// every trace file (a multi-rank scenario's too) with its fingerprint.
std::string key_of(const dvfs::Scenario& sc, const dvfs::GpuModel& model) {
  std::string key = sc.trace_gpu + '|' + model.source_file();
  const std::vector<std::string> paths = sc.trace_paths.empty() ? std::vector<std::string>{sc.trace_path} : sc.trace_paths;
  for (const std::string& p : paths) key += '|' + p + '|' + fingerprint(p);
  return key;
}

// The last few traces loaded by this process, most recent first.
class TraceCache {
 public:
  std::shared_ptr<const dvfs::LoadedTrace> find(const std::string& key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    return nullptr;
  }
  std::shared_ptr<const dvfs::LoadedTrace> get(const dvfs::Scenario& sc, const dvfs::GpuModel& model) {
    return get(key_of(sc, model), sc, model);
  }
  // The same under its key_of(sc, model), known already.
  std::shared_ptr<const dvfs::LoadedTrace> get(const std::string& key, const dvfs::Scenario& sc, const dvfs::GpuModel& model) {
    if (auto t = find(key)) return t;
    auto t = std::make_shared<const dvfs::LoadedTrace>(dvfs::load_scenario_trace(sc, model));
    ++loads_;
    put(key, t);
    return t;
  }
  void put(const std::string& key, std::shared_ptr<const dvfs::LoadedTrace> t) {
    entries_.emplace_front(key, std::move(t));
    if (entries_.size() > kCapacity) entries_.pop_back();
  }
  void clear() { entries_.clear(); }
  std::size_t size() const { return entries_.size(); }
  std::uint64_t loads() const { return loads_; }

  std::uint64_t adopted = 0;

 private:
  static constexpr std::size_t kCapacity = 4;
  std::list<std::pair<std::string, std::shared_ptr<const dvfs::LoadedTrace>>> entries_;
  std::uint64_t loads_ = 0;
};

TraceCache& trace_cache() {
  static TraceCache c;
  return c;
}

// The trace of a replay or multi-rank scenario (JSON text), loaded through this process's cache, as
// (key, retargeted JSON text, bytes: the workload cache's entry encoding under that key, or None without
// `encode`: e.g. for processes forked from this one, which inherit the cache); None for other kinds.
py::object share_trace(const std::string& scenario_json, const std::string& file, const std::string& base_dir, bool encode) {
  const dvfs::Json doc = dvfs::parse_json_text(scenario_json, file);
  const dvfs::ScenarioKind kind = dvfs::scenario_kind(doc);
  if (kind != dvfs::ScenarioKind::replay && kind != dvfs::ScenarioKind::multi_rank)  // registered kinds are ScenarioKind::registered
    return py::none();
  SimulationLock lock;
  std::string key, retargeted, bytes;
  {
    py::gil_scoped_release no_gil;
    const dvfs::Scenario sc = dvfs::parse_scenario(doc, file, base_dir);
    const dvfs::GpuModel model = dvfs::load_gpu_model(sc.gpu, sc.file, "gpu");
    key = key_of(sc, model);
    const std::shared_ptr<const dvfs::LoadedTrace> t = trace_cache().get(key, sc, model);
    retargeted = t->retargeted.dump();
    if (encode) bytes = dvfs::encode_cached_import(key, t->workload, t->report);
  }
  return py::make_tuple(key, retargeted, encode ? py::object(py::bytes(bytes)) : py::object(py::none()));
}

// share_trace's bytes kept in this process's cache under their key (unless there already); false, keeping
// nothing, for bytes that are not an intact encoding of that key.
bool adopt_trace(const std::string& key, const std::string& retargeted, const py::bytes& data) {
  SimulationLock lock;
  if (trace_cache().find(key)) return true;
  std::string bytes = data;
  py::gil_scoped_release no_gil;
  dvfs::CachedImport c;
  if (!dvfs::decode_cached_import(bytes, key, c)) return false;
  auto t = std::make_shared<dvfs::LoadedTrace>();
  t->workload = std::move(c.workload);
  t->report = std::move(c.report);
  t->retargeted = dvfs::Json::parse(retargeted);
  trace_cache().put(key, std::move(t));
  ++trace_cache().adopted;
  return true;
}

}  // namespace

std::shared_ptr<const dvfs::LoadedTrace> cached_trace(const dvfs::Scenario& sc, const dvfs::GpuModel& model) {
  return trace_cache().get(sc, model);
}

void bind_trace_cache(py::module_& m) {
  m.def("clear_trace_cache", [] {
    SimulationLock lock;
    trace_cache().clear();
  });
  m.def("share_trace", &share_trace, py::arg("scenario_json"), py::arg("file"), py::arg("base_dir"), py::arg("encode") = true,
        "The trace of a replay scenario, loaded through this process's trace cache, as (key, retargeted JSON "
        "text, bytes) for adopt_trace in another process (bytes None without encode); None for other scenario kinds.");
  m.def("has_trace", [](const std::string& key) {
    SimulationLock lock;
    return trace_cache().find(key) != nullptr;
  });
  m.def("adopt_trace", &adopt_trace, py::arg("key"), py::arg("retargeted"), py::arg("data"),
        "Keeps share_trace's bytes in this process's trace cache; False (nothing kept) if they do not decode.");
  m.def("trace_cache_stats", [] {
    SimulationLock lock;
    py::dict d;
    d["loads"] = trace_cache().loads();
    d["adopted"] = trace_cache().adopted;
    d["entries"] = trace_cache().size();
    return d;
  }, "How often this process loaded a trace into its trace cache (a miss), adopted one, and how many it holds.");
}

}  // namespace dvfs_py
