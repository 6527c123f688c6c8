#include "python/src/core_parts.hpp"

#include "sim/core/errors.hpp"

#include <sstream>

namespace dvfs_py {

std::mutex& simulation_mutex() {
  static std::mutex m;
  return m;
}

int sm_index_or_throw(const dvfs::GpuModel& model, double mhz, const std::string& who, const std::string& field) {
  const int i = model.sm_index(mhz);
  if (i >= 0) return i;
  std::ostringstream os;
  os << "SM clock " << mhz << " MHz is not supported by " << model.name() << " (expected one of "
     << model.describe_sm_clocks() << ")";
  throw dvfs::InputError(who, field, os.str());
}

int mem_index_or_throw(const dvfs::GpuModel& model, double mhz, const std::string& who, const std::string& field) {
  const int i = model.mem_index(mhz);
  if (i >= 0) return i;
  std::ostringstream os;
  os << "memory clock " << mhz << " MHz is not supported by " << model.name() << " (expected one of";
  for (double m : model.mem_clocks_mhz()) os << " " << m;
  os << " MHz)";
  throw dvfs::InputError(who, field, os.str());
}

}  // namespace dvfs_py
