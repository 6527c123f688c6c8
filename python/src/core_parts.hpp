#pragma once
// Pieces of the dvfs_sim._core module, one file each (bindings.cpp assembles them).
#include "models/src/gpu_model.hpp"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <mutex>
#include <string>
#include <vector>

namespace dvfs_py {

void bind_gpu_model(pybind11::module_& m);  // gpu_model_binding.cpp
void bind_simulation(pybind11::module_& m); // simulation_binding.cpp
void bind_control(pybind11::module_& m);    // control_binding.cpp
void bind_trace_cache(pybind11::module_& m); // trace_cache.cpp: clear_trace_cache, share_trace, adopt_trace, ...

// One scenario (JSON text; relative paths against base_dir) end to end: returns (summary JSON text,
// timeline dict of numpy arrays or None). `policy` None keeps the scenario's policy; otherwise a Python
// policy object replaces it. `cache_trace` reuses this process's recently loaded traces.
pybind11::tuple simulate_scenario(const std::string& scenario_json, const std::string& file, const std::string& base_dir,
                                  const std::string& output_dir, bool want_timeline, const pybind11::object& policy,
                                  bool cache_trace);

// A copy of a vector as a numpy array.
template <class T>
pybind11::array_t<T> to_array(const std::vector<T>& v) {
  return pybind11::array_t<T>(static_cast<pybind11::ssize_t>(v.size()), v.data());
}

// SimGrid keeps global state, so one process runs one simulation at a time; Python threads (a Dask
// worker with several threads, a notebook) queue here instead of corrupting each other.
std::mutex& simulation_mutex();

// Holds the simulation mutex; waits for it without the GIL so that another thread's simulation that
// needs Python (a Python policy) can finish.
class SimulationLock {
 public:
  SimulationLock() {
    pybind11::gil_scoped_release no_gil;
    lock_ = std::unique_lock<std::mutex>(simulation_mutex());
  }

 private:
  std::unique_lock<std::mutex> lock_;
};


}  // namespace dvfs_py
