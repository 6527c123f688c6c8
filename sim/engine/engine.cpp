#include "sim/engine/engine.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"

#include "sim/network/collectives.hpp"
#include "sim/network/simgrid_world.hpp"
#include "traces/src/multi_rank.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace dvfs {

namespace {

// Event mode: each segment is a SimGrid sleep and time is read back from the engine's clock.
// The GPU's local time is the sum of its advances, as in LocalTime; SimGrid's clock follows it (sleep_until).
// Reading it back as clock - origin would (a) count a collective twice: the actor has already waited for it
// in SimGrid when the replayer advances over its duration, and (b) round differently from run to run,
// since SimGrid's clock carries on from the previous engine in the process (origin > 0).
struct SimGridTime {
  double origin;
  double t = 0;
  double now() const { return t; }
  void advance(double dt) {
    t += dt;
    sg4::this_actor::sleep_until(origin + t);
  }
};

// The job holds every GPU until its last rank ends: one that ended earlier idles until then (at idle power, its
// policy's ticks carrying on). Nothing else happens in that tail, so it runs on local time after SimGrid's run.
void wait_for_job_end(std::vector<RankOutcome>& out, const std::vector<std::unique_ptr<GpuReplayer>>& replayers) {
  double job_end = 0;
  for (const RankOutcome& o : out) job_end = std::max(job_end, o.stats.end_s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    LocalTime tk{out[i].stats.end_s};
    replayers[i]->wait_for_job_end(tk, job_end);
    out[i].stats = replayers[i]->stats();
  }
}

// A send or receive the cluster simulates: its peer is an imported rank other than `self` (a transfer to itself is a copy
// on the GPU; one to a rank not imported keeps its recorded time).
bool on_cluster(const CollectiveCall& x, int self, const std::map<int, std::size_t>& host_of) {
  return host_of.count(x.peer) > 0 && !transfer_to_self(x, self);
}

// A kernel's sends and receives on SimGrid, from rank `self`, whose GPU reached the kernel at `t0`: NCCL's send and
// receive kernels last until their transfers are done (rendezvous); a batch's kernel posts all of its sends and
// receives at once. Its transfers whose peer is not here, or is itself, are not simulated: the batch then lasts at least
// its recorded duration (`recorded_s`), which holds theirs.
void run_transfers(CallSpan<const CollectiveCall> calls, int self, const std::map<int, std::size_t>& host_of, double t0, double recorded_s) {
  std::vector<sg4::CommPtr> posted;
  int* received = nullptr;  // each receive's payload lands here: only its size matters
  for (const CollectiveCall& x : calls) {
    if (!on_cluster(x, self, host_of)) continue;
    const auto [from, to] = transfer_channel(x, self);
    auto* box = sg4::Mailbox::by_name("p2p" + std::to_string(from) + "-" + std::to_string(to));
    posted.push_back(x.kind == CollectiveKind::send ? box->put_async(&message_token, message_bytes(x.bytes)) : box->get_async<int>(&received));
  }
  for (const sg4::CommPtr& comm : posted) comm->wait();
  if (posted.size() < calls.size()) sg4::this_actor::sleep_until(t0 + recorded_s);
}

}  // namespace

std::vector<RankOutcome> run_engine(const Workload& wl, const GpuModel& model, const PolicyFactory& make_policy,
                                    const ReplayOptions& opts, EngineMode mode) {
  return run_engine(wl, model, make_policy, opts, mode, default_cluster_spec());
}

