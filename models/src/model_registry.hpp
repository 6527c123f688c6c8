#pragma once
// Finds GPU model files by name: models/gpus/<name>.json under the data directory (the source tree
// the binary was built from, or $DVFS_SIM_DATA when set).
#include "models/src/gpu_model.hpp"

#include <string>
#include <vector>

namespace dvfs {

std::string data_dir();
std::string models_dir();
std::vector<std::string> available_models();
// available_models(), or an InputError naming the models directory when it holds none (missing, not a directory,
// empty): what `dvfs-sim models` lists (an empty $DVFS_SIM_DATA printed nothing and exited 0).
std::vector<std::string> installed_models();
std::string resolve_model_path(const std::string& name_or_path, const std::string& referring_file = "",
                               const std::string& field = "gpu");
// `name_or_path` is a model name ("h200") or a path to a model JSON file. A model found by name must say that name
// ("name" in models/gpus/<name>.json): an InputError naming the file and field otherwise.
GpuModel load_gpu_model(const std::string& name_or_path, const std::string& referring_file = "",
                        const std::string& field = "gpu");

}  // namespace dvfs
