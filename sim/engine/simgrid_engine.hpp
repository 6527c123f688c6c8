#pragma once
// A fresh SimGrid engine for one simulation, with SimGrid's own logging silenced. SimGrid keeps global
// state: create one per simulation and delete it afterwards. Its clock carries on across engines in
// one process, so actors measure time from the engine's clock at their start.
#include <simgrid/s4u.hpp>

#include <memory>

namespace dvfs {

inline std::unique_ptr<simgrid::s4u::Engine> make_simgrid_engine() {
  int argc = 2;
  char arg0[] = "dvfs-sim";
  char arg1[] = "--log=root.thresh:critical";
  char* argv[] = {arg0, arg1, nullptr};
  return std::make_unique<simgrid::s4u::Engine>(&argc, argv);
}

}  // namespace dvfs
