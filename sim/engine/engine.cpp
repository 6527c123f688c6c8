#include "sim/engine/engine.hpp"

#include "sim/engine/simgrid_engine.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <exception>
#include <string>

namespace sg4 = simgrid::s4u;

namespace dvfs {

namespace {

// Event mode: each segment is a SimGrid sleep and time is read back from the engine's clock.
struct SimGridTime {
  double origin;
  double now() const { return sg4::Engine::get_clock() - origin; }
  void advance(double dt) { sg4::this_actor::sleep_for(dt); }
};

}  // namespace

std::vector<RankOutcome> run_engine(const Workload& wl, const GpuModel& model, const PolicyFactory& make_policy,
                                    const ReplayOptions& opts, EngineMode mode) {
  std::vector<RankOutcome> out;
  out.reserve(wl.ranks.size());
  std::vector<std::unique_ptr<Policy>> policies;
  for (const Rank& r : wl.ranks) {
    policies.push_back(make_policy(r.id));
    const std::size_t steps = r.steps.size() * static_cast<std::size_t>(opts.repeat);
    out.push_back(RankOutcome{r.id, policies.back()->name(), {},
                              EnergyMeter(steps, wl.annotation_sets.size(), model.sm_clocks_mhz().size(), opts.timeline_interval_s),
                              0});
  }

  auto engine = make_simgrid_engine();
  auto* zone = sg4::create_full_zone("node");
  std::vector<sg4::Host*> hosts;
  for (const Rank& r : wl.ranks) hosts.push_back(zone->create_host("gpu" + std::to_string(r.id), 1e9));
  zone->seal();

  std::exception_ptr failure;
  for (std::size_t i = 0; i < wl.ranks.size(); ++i) {
    sg4::Actor::create("replay-gpu" + std::to_string(wl.ranks[i].id), hosts[i], [&, i]() {
      try {
        GpuReplayer replayer(wl.ranks[i], model, *policies[i], opts, out[i].meter);
        const double origin = sg4::Engine::get_clock();
        if (mode == EngineMode::event) {
          SimGridTime tk{origin};
          out[i].stats = replayer.run(tk);
        } else {
          LocalTime tk;
          out[i].stats = replayer.run(tk);
          // Nothing outside this GPU could change its course: one SimGrid event covers the stream.
          sg4::this_actor::sleep_until(origin + out[i].stats.end_s);
        }
        out[i].simgrid_end_s = sg4::Engine::get_clock() - origin;
      } catch (...) {
        failure = std::current_exception();
      }
    });
  }
  engine->run();
  engine.reset();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace dvfs
