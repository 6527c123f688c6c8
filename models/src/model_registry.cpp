#include "models/src/model_registry.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"

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
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) out.push_back(n.substr(0, n.size() - 5));
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
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
  return GpuModel::load(resolve_model_path(name_or_path, referring_file, field));
}

}  // namespace dvfs
