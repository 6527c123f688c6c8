#include "sim/pipeline/pipeline.hpp"

#include "models/src/switch_latency.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/limits.hpp"
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
  if (!(wl.p2p_latency_s >= 0 && wl.p2p_latency_s <= kMaxLinkLatencyS))
    throw InputError(source, "p2p_latency_s", "expected a latency from 0 to 1 s, got " + std::to_string(wl.p2p_latency_s));
  if (!(wl.p2p_bandwidth_bps >= 0) || !(wl.activation_bytes >= 0))
    throw InputError(source, "p2p", "expected bandwidth and bytes >= 0");
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
  if (!(kp.p2p_latency_s >= 0 && kp.p2p_latency_s <= kMaxLinkLatencyS))
    throw InputError(source, "p2p_latency_s", "expected a latency from 0 to 1 s, got " + std::to_string(kp.p2p_latency_s));
  for (const Rank& r : kp.stages)
    for (const Kernel& k : r.kernels) {
      if (k.annotation_set >= kp.annotation_sets)
        throw InputError(source, "annotation_sets", "a kernel refers to an annotation set the pipeline does not hold");
      if (k.collective > kp.collectives.size())
        throw InputError(source, "collectives", "a kernel refers to a collective call the pipeline does not hold");
    }
  for (const CollectiveCall& c : kp.collectives)
    if ((kp.tp_ranks > 1 && c.group != -1) || is_transfer(c.kind) || !(c.bytes >= 0))
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

// A GPU's gradient-sync stream: the backward hands each bucket's bytes over (`ready`), the stream runs its
// collective; `done` once every bucket is synchronised.
struct GradSyncChannel {
  sg4::SemaphorePtr ready, done;
  std::shared_ptr<std::deque<double>> queue;
};

// What every GPU actor of one kernel-pipeline run shares: the workload, the policies, each stage's
// operations and buckets, the collective groups, and the result they fill in.
struct KernelPipelineRun {
  const KernelPipeline& kp;
  const GpuModel& model;
  const ReplayOptions& opts;
  KernelPipelineResult& res;
  Shape sh;
  std::vector<std::unique_ptr<Policy>> policies;
  std::vector<std::vector<PipelineOp>> ops;
  std::vector<std::vector<StageBucket>> buckets;
  Collectives* groups = nullptr;
  std::vector<int> dp_group, tp_group;  // tp_group: per (replica, stage)
  CollectiveKind grad_kind = CollectiveKind::all_reduce;

  KernelPipelineRun(const KernelPipeline& kp_, const GpuModel& model_, const PolicyFactory& make_policy, const ReplayOptions& opts_,
                    KernelPipelineResult& res_)
      : kp(kp_), model(model_), opts(opts_), res(res_),
        sh{static_cast<int>(kp_.stages.size()), kp_.data_parallel, kp_.tp_ranks, kp_.chunks, kp_.microbatches, kp_.schedule} {
    const int N = sh.gpus(), S = sh.S;
    for (int g = 0; g < N; ++g) {
      policies.push_back(make_policy(g));
      res.outcomes.push_back(RankOutcome{g, policies.back()->name(), {}, EnergyMeter(0, kp.annotation_sets, model.sm_clocks_mhz().size(), opts.timeline_interval_s), 0});
    }
    res.blocked_s.assign(static_cast<std::size_t>(N), 0);
    res.allreduce_s.assign(static_cast<std::size_t>(N), 0);
    res.collective_s.assign(static_cast<std::size_t>(N), 0);
    res.pipeline_wait_j.assign(static_cast<std::size_t>(N), 0);
    res.sync_wait_j.assign(static_cast<std::size_t>(N), 0);
    for (int s = 0; s < S; ++s) {
      ops.push_back(schedule_ops(sh.schedule, s, S, sh.M, sh.chunks));
      buckets.push_back(stage_buckets(kp, ops.back(), s));
    }
  }

  // The DP groups (one per stage and TP rank) and, with TP > 1, one TP group per (replica, stage).
  void declare_groups(Collectives& c) {
    groups = &c;
    dp_group = add_dp_groups(c, sh);
    if (sh.T > 1)
      for (int r = 0; r < sh.DP; ++r)
        for (int s = 0; s < sh.S; ++s) {
          std::vector<int> members;
          for (int t = 0; t < sh.T; ++t) members.push_back(sh.gpu(r, s, t));
          tp_group.push_back(c.add_group(std::move(members)));
        }
    grad_kind = kp.gradient_sync == GradientSync::reduce_scatter ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  }
};

