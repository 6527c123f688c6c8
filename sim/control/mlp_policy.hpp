#pragma once
// A trained controller as data: a small multilayer perceptron in a JSON file (written by
// dvfs_sim.rl.export_policy from a PPO actor), evaluated deterministically (the actor's mean action).
//
//   {"format": "dvfs-sim-mlp-policy/1", "observation": [names], "action": [names],
//    "obs_mean": [...], "obs_std": [...],
//    "layers": [{"weight": [[out x in]], "bias": [out], "activation": "tanh" | "relu" | "linear"}, ...],
//    "action_span": {...}, "provenance": {...}}
// The observation and action names must be those of sim/control/observation.hpp: a file trained for
// another observation is refused with the file and field named.
#include "sim/core/json_util.hpp"

#include <string>
#include <vector>

namespace dvfs {

class MlpPolicy {
 public:
  static MlpPolicy load(const std::string& path, const std::vector<std::string>& observation,
                        const std::vector<std::string>& action);
  std::vector<double> act(const std::vector<double>& observation) const;  // clipped to [-1, 1]
  const Json& provenance() const { return provenance_; }
  const Json& action_spec() const { return action_spec_; }
  const std::string& file() const { return file_; }

 private:
  struct Layer {
    std::vector<std::vector<double>> w;
    std::vector<double> b;
    int activation = 0;  // 0 linear, 1 tanh, 2 relu
  };
  std::vector<Layer> layers_;
  std::vector<double> mean_, std_;
  Json provenance_, action_spec_;
  std::string file_;
};

}  // namespace dvfs
