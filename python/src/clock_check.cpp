#include "python/src/core_parts.hpp"

namespace dvfs_py {

std::mutex& simulation_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace dvfs_py
