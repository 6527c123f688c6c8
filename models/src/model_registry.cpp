#include "models/src/model_registry.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>

namespace dvfs {

std::string data_dir() {
  const char* env = std::getenv("DVFS_SIM_DATA");
  return env && *env ? std::string(env) : std::string(DVFS_DATA_DIR);
}

std::string models_dir() { return data_dir() + "/models/gpus"; }

std::vector<std::string> available_models() {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(models_dir().c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && ends_with(n, ".json")) out.push_back(n.substr(0, n.size() - 5));
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> installed_models() {
  const std::vector<std::string> names = available_models();
  if (names.empty()) {
    const std::string from = std::getenv("DVFS_SIM_DATA") && *std::getenv("DVFS_SIM_DATA") ? " (from $DVFS_SIM_DATA)" : "";
    if (!is_directory(data_dir()))
      throw InputError(data_dir(), "", std::string(file_exists(data_dir()) ? "not a directory" : "no such directory") +
                                           ": expected the data directory, holding models/gpus/<name>.json" + from);
    const std::string dir = models_dir();
    const std::string why = !file_exists(dir) ? "no such directory" : !is_directory(dir) ? "not a directory" : "no model files (*.json) in it";
    throw InputError(dir, "", why + ": expected the GPU model files <name>.json" + from);
  }
  return names;
}

std::string resolve_model_path(const std::string& name_or_path, const std::string& referring_file,
                               const std::string& field) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.find(".json") != std::string::npos) {
    std::string path = join_path(dirname_of(referring_file.empty() ? "." : referring_file), name_or_path);
    if (!file_exists(path)) throw InputError(referring_file, field, "GPU model file not found: " + path);
    return path;
  }
  std::string path = models_dir() + "/" + name_or_path + ".json";
  if (!file_exists(path)) {
    std::string list;
    for (const auto& n : available_models()) list += (list.empty() ? "" : ", ") + n;
    if (list.empty())
      throw InputError(referring_file, field,
                       "unknown GPU \"" + name_or_path + "\": no model files in " + models_dir() +
                           (std::getenv("DVFS_SIM_DATA") ? " (from $DVFS_SIM_DATA)" : ""));
    throw InputError(referring_file, field, "unknown GPU \"" + name_or_path + "\" (expected one of: " + list + ")");
  }
  return path;
}

GpuModel load_gpu_model(const std::string& name_or_path, const std::string& referring_file,
                        const std::string& field) {
  const std::string path = resolve_model_path(name_or_path, referring_file, field);
  GpuModel m = GpuModel::load(path);
  // A model found by name is models/gpus/<name>.json: a file whose "name" differs (a40.json saying "h200") was listed
  // under the other name, twice, and a scenario asking for a40 ran a model calling itself h200.
  const bool by_name = name_or_path.find('/') == std::string::npos && name_or_path.find(".json") == std::string::npos;
  if (by_name && m.name() != name_or_path)
    throw InputError(path, "name", "expected \"" + name_or_path + "\" (the file's name: a model in " + models_dir() +
                                       " is found by its file name), got \"" + m.name() + "\"");
  return m;
}

}  // namespace dvfs