std::vector<RankOutcome> run_engine(const Workload& wl, const GpuModel& model, const PolicyFactory& make_policy,
                                    const ReplayOptions& opts, EngineMode mode, const ClusterSpec& cluster) {
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

  SimWorld world;
  // Collectives among ranks that are all here run on the cluster; the others keep their recorded time.
  std::map<int, std::size_t> host_of;  // global rank -> host
  for (std::size_t i = 0; i < wl.ranks.size(); ++i) host_of[wl.ranks[i].id] = i;
  Collectives groups;
  std::vector<int> group_gid(wl.groups.size(), -1);
  std::vector<std::map<int, int>> position(wl.groups.size());  // global rank -> place in the group
  std::vector<std::pair<int, int>> pairs;
  for (std::size_t g = 0; g < wl.groups.size(); ++g) {
    if (!group_simulated(wl, static_cast<int>(g))) continue;
    std::vector<int> members;
    for (int r : wl.groups[g]) {
      position[g][r] = static_cast<int>(members.size());
      members.push_back(static_cast<int>(host_of[r]));
    }
    group_gid[g] = groups.add_group(members);
  }
  for (const Rank& r : wl.ranks)
    for (const Kernel& k : r.kernels)
      for (const CollectiveCall& c : calls_of(wl, k))
        if (is_transfer(c.kind) && on_cluster(c, r.id, host_of))
          pairs.emplace_back(static_cast<int>(host_of[r.id]), static_cast<int>(host_of[c.peer]));
  PlatformSpec platform;
  if (groups.group_count() == 0 && pairs.empty()) {
    for (const Rank& r : wl.ranks) platform.host_names.push_back("gpu" + std::to_string(r.id));
  } else {
    platform.kind = PlatformSpec::Kind::cluster;
    platform.cluster = cluster;
    for (const Rank& r : wl.ranks) platform.slots.push_back(r.id);  // global rank order: ranks 0..7 on node 0
    platform.pairs = pairs;
  }
  world.build(platform, groups, cluster.allreduce);

  // NCCL kernels that overlapped other streams in the trace run beside them (sim/engine/stream_overlap.hpp).
  std::vector<Rank> overlapped(wl.ranks.size());
  std::vector<std::vector<OverlapWindow>> windows(wl.ranks.size());
  if (opts.stream_overlap == StreamOverlap::contention) {
    std::optional<ContentionModel> contention;
    for (std::size_t i = 0; i < wl.ranks.size(); ++i) {
      if (wl.ranks[i].clipped.empty()) continue;
      if (!contention) contention = load_contention_model(contention_model_path(model.name()));
      overlapped[i] = wl.ranks[i];
      windows[i] = plan_stream_overlap(overlapped[i], *contention, model);
    }
  }

  std::vector<std::unique_ptr<GpuReplayer>> replayers(wl.ranks.size());
  for (std::size_t i = 0; i < wl.ranks.size(); ++i) {
    // A failure stops every GPU: the others may be waiting for this one in a collective.
    world.spawn("replay-gpu" + std::to_string(wl.ranks[i].id), i, [&, i]() {
      const Rank& rank = windows[i].empty() ? wl.ranks[i] : overlapped[i];
      replayers[i] = std::make_unique<GpuReplayer>(rank, model, *policies[i], opts, out[i].meter);
      GpuReplayer& replayer = *replayers[i];
      if (!windows[i].empty()) replayer.set_overlap_windows(&windows[i]);
      const double origin = sg4::Engine::get_clock();
      // A collective: the GPU reaches it at local time `now`; it lasts until every member is there and
      // the transfer is done.
      auto collective = [&](const Kernel& k, double now) {
        const auto calls = calls_of(wl, k);
        const CollectiveCall& c = *calls.begin();
        const bool p2p = is_transfer(c.kind);
        const bool simulated = p2p ? std::any_of(calls.begin(), calls.end(), [&](const CollectiveCall& x) { return on_cluster(x, rank.id, host_of); })
                                   : c.group >= 0 && group_gid[static_cast<std::size_t>(c.group)] >= 0;
        if (!simulated) return k.duration_s;
        sg4::this_actor::sleep_until(origin + now);
        const double t0 = sg4::Engine::get_clock();
        if (p2p) {
          run_transfers(calls, rank.id, host_of, t0, k.duration_s);
        } else {
          groups.run(group_gid[static_cast<std::size_t>(c.group)], position[static_cast<std::size_t>(c.group)][rank.id], c.kind, c.bytes);
        }
        const double took = sg4::Engine::get_clock() - t0;
        if (took > kMaxTraceSpanS)  // a legal size over a legal but tiny bandwidth: a day of one transfer is no replay
          throw InputError("the simulated job", "cluster",
                           "expected each transfer to finish within " + std::to_string(static_cast<long>(kMaxTraceSpanS)) +
                               " s simulated (README \"Limits and bad input\"); a transfer of " + std::to_string(static_cast<long long>(c.bytes)) +
                               " bytes took " + std::to_string(static_cast<long long>(took)) +
                               " s, its wait for the other ranks included, on this cluster's bandwidths");
        return took;
      };
      if (mode == EngineMode::event) {
        SimGridTime tk{origin};
        out[i].stats = replayer.run(tk, collective);
      } else {
        LocalTime tk;
        out[i].stats = replayer.run(tk, collective);
        // Nothing outside this GPU could change its course since its last collective: one SimGrid event.
        sg4::this_actor::sleep_until(origin + out[i].stats.end_s);
      }
      out[i].simgrid_end_s = sg4::Engine::get_clock() - origin;
    });
  }
  world.run();
  wait_for_job_end(out, replayers);
  return out;
}

}  // namespace dvfs