// The actor of one GPU: its stage program through the schedule, in local time, touching SimGrid where
// the outside world matters (a transfer, a collective, handing a bucket over, the end of an operation).
class PipelineGpu {
 public:
  PipelineGpu(KernelPipelineRun& run, int g, bool dp_sync, GradSyncChannel ch)
      : run_(run), kp_(run.kp), g_(g), t_(g % run.sh.T), s_((g / run.sh.T) % run.sh.S), r_(g / (run.sh.T * run.sh.S)),
        gi_(static_cast<std::size_t>(g)), si_(static_cast<std::size_t>(s_)), dp_sync_(dp_sync), ch_(std::move(ch)),
        replayer_(kp_.stages[si_], run.model, *run.policies[gi_], run.opts, run.res.outcomes[gi_].meter) {
    const double slow = (r_ == kp_.straggler_replica ? kp_.straggler_factor : 1.0) * (kp_.slowdown.empty() ? 1.0 : kp_.slowdown[gi_]);
    replayer_.set_variation(slow, kp_.jitter_cv, latency_seed(kp_.seed ^ 0x6a09e667f3bcc909ULL, g));
    origin_ = sg4::Engine::get_clock();
  }

  void run() {
    KernelPipelineResult& res = run_.res;
    // The last backward of each chunk hands its buckets over as it completes them.
    last_backward_.assign(static_cast<std::size_t>(run_.sh.chunks), -1);
    const auto& ops = run_.ops[si_];
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].backward) last_backward_[static_cast<std::size_t>(ops[i].chunk)] = static_cast<int>(i);
    res.blocked_s[gi_] = run_schedule(run_.sh, r_, s_, t_, kp_.activation_bytes, [&](const PipelineOp& op) { compute(op); });
    if (dp_sync_) finish_gradient_sync();
    idle_to_now(res.sync_wait_j[gi_]);  // waiting for the gradient sync
    if (si_ < kp_.optimizer.size()) {
      replayer_.run_kernels(tk_, kp_.optimizer[si_].first, kp_.optimizer[si_].second, collective_time());
      sync_clock();
    }
    if (dp_sync_ && kp_.gradient_sync == GradientSync::reduce_scatter) gather_parameters();
    res.outcomes[gi_].stats = replayer_.stats();
    res.outcomes[gi_].simgrid_end_s = sg4::Engine::get_clock() - origin_;
    if (kp_.on_gpu_done) kp_.on_gpu_done(g_);
  }

  // After the iteration: idle from this GPU's end until the last GPU's (GpuReplayer::wait_for_job_end).
  void wait_for_iteration_end(double iteration_s) {
    replayer_.wait_for_job_end(tk_, iteration_s);
    run_.res.outcomes[gi_].stats = replayer_.stats();
  }

 private:
  void sync_clock() { sg4::this_actor::sleep_until(origin_ + tk_.now()); }

  // Idle (at idle power, the clocks in effect) up to SimGrid's clock, adding the energy to `into`.
  void idle_to_now(double& into) {
    const EnergyMeter& meter = run_.res.outcomes[gi_].meter;
    const double e0 = meter.total_j();
    replayer_.idle_until(tk_, sg4::Engine::get_clock() - origin_);
    into += meter.total_j() - e0;
  }

  // In-program collectives: the closed form the synthesis wrote (TP folded), or the TP group on SimGrid.
  double collective(const Kernel& k) {
    if (run_.sh.T == 1) return k.duration_s;
    sync_clock();  // the GPU reached the collective: the others may have to wait for it
    const double t0 = sg4::Engine::get_clock();
    const CollectiveCall& call = kp_.collectives[k.collective - 1];
    run_.groups->run(run_.tp_group[static_cast<std::size_t>(r_ * run_.sh.S + s_)], t_, call.kind, call.bytes);
    const double d = sg4::Engine::get_clock() - t0;
    run_.res.collective_s[gi_] += d;
    return d;
  }
  // What a collective kernel lasts, for GpuReplayer::run_kernels.
  struct CollectiveTime {
    PipelineGpu* gpu;
    double operator()(const Kernel& k, double) const { return gpu->collective(k); }
  };
  CollectiveTime collective_time() { return CollectiveTime{this}; }

  void hand_over(std::size_t b) {
    ch_.queue->push_back(run_.buckets[si_][b].bucket.bytes);
    ch_.ready->release();
  }

  // One operation of the schedule (a forward or backward of a micro-batch and chunk).
  void compute(const PipelineOp& op) {
    const auto& buckets = run_.buckets[si_];
    const int S = run_.sh.S;
    idle_to_now(run_.res.pipeline_wait_j[gi_]);  // the GPU idled while it waited
    const auto v = static_cast<std::size_t>(op.chunk * S + s_);
    const auto& range = op.backward ? kp_.backward[v] : kp_.forward[v];
    replayer_.begin_computation(tk_, ComputationInfo{s_, op.chunk, op.microbatch, static_cast<int>(op_index_), op.backward});
    std::size_t pos = range.first;
    if (dp_sync_ && kp_.overlap_gradient_sync && op.backward &&
        last_backward_[static_cast<std::size_t>(op.chunk)] == static_cast<int>(op_index_)) {
      for (; next_bucket_ < buckets.size() && buckets[next_bucket_].chunk == op.chunk; ++next_bucket_) {
        const std::size_t end = buckets[next_bucket_].bucket.end;
        replayer_.run_kernels(tk_, pos, end, collective_time());
        pos = end;
        sync_clock();
        hand_over(next_bucket_);
      }
    }
    replayer_.run_kernels(tk_, pos, range.second, collective_time());
    // Nothing outside this GPU could change its course meanwhile: one SimGrid event.
    sync_clock();
    ++op_index_;
  }

  // The buckets not overlapped with the backward, then the wait for the sync stream.
  void finish_gradient_sync() {
    const double t0 = sg4::Engine::get_clock();
    for (; next_bucket_ < run_.buckets[si_].size(); ++next_bucket_) hand_over(next_bucket_);  // not overlapped
    ch_.done->acquire();
    run_.res.allreduce_s[gi_] = sg4::Engine::get_clock() - t0;
  }

  // Distributed optimizer: every replica gathers the parameters the others updated.
  void gather_parameters() {
    const double t0 = sg4::Engine::get_clock();
    for (const StageBucket& b : run_.buckets[si_])
      run_.groups->run(run_.dp_group[static_cast<std::size_t>(s_ * run_.sh.T + t_)], r_, CollectiveKind::all_gather,
                       b.bucket.param_bytes > 0 ? b.bucket.param_bytes : b.bucket.bytes);
    run_.res.allreduce_s[gi_] += sg4::Engine::get_clock() - t0;
    idle_to_now(run_.res.sync_wait_j[gi_]);
  }

  KernelPipelineRun& run_;
  const KernelPipeline& kp_;
  const int g_, t_, s_, r_;
  const std::size_t gi_, si_;
  const bool dp_sync_;
  GradSyncChannel ch_;
  GpuReplayer replayer_;
  LocalTime tk_;
  double origin_ = 0;
  std::vector<int> last_backward_;
  std::size_t next_bucket_ = 0, op_index_ = 0;
};

