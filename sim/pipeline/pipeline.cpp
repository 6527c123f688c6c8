#include "sim/pipeline/pipeline.hpp"

#include "models/src/switch_latency.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/gpu_replayer.hpp"
#include "sim/network/simgrid_world.hpp"
#include "sim/network/collectives.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <exception>
#include <memory>
#include <random>

namespace sg4 = simgrid::s4u;

namespace dvfs {

namespace {

// Where a GPU sits in the iteration: replica r, stage s, TP rank t; GPU index ((r S) + s) T + t.
struct Shape {
  int S = 1, DP = 1, T = 1, chunks = 1, M = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int gpus() const { return S * DP * T; }
  int gpu(int r, int s, int t) const { return (r * S + s) * T + t; }
  int virtual_stages() const { return S * chunks; }
};

// Machine position of each GPU: Megatron's order (TP, then DP, then PP) or stages of a replica together.
std::vector<int> slots(const Shape& sh, Placement p) {
  std::vector<int> out(static_cast<std::size_t>(sh.gpus()));
  for (int r = 0; r < sh.DP; ++r)
    for (int s = 0; s < sh.S; ++s)
      for (int t = 0; t < sh.T; ++t)
        out[static_cast<std::size_t>(sh.gpu(r, s, t))] = p == Placement::dp_inner ? (s * sh.DP + r) * sh.T + t : sh.gpu(r, s, t);
  return out;
}

// Pipeline neighbours talk in both directions: the owner of virtual stage v and of v + 1.
std::vector<std::pair<int, int>> pipeline_pairs(const Shape& sh) {
  std::vector<std::pair<int, int>> out;
  for (int r = 0; r < sh.DP; ++r)
    for (int t = 0; t < sh.T; ++t)
      for (int v = 0; v + 1 < sh.virtual_stages(); ++v) {
        const int a = sh.gpu(r, v % sh.S, t), b = sh.gpu(r, (v + 1) % sh.S, t);
        out.emplace_back(a, b);
        out.emplace_back(b, a);
      }
  return out;
}

std::string box(char kind, int r, int t, int v, int mb) {
  return std::string(1, kind) + std::to_string(r) + "." + std::to_string(t) + "." + std::to_string(v) + "." + std::to_string(mb);
}

// One GPU's pass through its schedule: wait for the op's input, `compute(op)` advances the GPU, send
// the output to the next (forward) or previous (backward) virtual stage. Returns the time blocked.
template <class Compute>
double run_schedule(const Shape& sh, int r, int s, int t, double activation_bytes, Compute&& compute) {
  const int V = sh.virtual_stages();
  // This GPU is the permanent receiver of its mailboxes: a message then travels as soon as it is sent
  // (eager, like NCCL/RDMA into a posted buffer), not only once the receiver asks for it.
  const sg4::ActorPtr self = sg4::Actor::self();
  for (int c = 0; c < sh.chunks; ++c) {
    const int v = c * sh.S + s;
    for (int m = 0; m < sh.M; ++m) {
      if (v > 0) sg4::Mailbox::by_name(box('a', r, t, v, m))->set_receiver(self);
      if (v < V - 1) sg4::Mailbox::by_name(box('g', r, t, v, m))->set_receiver(self);
    }
  }
  double blocked = 0;
  for (const PipelineOp& op : schedule_ops(sh.schedule, s, sh.S, sh.M, sh.chunks)) {
    const int v = op.chunk * sh.S + s;
    const double t0 = sg4::Engine::get_clock();
    if (!op.backward && v > 0) sg4::Mailbox::by_name(box('a', r, t, v, op.microbatch))->get<int>();
    if (op.backward && v < V - 1) sg4::Mailbox::by_name(box('g', r, t, v, op.microbatch))->get<int>();
    blocked += sg4::Engine::get_clock() - t0;
    compute(op);
    if (!op.backward && v < V - 1)
      sg4::Mailbox::by_name(box('a', r, t, v + 1, op.microbatch))->put_init(&message_token, message_bytes(activation_bytes))->detach();
    if (op.backward && v > 0)
      sg4::Mailbox::by_name(box('g', r, t, v - 1, op.microbatch))->put_init(&message_token, message_bytes(activation_bytes))->detach();
  }
  return blocked;
}

// The platform: a star of p2p links, or the cluster with the routes the pipeline and the groups use.
PlatformSpec platform_of(const Shape& sh, bool use_cluster, const ClusterSpec& cs, double p2p_latency_s, double p2p_bandwidth_bps) {
  PlatformSpec p;
  if (!use_cluster) {
    p.kind = PlatformSpec::Kind::star;
    p.hosts = sh.gpus();
    p.star_latency_s = p2p_latency_s;
    p.star_bandwidth_bps = p2p_bandwidth_bps;
    return p;
  }
  p.kind = PlatformSpec::Kind::cluster;
  p.cluster = cs;
  p.slots = slots(sh, cs.placement);
  p.pairs = pipeline_pairs(sh);
  return p;
}

void check(const PipelineWorkload& wl, const std::string& source) {
  check_schedule(wl.schedule, wl.stages, wl.microbatches, wl.chunks, source);
  const int V = wl.stages * wl.chunks;
  auto check_table = [&](const std::vector<std::vector<double>>& t, const char* name) {
    if (static_cast<int>(t.size()) != V)
      throw InputError(source, name, "expected one row per virtual stage (" + std::to_string(V) + ")");
    for (const auto& row : t) {
      if (static_cast<int>(row.size()) != wl.microbatches)
        throw InputError(source, name, "expected one duration per micro-batch (" + std::to_string(wl.microbatches) + ")");
      for (double d : row)
        if (!(d >= 0) || !std::isfinite(d)) throw InputError(source, name, "expected durations >= 0 s");
    }
  };
  check_table(wl.forward_s, "forward");
  check_table(wl.backward_s, "backward");
  if (!(wl.p2p_latency_s >= 0) || !(wl.p2p_bandwidth_bps >= 0) || !(wl.activation_bytes >= 0))
    throw InputError(source, "p2p", "expected latency, bandwidth and bytes >= 0");
  if (wl.data_parallel < 1) throw InputError(source, "data_parallel", "expected at least one replica");
  if (!wl.gradient_bytes.empty() && static_cast<int>(wl.gradient_bytes.size()) != wl.stages)
    throw InputError(source, "gradient_bytes", "expected one size per stage");
  const int N = wl.stages * wl.data_parallel;
  if (!wl.slowdown.empty() && static_cast<int>(wl.slowdown.size()) != N)
    throw InputError(source, "slowdown", "expected one factor per GPU (" + std::to_string(N) + ")");
  for (double f : wl.slowdown)
    if (!(f > 0)) throw InputError(source, "slowdown", "expected factors > 0");
  if (!(wl.jitter_cv >= 0)) throw InputError(source, "jitter_cv", "expected >= 0");
  if (wl.use_cluster) check_cluster(wl.cluster, source);
}

// Data-parallel groups: the same stage (and TP rank) of every replica, in replica order.
std::vector<int> add_dp_groups(Collectives& c, const Shape& sh) {
  std::vector<int> group_of(static_cast<std::size_t>(sh.S * sh.T), -1);
  if (sh.DP < 2) return group_of;
  for (int s = 0; s < sh.S; ++s)
    for (int t = 0; t < sh.T; ++t) {
      std::vector<int> members;
      for (int r = 0; r < sh.DP; ++r) members.push_back(sh.gpu(r, s, t));
      group_of[static_cast<std::size_t>(s * sh.T + t)] = c.add_group(std::move(members));
    }
  return group_of;
}

}  // namespace

PipelineResult simulate_pipeline(const PipelineWorkload& wl, const std::string& source) {
  check(wl, source);
  const Shape sh{wl.stages, wl.data_parallel, 1, wl.chunks, wl.microbatches, wl.schedule};
  const int N = sh.gpus(), S = sh.S;
  PipelineResult res;
  res.stage_end_s.assign(static_cast<std::size_t>(N), 0);
  res.stage_busy_s.assign(static_cast<std::size_t>(N), 0);
  res.stage_blocked_s.assign(static_cast<std::size_t>(N), 0);
  res.allreduce_s.assign(static_cast<std::size_t>(N), 0);

  // Durations, with per-GPU slowdown and seeded jitter, fixed before the replay: [gpu][virtual stage row][mb].
  std::vector<std::vector<double>> fwd(static_cast<std::size_t>(N)), bwd(static_cast<std::size_t>(N));
  std::mt19937_64 rng(wl.seed);
  // Mean-one lognormal factors, drawn with the project's Box-Muller (same on every standard library).
  const LognormalLatency factor(1.0, wl.jitter_cv);
  auto jitter = [&] { return factor.draw(rng); };
  for (int g = 0; g < N; ++g) {
    const int s = g % S;
    const double k = wl.slowdown.empty() ? 1.0 : wl.slowdown[static_cast<std::size_t>(g)];
    for (int c = 0; c < sh.chunks; ++c)
      for (int m = 0; m < wl.microbatches; ++m) {
        const auto v = static_cast<std::size_t>(c * S + s);
        fwd[static_cast<std::size_t>(g)].push_back(wl.forward_s[v][static_cast<std::size_t>(m)] * k * jitter());
        bwd[static_cast<std::size_t>(g)].push_back(wl.backward_s[v][static_cast<std::size_t>(m)] * k * jitter());
      }
  }

  SimWorld world;
  Collectives groups;
  const bool sync = sh.DP > 1 && !wl.gradient_bytes.empty();
  const std::vector<int> dp_group = sync ? add_dp_groups(groups, sh) : std::vector<int>{};
  world.build(platform_of(sh, wl.use_cluster, wl.cluster, wl.p2p_latency_s, wl.p2p_bandwidth_bps), groups, wl.cluster.allreduce);

  for (int g = 0; g < N; ++g) {
    world.spawn("gpu" + std::to_string(g), static_cast<std::size_t>(g), [&, g]() {
      const std::size_t gi = static_cast<std::size_t>(g);
      const int r = g / S, s = g % S;
      const double origin = sg4::Engine::get_clock();
      res.stage_blocked_s[gi] = run_schedule(sh, r, s, 0, wl.activation_bytes, [&](const PipelineOp& op) {
        const std::size_t i = static_cast<std::size_t>(op.chunk * wl.microbatches + op.microbatch);
        const double d = (op.backward ? bwd : fwd)[gi][i];
        sg4::this_actor::sleep_for(d);
        res.stage_busy_s[gi] += d;
      });
      if (sync && wl.gradient_bytes[static_cast<std::size_t>(s)] > 0) {
        const double t0 = sg4::Engine::get_clock();
        groups.run(dp_group[static_cast<std::size_t>(s)], r, CollectiveKind::all_reduce, wl.gradient_bytes[static_cast<std::size_t>(s)]);
        res.allreduce_s[gi] = sg4::Engine::get_clock() - t0;
      }
      res.stage_end_s[gi] = sg4::Engine::get_clock() - origin;
    });
  }
  world.run();
  res.iteration_s = *std::max_element(res.stage_end_s.begin(), res.stage_end_s.end());
  return res;
}

namespace {

void check(const KernelPipeline& kp, const std::string& source) {
  const int S = static_cast<int>(kp.stages.size());
  check_schedule(kp.schedule, S, kp.microbatches, kp.chunks, source);
  const int V = S * kp.chunks;
  if (static_cast<int>(kp.forward.size()) != V || static_cast<int>(kp.backward.size()) != V)
    throw InputError(source, "forward", "expected one forward and one backward kernel range per virtual stage (" + std::to_string(V) + ")");
  if (!kp.optimizer.empty() && static_cast<int>(kp.optimizer.size()) != S)
    throw InputError(source, "optimizer", "expected one optimizer kernel range per stage, or none");
  for (int v = 0; v < V; ++v)
    for (const auto& r : {kp.forward[static_cast<std::size_t>(v)], kp.backward[static_cast<std::size_t>(v)]})
      if (r.first > r.second || r.second > kp.stages[static_cast<std::size_t>(v % S)].kernels.size())
        throw InputError(source, "stage " + std::to_string(v % S), "kernel range outside the stage's kernels");
  if (!(kp.p2p_latency_s >= 0)) throw InputError(source, "p2p_latency_s", "expected >= 0");
  for (const Rank& r : kp.stages)
    for (const Kernel& k : r.kernels) {
      if (k.annotation_set >= kp.annotation_sets)
        throw InputError(source, "annotation_sets", "a kernel refers to an annotation set the pipeline does not hold");
      if (k.collective > kp.collectives.size())
        throw InputError(source, "collectives", "a kernel refers to a collective call the pipeline does not hold");
    }
  for (const CollectiveCall& c : kp.collectives)
    if ((kp.tp_ranks > 1 && c.group != -1) || c.kind == CollectiveKind::send || c.kind == CollectiveKind::recv || !(c.bytes >= 0))
      throw InputError(source, "collectives", "expected collectives with bytes >= 0 and, with TP ranks simulated, of the "
                                              "tensor-parallel group (group -1)");
  if (kp.data_parallel < 1) throw InputError(source, "data_parallel", "expected at least one replica");
  if (kp.tp_ranks < 1) throw InputError(source, "tp_ranks", "expected at least one tensor-parallel rank");
  if (!kp.gradient_bytes.empty() && static_cast<int>(kp.gradient_bytes.size()) != S)
    throw InputError(source, "gradient_bytes", "expected one size per stage");
  if (!kp.buckets.empty()) {
    if (static_cast<int>(kp.buckets.size()) != V) throw InputError(source, "buckets", "expected one bucket list per virtual stage");
    for (int v = 0; v < V; ++v) {
      std::size_t prev = kp.backward[static_cast<std::size_t>(v)].first;
      for (const GradientBucket& b : kp.buckets[static_cast<std::size_t>(v)]) {
        if (b.end < prev || b.end > kp.backward[static_cast<std::size_t>(v)].second || !(b.bytes >= 0))
          throw InputError(source, "buckets", "expected ascending bucket ends inside the virtual stage's backward range and bytes >= 0");
        prev = b.end;
      }
    }
  }
  if (kp.straggler_replica >= kp.data_parallel || !(kp.straggler_factor > 0))
    throw InputError(source, "straggler_replica", "expected a replica index below data_parallel and a factor > 0");
  const std::size_t gpus = kp.stages.size() * static_cast<std::size_t>(kp.data_parallel * kp.tp_ranks);
  if (!kp.slowdown.empty() && kp.slowdown.size() != gpus)
    throw InputError(source, "slowdown", "expected one factor per GPU (" + std::to_string(gpus) + ")");
  for (double f : kp.slowdown)
    if (!(f > 0) || !std::isfinite(f)) throw InputError(source, "slowdown", "expected factors > 0");
  if (!(kp.jitter_cv >= 0) || !std::isfinite(kp.jitter_cv)) throw InputError(source, "jitter_cv", "expected >= 0");
  if (kp.use_cluster) check_cluster(kp.cluster, source);
}

// The gradient buckets of one stage in the order its GPU completes them: per chunk, in the order of the
// chunks' last backwards in the schedule.
struct StageBucket {
  int chunk = 0;
  GradientBucket bucket;
};

std::vector<StageBucket> stage_buckets(const KernelPipeline& kp, const std::vector<PipelineOp>& ops, int s) {
  const int S = static_cast<int>(kp.stages.size());
  std::vector<int> chunk_order;  // chunks by their last backward
  for (auto it = ops.rbegin(); it != ops.rend(); ++it)
    if (it->backward && std::find(chunk_order.begin(), chunk_order.end(), it->chunk) == chunk_order.end())
      chunk_order.insert(chunk_order.begin(), it->chunk);
  std::vector<StageBucket> out;
  if (kp.buckets.empty()) {
    const double bytes = kp.gradient_bytes.empty() ? 0.0 : kp.gradient_bytes[static_cast<std::size_t>(s)];
    if (bytes > 0 && !chunk_order.empty()) {
      const int c = chunk_order.back();
      out.push_back({c, {kp.backward[static_cast<std::size_t>(c * S + s)].second, bytes}});
    }
    return out;
  }
  for (int c : chunk_order)
    for (const GradientBucket& b : kp.buckets[static_cast<std::size_t>(c * S + s)]) out.push_back({c, b});
  return out;
}

}  // namespace

KernelPipelineResult simulate_kernel_pipeline(const KernelPipeline& kp, const GpuModel& model,
                                              const PolicyFactory& make_policy, const ReplayOptions& opts,
                                              const std::string& source) {
  check(kp, source);
  const Shape sh{static_cast<int>(kp.stages.size()), kp.data_parallel, kp.tp_ranks, kp.chunks, kp.microbatches, kp.schedule};
  const int N = sh.gpus(), S = sh.S, T = sh.T;
  KernelPipelineResult res;
  std::vector<std::unique_ptr<Policy>> policies;
  for (int g = 0; g < N; ++g) {
    policies.push_back(make_policy(g));
    res.outcomes.push_back(RankOutcome{g, policies.back()->name(), {}, EnergyMeter(0, kp.annotation_sets, model.sm_clocks_mhz().size(), opts.timeline_interval_s), 0});
  }
  res.blocked_s.assign(static_cast<std::size_t>(N), 0);
  res.allreduce_s.assign(static_cast<std::size_t>(N), 0);
  res.collective_s.assign(static_cast<std::size_t>(N), 0);
  res.pipeline_wait_j.assign(static_cast<std::size_t>(N), 0);
  res.sync_wait_j.assign(static_cast<std::size_t>(N), 0);

  std::vector<std::vector<PipelineOp>> ops;
  std::vector<std::vector<StageBucket>> buckets;
  for (int s = 0; s < S; ++s) {
    ops.push_back(schedule_ops(sh.schedule, s, S, sh.M, sh.chunks));
    buckets.push_back(stage_buckets(kp, ops.back(), s));
  }
  SimWorld world;
  Collectives groups;
  const std::vector<int> dp_group = add_dp_groups(groups, sh);
  std::vector<int> tp_group;  // per (replica, stage)
  if (T > 1)
    for (int r = 0; r < sh.DP; ++r)
      for (int s = 0; s < S; ++s) {
        std::vector<int> members;
        for (int t = 0; t < T; ++t) members.push_back(sh.gpu(r, s, t));
        tp_group.push_back(groups.add_group(std::move(members)));
      }
  world.build(platform_of(sh, kp.use_cluster, kp.cluster, kp.p2p_latency_s, kp.p2p_bandwidth_bps), groups, kp.cluster.allreduce);
  const CollectiveKind grad_kind =
      kp.gradient_sync == GradientSync::reduce_scatter ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;

  for (int g = 0; g < N; ++g) {
    const int t = g % T, s = (g / T) % S, r = g / (T * S);
    const std::size_t gi = static_cast<std::size_t>(g), si = static_cast<std::size_t>(s);
    const std::vector<StageBucket>& my_buckets = buckets[si];
    const bool dp_sync = sh.DP > 1 && !my_buckets.empty();
    // The gradient sync runs on its own stream: an actor per GPU that takes each bucket as the backward
    // hands it over and runs the collective while the compute goes on.
    auto ready = sg4::Semaphore::create(0), done = sg4::Semaphore::create(0);
    auto queue = std::make_shared<std::deque<double>>();
    if (dp_sync)
      world.spawn("grad-sync" + std::to_string(g), gi, [&, s, t, r, ready, done, queue]() {
        for (std::size_t b = 0; b < buckets[static_cast<std::size_t>(s)].size(); ++b) {
          ready->acquire();
          const double bytes = queue->front();
          queue->pop_front();
          groups.run(dp_group[static_cast<std::size_t>(s * T + t)], r, grad_kind, bytes);
        }
        done->release();
      });
    world.spawn("gpu" + std::to_string(g), gi, [&, g, t, s, r, gi, si, dp_sync, ready, done, queue]() {
      GpuReplayer replayer(kp.stages[si], model, *policies[gi], opts, res.outcomes[gi].meter);
      const double slow = (r == kp.straggler_replica ? kp.straggler_factor : 1.0) * (kp.slowdown.empty() ? 1.0 : kp.slowdown[gi]);
      replayer.set_variation(slow, kp.jitter_cv, latency_seed(kp.seed ^ 0x6a09e667f3bcc909ULL, g));
      LocalTime tk;
      const double origin = sg4::Engine::get_clock();
      auto sync_clock = [&] { sg4::this_actor::sleep_until(origin + tk.now()); };
      // Idle (at idle power, the clocks in effect) up to SimGrid's clock, adding the energy to `into`.
      auto idle_to_now = [&](double& into) {
        const double e0 = res.outcomes[gi].meter.total_j();
        replayer.idle_until(tk, sg4::Engine::get_clock() - origin);
        into += res.outcomes[gi].meter.total_j() - e0;
      };
      // In-program collectives: the closed form the synthesis wrote (TP folded), or the TP group on SimGrid.
      auto collective = [&](const Kernel& k, double) {
        if (T == 1) return k.duration_s;
        sync_clock();  // the GPU reached the collective: the others may have to wait for it
        const double t0 = sg4::Engine::get_clock();
        const CollectiveCall& call = kp.collectives[k.collective - 1];
        groups.run(tp_group[static_cast<std::size_t>(r * S + s)], t, call.kind, call.bytes);
        const double d = sg4::Engine::get_clock() - t0;
        res.collective_s[gi] += d;
        return d;
      };
      // The last backward of each chunk hands its buckets over as it completes them.
      std::vector<int> last_backward(static_cast<std::size_t>(sh.chunks), -1);
      for (std::size_t i = 0; i < ops[si].size(); ++i)
        if (ops[si][i].backward) last_backward[static_cast<std::size_t>(ops[si][i].chunk)] = static_cast<int>(i);
      std::size_t next_bucket = 0, op_index = 0;
      auto hand_over = [&](std::size_t b) {
        queue->push_back(buckets[si][b].bucket.bytes);
        ready->release();
      };
      res.blocked_s[gi] = run_schedule(sh, r, s, t, kp.activation_bytes, [&](const PipelineOp& op) {
        idle_to_now(res.pipeline_wait_j[gi]);  // the GPU idled while it waited
        const auto v = static_cast<std::size_t>(op.chunk * S + s);
        const auto& range = op.backward ? kp.backward[v] : kp.forward[v];
        replayer.begin_computation(tk, ComputationInfo{s, op.chunk, op.microbatch, static_cast<int>(op_index), op.backward});
        std::size_t pos = range.first;
        if (dp_sync && kp.overlap_gradient_sync && op.backward &&
            last_backward[static_cast<std::size_t>(op.chunk)] == static_cast<int>(op_index)) {
          for (; next_bucket < buckets[si].size() && buckets[si][next_bucket].chunk == op.chunk; ++next_bucket) {
            const std::size_t end = buckets[si][next_bucket].bucket.end;
            replayer.run_kernels(tk, pos, end, collective);
            pos = end;
            sync_clock();
            hand_over(next_bucket);
          }
        }
        replayer.run_kernels(tk, pos, range.second, collective);
        // Nothing outside this GPU could change its course meanwhile: one SimGrid event.
        sync_clock();
        ++op_index;
      });
      if (dp_sync) {
        const double t0 = sg4::Engine::get_clock();
        for (; next_bucket < buckets[si].size(); ++next_bucket) hand_over(next_bucket);  // not overlapped
        done->acquire();
        res.allreduce_s[gi] = sg4::Engine::get_clock() - t0;
      }
      idle_to_now(res.sync_wait_j[gi]);  // waiting for the gradient sync
      if (si < kp.optimizer.size()) {
        replayer.run_kernels(tk, kp.optimizer[si].first, kp.optimizer[si].second, collective);
        sync_clock();
      }
      if (dp_sync && kp.gradient_sync == GradientSync::reduce_scatter) {
        // Distributed optimizer: every replica gathers the parameters the others updated.
        const double t0 = sg4::Engine::get_clock();
        for (const StageBucket& b : buckets[si])
          groups.run(dp_group[static_cast<std::size_t>(s * T + t)], r, CollectiveKind::all_gather,
                     b.bucket.param_bytes > 0 ? b.bucket.param_bytes : b.bucket.bytes);
        res.allreduce_s[gi] += sg4::Engine::get_clock() - t0;
        idle_to_now(res.sync_wait_j[gi]);
      }
      res.outcomes[gi].stats = replayer.stats();
      res.outcomes[gi].simgrid_end_s = sg4::Engine::get_clock() - origin;
      if (kp.on_gpu_done) kp.on_gpu_done(g);
    });
  }
  world.run();
  for (const auto& o : res.outcomes) res.iteration_s = std::max(res.iteration_s, o.stats.end_s);
  return res;
}

}  // namespace dvfs
