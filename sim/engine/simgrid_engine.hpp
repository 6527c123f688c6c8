#pragma once
// A fresh SimGrid engine for one simulation, with SimGrid's own logging silenced. SimGrid keeps global
// state: create one per simulation and delete it afterwards. Its clock carries on across engines in
// one process, so actors measure time from the engine's clock at their start.
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>

namespace dvfs {

// The network model is CM02 without cross-traffic: max-min bandwidth sharing, without the TCP
// correction factors of SimGrid's default (LV08, fitted to wide-area TCP) and without the reverse
// acknowledgement traffic it adds (5 % of each flow): neither describes NVLink or InfiniBand RDMA. Nor
// does a TCP window: CM02 bounds a flow by TCP-gamma / (2 x latency) (4 MiB / 10 us = 419 GB/s, below
// NVLink 4), so the bound is off.
inline std::unique_ptr<simgrid::s4u::Engine> make_simgrid_engine() {
  // SimGrid aborts the process on a second live engine (a control session keeps one between intervals).
  if (simgrid::s4u::Engine::has_instance())
    throw std::logic_error("a simulation is already live in this process (close the control session first)");
  int argc = 5;
  char arg0[] = "dvfs-sim";
  char arg1[] = "--log=root.thresh:critical";
  char arg2[] = "--cfg=network/model:CM02";
  char arg3[] = "--cfg=network/crosstraffic:0";
  char arg4[] = "--cfg=network/TCP-gamma:0";
  char* argv[] = {arg0, arg1, arg2, arg3, arg4, nullptr};
  return std::make_unique<simgrid::s4u::Engine>(&argc, argv);
}

// Runs an actor's body; a failure stops every actor (the others would wait for it forever) and is
// rethrown by run_and_rethrow once the engine is done.
template <class Body>
void guarded(std::exception_ptr& failure, Body&& body) {
  try {
    body();
  } catch (...) {
    if (!failure) failure = std::current_exception();
    simgrid::s4u::Actor::kill_all();
  }
}

inline void run_and_rethrow(std::unique_ptr<simgrid::s4u::Engine>& engine, const std::exception_ptr& failure) {
  engine->run();
  engine.reset();
  if (failure) std::rethrow_exception(failure);
}

// Message payloads: only a message's size matters.
inline int message_token = 0;

// At least one byte: SimGrid completes an empty message to a permanent receiver at once, without the
// links' latency.
inline std::uint64_t message_bytes(double bytes) { return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(bytes)); }

}  // namespace dvfs
