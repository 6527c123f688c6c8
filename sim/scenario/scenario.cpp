#include "sim/scenario/scenario.hpp"

#include "models/src/model_registry.hpp"

namespace dvfs {

const char* to_string(EngineMode m) { return m == EngineMode::event ? "event" : "local-loop"; }

std::string default_scenario_path() { return data_dir() + "/scenarios/default.json"; }

ClusterSpec cluster_for(const Scenario& sc, const GpuModel& model) {
  return resolve_bandwidths(sc.cluster, model.specs().interconnect_gbs * 1e9, model.specs().nic_gbs * 1e9);
}

}  // namespace dvfs
