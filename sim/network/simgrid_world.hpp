#pragma once
// The one owner of SimGrid set-up: every simulation (trace replay in sim/engine, pipelines in
// sim/pipeline, control sessions in sim/control) builds its world here: a fresh engine with SimGrid's
// own logging silenced, the platform (hosts, zones, links and routes) from a SimGrid-free description
// (sim/network/cluster.hpp), the collectives' synchronisation, and its actors, guarded so that one
// failure stops them all. Actor bodies still use SimGrid's activities (sleeps, mailboxes, semaphores)
// directly: those are the simulation itself.
//
// SimGrid keeps global state: one world per simulation, deleted afterwards. Its clock carries on across
// engines in one process, so actors measure time from the engine's clock at their start.
#include "sim/core/errors.hpp"
#include "sim/network/cluster.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dvfs {

// The network model is CM02 without cross-traffic: max-min bandwidth sharing, without the TCP
// correction factors of SimGrid's default (LV08, fitted to wide-area TCP) and without the reverse
// acknowledgement traffic it adds (5 % of each flow): neither describes NVLink or InfiniBand RDMA. Nor
// does a TCP window: CM02 bounds a flow by TCP-gamma / (2 x latency) (4 MiB / 10 us = 419 GB/s, below
// NVLink 4), so the bound is off.
// Set by SimGrid's deadlock signal: every actor waits on another and nothing is left to advance time (a receive
// whose send never comes, or transfers in an order no rank can finish). SimGrid then kills the actors, so the
// failure the guard stored is that kill, not the cause.
inline bool& deadlock_seen() {
  static bool seen = false;
  return seen;
}

inline void throw_if_deadlocked() {
  if (!std::exchange(deadlock_seen(), false)) return;
  throw InputError("the simulated job", "collectives",
                   "every rank waits on another and none can go on (a receive whose send never comes, or sends, receives and "
                   "collectives in an order no rank can finish): expected each transfer to meet its partner in an order that completes");
}

inline std::unique_ptr<simgrid::s4u::Engine> make_simgrid_engine() {
  // SimGrid aborts the process on a second live engine (a control session keeps one between intervals).
  if (simgrid::s4u::Engine::has_instance())
    throw std::logic_error("a simulation is already live in this process (close the control session first)");
  int argc = 6;
  char arg0[] = "dvfs-sim";
  char arg1[] = "--log=root.thresh:critical";
  char arg2[] = "--cfg=network/model:CM02";
  char arg3[] = "--cfg=network/crosstraffic:0";
  char arg4[] = "--cfg=network/TCP-gamma:0";
  char arg5[] = "--log=ker_engine.app:file:/dev/null";  // its deadlock report: ours is one line (throw_if_deadlocked)
  char* argv[] = {arg0, arg1, arg2, arg3, arg4, arg5, nullptr};
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  static const bool hooked = (simgrid::s4u::Engine::on_deadlock_cb([] { deadlock_seen() = true; }), true);
  (void)hooked;
  deadlock_seen() = false;
  return engine;
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
  throw_if_deadlocked();
  if (failure) std::rethrow_exception(failure);
}

// Message payloads: only a message's size matters.
inline int message_token = 0;

// At least one byte: SimGrid completes an empty message to a permanent receiver at once, without the
// links' latency.
inline std::uint64_t message_bytes(double bytes) { return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(bytes)); }

// Hosts gpu0..gpu{n-1} on the cluster. `slot[g]` is host g's position in the machine (node = slot /
// gpus_per_node); routes are declared for the ordered pairs in `pairs` (both directions are added when
// both are listed). Must be called with a live engine and before it runs.
std::vector<simgrid::s4u::Host*> build_cluster(const ClusterSpec& spec, const std::vector<int>& slot,
                                               const std::vector<std::pair<int, int>>& pairs);

// A star of per-host links (latency split over both ends, one bandwidth): the simple platform of
// duration-level pipelines that do not ask for a cluster.
std::vector<simgrid::s4u::Host*> build_star(int hosts, double latency_s, double bandwidth_bps);

// One-way latency of the declared route a -> b (the sum over its links).
double route_latency_s(const simgrid::s4u::Host* a, const simgrid::s4u::Host* b);

// The platform of one world.
struct PlatformSpec {
  enum class Kind {
    isolated,  // hosts without links, in one full zone named `zone`: GPUs that never talk to each other
    star,      // build_star(hosts, star_latency_s, star_bandwidth_bps)
    cluster,   // build_cluster(cluster, slots, pairs + the collectives' route pairs)
  };
  Kind kind = Kind::isolated;
  std::string zone = "node";
  std::vector<std::string> host_names;  // isolated
  int hosts = 0;                        // star
  double star_latency_s = 0, star_bandwidth_bps = 0;
  ClusterSpec cluster;                  // cluster: also the all-reduce algorithm of the collectives
  std::vector<int> slots;
  std::vector<std::pair<int, int>> pairs;
};

class Collectives;

// One simulation's SimGrid world. Declare the collectives' groups, build the platform, start actors, run.
class SimWorld {
 public:
  SimWorld() : engine_(make_simgrid_engine()) {}
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  // Builds the hosts and prepares `groups` on them with `algorithm` (their route pairs are declared on a
  // cluster). Once per world, before any actor starts.
  const std::vector<simgrid::s4u::Host*>& build(const PlatformSpec& spec, Collectives& groups, AllReduceAlgorithm algorithm);
  const std::vector<simgrid::s4u::Host*>& hosts() const { return hosts_; }

  // An actor on host `host`; a failure stops every actor and is rethrown by run().
  void spawn(const std::string& name, std::size_t host, std::function<void()> body);
  // An actor whose body handles its own failures (store them in failure() and stop the others).
  void spawn_unguarded(const std::string& name, std::size_t host, std::function<void()> body);
  std::exception_ptr& failure() { return failure_; }

  // Runs to the end, deletes the engine and rethrows the first failure of an actor.
  void run() { run_and_rethrow(engine_, failure_); }
  // Runs until simulated time t (absolute); rethrows a failure. The world stays live.
  void run_until(double t);
  // Ends a world that was not run to its end: stops its actors and lets SimGrid unwind them.
  void stop();
  bool live() const { return engine_ != nullptr; }
  // Deletes the engine now (a world kept between runs, like a control session's).
  void close() { engine_.reset(); }

  static double clock() { return simgrid::s4u::Engine::get_clock(); }

 private:
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::exception_ptr failure_;
};

}  // namespace dvfs