// The actors of GPU g: its gradient-sync stream (with DP > 1 and buckets to sync) and the GPU itself.
void spawn_gpu(SimWorld& world, KernelPipelineRun& run, int g, std::unique_ptr<PipelineGpu>& gpu) {
  const int s = (g / run.sh.T) % run.sh.S, t = g % run.sh.T, r = g / (run.sh.T * run.sh.S);
  const std::size_t gi = static_cast<std::size_t>(g);
  const bool dp_sync = run.sh.DP > 1 && !run.buckets[static_cast<std::size_t>(s)].empty();
  // The gradient sync runs on its own stream: an actor per GPU that takes each bucket as the backward
  // hands it over and runs the collective while the compute goes on.
  GradSyncChannel ch{sg4::Semaphore::create(0), sg4::Semaphore::create(0), std::make_shared<std::deque<double>>()};
  if (dp_sync)
    world.spawn("grad-sync" + std::to_string(g), gi, [&run, s, t, r, ch]() {
      for (std::size_t b = 0; b < run.buckets[static_cast<std::size_t>(s)].size(); ++b) {
        ch.ready->acquire();
        const double bytes = ch.queue->front();
        ch.queue->pop_front();
        run.groups->run(run.dp_group[static_cast<std::size_t>(s * run.sh.T + t)], r, run.grad_kind, bytes);
      }
      ch.done->release();
    });
  world.spawn("gpu" + std::to_string(g), gi, [&run, &gpu, g, dp_sync, ch]() {
    gpu = std::make_unique<PipelineGpu>(run, g, dp_sync, ch);
    gpu->run();
  });
}

}  // namespace

KernelPipelineResult simulate_kernel_pipeline(const KernelPipeline& kp, const GpuModel& model,
                                              const PolicyFactory& make_policy, const ReplayOptions& opts,
                                              const std::string& source) {
  check(kp, source);
  KernelPipelineResult res;
  KernelPipelineRun run(kp, model, make_policy, opts, res);
  SimWorld world;
  Collectives groups;
  run.declare_groups(groups);
  world.build(platform_of(run.sh, kp.use_cluster, kp.cluster, kp.p2p_latency_s, kp.p2p_bandwidth_bps), groups, kp.cluster.allreduce);
  std::vector<std::unique_ptr<PipelineGpu>> gpus(static_cast<std::size_t>(run.sh.gpus()));
  for (int g = 0; g < run.sh.gpus(); ++g) spawn_gpu(world, run, g, gpus[static_cast<std::size_t>(g)]);
  world.run();
  for (const auto& o : res.outcomes) res.iteration_s = std::max(res.iteration_s, o.stats.end_s);
  // The iteration holds every GPU until its last one ends (as run_engine's ranks wait for the job's end).
  for (auto& gpu : gpus) gpu->wait_for_iteration_end(res.iteration_s);
  return res;
}

}  // namespace dvfs
