#include "sim/pipeline/pipeline.hpp"

#include "models/src/switch_latency.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/gpu_replayer.hpp"

#include "sim/engine/simgrid_engine.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <exception>
#include <cmath>
#include <memory>
#include <random>
#include <map>
#include <set>

namespace sg4 = simgrid::s4u;

namespace dvfs {

std::vector<PipelineOp> one_f_one_b(int stage, int stages, int microbatches) {
  std::vector<PipelineOp> ops;
  const int warm = std::min(stages - stage - 1, microbatches);
  int f = 0, b = 0;
  for (; f < warm; ++f) ops.push_back({false, f});
  while (f < microbatches) {
    ops.push_back({false, f++});
    ops.push_back({true, b++});
  }
  while (b < microbatches) ops.push_back({true, b++});
  return ops;
}

std::vector<PipelineOp> gpipe(int stage, int stages, int microbatches) {
  (void)stage;
  (void)stages;
  std::vector<PipelineOp> ops;
  for (int m = 0; m < microbatches; ++m) ops.push_back({false, m});
  for (int m = microbatches - 1; m >= 0; --m) ops.push_back({true, m});
  return ops;
}

std::vector<PipelineOp> schedule_ops(PipelineSchedule s, int stage, int stages, int microbatches) {
  return s == PipelineSchedule::gpipe ? gpipe(stage, stages, microbatches) : one_f_one_b(stage, stages, microbatches);
}

namespace {

std::string box(const char* kind, int stage, int mb) {
  return std::string(kind) + "-" + std::to_string(stage) + "-" + std::to_string(mb);
}

void check(const PipelineWorkload& wl, const std::string& source) {
  if (wl.stages < 1) throw InputError(source, "stages", "expected at least one pipeline stage");
  if (wl.microbatches < 1) throw InputError(source, "microbatches", "expected at least one micro-batch");
  auto check_table = [&](const std::vector<std::vector<double>>& t, const char* name) {
    if (static_cast<int>(t.size()) != wl.stages)
      throw InputError(source, name, "expected one row per stage (" + std::to_string(wl.stages) + ")");
    for (const auto& row : t) {
      if (static_cast<int>(row.size()) != wl.microbatches)
        throw InputError(source, name, "expected one duration per micro-batch (" + std::to_string(wl.microbatches) + ")");
      for (double d : row)
        if (!(d >= 0)) throw InputError(source, name, "expected durations >= 0 s");
    }
  };
  check_table(wl.forward_s, "forward");
  check_table(wl.backward_s, "backward");
  if (!(wl.p2p_latency_s >= 0) || !(wl.p2p_bandwidth_bps >= 0) || !(wl.activation_bytes >= 0))
    throw InputError(source, "p2p", "expected latency, bandwidth and bytes >= 0");
}

}  // namespace

namespace {

// Hosts for S x DP GPUs (GPU g = replica * S + stage): a star of p2p links, or the cluster of
// ClusterSpec with routes between the GPUs that talk (pipeline neighbours, data-parallel ring
// neighbours).
std::vector<sg4::Host*> build_hosts(int S, int DP, bool use_cluster, const ClusterSpec& cs, double p2p_latency_s,
                                    double p2p_bandwidth_bps) {
  const int N = S * DP;
  std::vector<sg4::Host*> hosts;
  if (!use_cluster) {
    // A star: each GPU has its own link (half the transfer latency, its bandwidth) to a switch.
    auto* zone = sg4::create_star_zone("pipeline");
    const double bw = p2p_bandwidth_bps > 0 ? p2p_bandwidth_bps : 1e15;
    for (int g = 0; g < N; ++g) {
      sg4::Host* h = zone->create_host("gpu" + std::to_string(g), 1e9)->seal();
      const sg4::Link* l = zone->create_link("link" + std::to_string(g), bw)->set_latency(p2p_latency_s / 2)->seal();
      zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(l)}, true);
      hosts.push_back(h);
    }
    zone->seal();
    return hosts;
  }
  auto* zone = sg4::create_full_zone("cluster");
  auto bw = [](double b) { return b > 0 ? b : 1e15; };
  // Full duplex: separate send and receive links per GPU, for NVLink and for the network.
  std::vector<const sg4::Link*> nv_tx, nv_rx, nic_tx, nic_rx;
  for (int g = 0; g < N; ++g) {
    const std::string id = std::to_string(g);
    hosts.push_back(zone->create_host("gpu" + id, 1e9)->seal());
    nv_tx.push_back(zone->create_link("nvlink-tx" + id, bw(cs.intra_bw_bps))->set_latency(cs.intra_latency_s / 2)->seal());
    nv_rx.push_back(zone->create_link("nvlink-rx" + id, bw(cs.intra_bw_bps))->set_latency(cs.intra_latency_s / 2)->seal());
    nic_tx.push_back(zone->create_link("nic-tx" + id, bw(cs.inter_bw_bps))->set_latency(cs.inter_latency_s / 2)->seal());
    nic_rx.push_back(zone->create_link("nic-rx" + id, bw(cs.inter_bw_bps))->set_latency(cs.inter_latency_s / 2)->seal());
  }
  const double backbone_bw = cs.inter_bw_bps > 0 ? cs.inter_bw_bps * N / cs.oversubscription : 1e15;
  const sg4::Link* backbone = zone->create_link("backbone", backbone_bw)->seal();
  std::set<std::pair<int, int>> routed;
  auto one_way = [&](int a, int b) {
    if (a == b || !routed.insert({a, b}).second) return;
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    std::vector<sg4::LinkInRoute> links;
    if (a / cs.gpus_per_node == b / cs.gpus_per_node)
      links = {sg4::LinkInRoute(nv_tx[ua]), sg4::LinkInRoute(nv_rx[ub])};
    else
      links = {sg4::LinkInRoute(nic_tx[ua]), sg4::LinkInRoute(backbone), sg4::LinkInRoute(nic_rx[ub])};
    zone->add_route(hosts[ua]->get_netpoint(), hosts[ub]->get_netpoint(), nullptr, nullptr, links, false);
  };
  for (int r = 0; r < DP; ++r)
    for (int s = 0; s < S; ++s) {
      const int g = r * S + s;
      if (s + 1 < S) one_way(g, g + 1), one_way(g + 1, g);
      if (DP > 1 && cs.allreduce == AllReduceAlgorithm::ring)
        one_way(g, ((r + 1) % DP) * S + s), one_way(((r + 1) % DP) * S + s, g);
      if (DP > 1 && cs.allreduce == AllReduceAlgorithm::tree && r > 0)
        one_way(g, ((r - 1) / 2) * S + s), one_way(((r - 1) / 2) * S + s, g);
    }
  zone->seal();
  return hosts;
}

// Runs an actor's body; a failure stops every actor (the others would wait for it forever) and is
// rethrown by run_and_rethrow once the engine is done.
template <class Body>
void guarded(std::exception_ptr& failure, Body&& body) {
  try {
    body();
  } catch (...) {
    if (!failure) failure = std::current_exception();
    sg4::Actor::kill_all();
  }
}

void run_and_rethrow(std::unique_ptr<sg4::Engine>& engine, const std::exception_ptr& failure) {
  engine->run();
  engine.reset();
  if (failure) std::rethrow_exception(failure);
}

int token = 0;  // message payload: only the message matters

// At least one byte: SimGrid completes an empty message to a permanent receiver at once, without the
// links' latency.
uint64_t message_bytes(double bytes) { return std::max<uint64_t>(1, static_cast<uint64_t>(bytes)); }

// One GPU's iteration: 1F1B over the micro-batches (wait for the input, `compute(op)` advances the
// GPU, send the output), then the ring all-reduce of its stage's gradients with the other replicas.
template <class Compute>
void run_gpu(PipelineSchedule schedule, const ClusterSpec& cs, int g, int S, int DP, int M, double activation_bytes,
             double gradient_bytes, Compute&& compute, double& blocked_s, double& allreduce_s) {
  const int r = g / S, s = g % S;
  const std::string rep = std::to_string(r) + "-";
  // This GPU is the permanent receiver of its mailboxes: a message then travels as soon as it is sent
  // (eager, like NCCL/RDMA into a posted buffer), not only once the receiver asks for it.
  const sg4::ActorPtr self = sg4::Actor::self();
  for (int m = 0; m < M; ++m) {
    if (s > 0) sg4::Mailbox::by_name(box(("act" + rep).c_str(), s, m))->set_receiver(self);
    if (s < S - 1) sg4::Mailbox::by_name(box(("grad" + rep).c_str(), s, m))->set_receiver(self);
  }
  if (DP > 1 && gradient_bytes > 0) {
    if (cs.allreduce == AllReduceAlgorithm::ring) {
      for (int step = 0; step < 2 * (DP - 1); ++step)
        sg4::Mailbox::by_name("ar" + std::to_string(s) + "-" + std::to_string(step) + "-" + std::to_string(r))->set_receiver(self);
    } else {
      for (int k = 0; k < std::max(1, cs.tree_chunks); ++k) {
        sg4::Mailbox::by_name("tr" + std::to_string(s) + "-up" + std::to_string(k) + "-" + std::to_string(r))->set_receiver(self);
        sg4::Mailbox::by_name("tr" + std::to_string(s) + "-down" + std::to_string(k) + "-" + std::to_string(r))->set_receiver(self);
      }
    }
  }
  for (const PipelineOp& op : schedule_ops(schedule, s, S, M)) {
    const double t0 = sg4::Engine::get_clock();
    if (!op.backward && s > 0) sg4::Mailbox::by_name(box(("act" + rep).c_str(), s, op.microbatch))->get<int>();
    if (op.backward && s < S - 1) sg4::Mailbox::by_name(box(("grad" + rep).c_str(), s, op.microbatch))->get<int>();
    blocked_s += sg4::Engine::get_clock() - t0;
    compute(op);
    if (!op.backward && s < S - 1)
      sg4::Mailbox::by_name(box(("act" + rep).c_str(), s + 1, op.microbatch))
          ->put_init(&token, message_bytes(activation_bytes))->detach();
    if (op.backward && s > 0)
      sg4::Mailbox::by_name(box(("grad" + rep).c_str(), s - 1, op.microbatch))
          ->put_init(&token, message_bytes(activation_bytes))->detach();
  }
  if (DP > 1 && gradient_bytes > 0) {
    const double t0 = sg4::Engine::get_clock();
    // Ring: a step's send is posted once the previous one to the same peer has arrived, as NCCL's
    // do (otherwise a replica whose inputs are all there would post every step at once, they would
    // share the link and the first would arrive as late as the last). Tree: chunks are posted without
    // waiting, so their latencies overlap; their bandwidth is then shared, which delays the first
    // chunks of a bandwidth-bound tree (a known limit: NCCL's trees pipeline on both).
    std::map<int, sg4::CommPtr> last_send;
    std::vector<sg4::CommPtr> in_flight;
    auto send = [&](const std::string& mailbox, int peer, uint64_t bytes) {
      if (cs.allreduce == AllReduceAlgorithm::ring) {
        auto it = last_send.find(peer);
        if (it != last_send.end()) it->second->wait();
        last_send[peer] = sg4::Mailbox::by_name(mailbox)->put_async(&token, bytes);
      } else {
        in_flight.push_back(sg4::Mailbox::by_name(mailbox)->put_async(&token, bytes));
      }
    };
    if (cs.allreduce == AllReduceAlgorithm::ring) {
      const auto chunk = message_bytes(gradient_bytes / DP);
      const int next = (r + 1) % DP;
      for (int step = 0; step < 2 * (DP - 1); ++step) {
        const std::string tag = "ar" + std::to_string(s) + "-" + std::to_string(step) + "-";
        send(tag + std::to_string(next), next, chunk);
        sg4::Mailbox::by_name(tag + std::to_string(r))->get<int>();
      }
    } else {
      const int K = std::max(1, cs.tree_chunks);
      const auto chunk = message_bytes(gradient_bytes / K);
      const int parent = (r - 1) / 2;
      std::vector<int> children;
      for (int c : {2 * r + 1, 2 * r + 2})
        if (c < DP) children.push_back(c);
      const std::string base = "tr" + std::to_string(s) + "-";
      for (int k = 0; k < K; ++k) {  // reduce: children's chunk k in, the sum up to the parent
        for (std::size_t c = 0; c < children.size(); ++c)
          sg4::Mailbox::by_name(base + "up" + std::to_string(k) + "-" + std::to_string(r))->get<int>();
        if (r > 0) send(base + "up" + std::to_string(k) + "-" + std::to_string(parent), parent, chunk);
      }
      for (int k = 0; k < K; ++k) {  // broadcast: chunk k from the parent, on to the children
        if (r > 0) sg4::Mailbox::by_name(base + "down" + std::to_string(k) + "-" + std::to_string(r))->get<int>();
        for (int c : children) send(base + "down" + std::to_string(k) + "-" + std::to_string(c), c, chunk);
      }
    }
    for (auto& kv : last_send) kv.second->wait();  // a comm must not outlive its scope while in flight
    for (auto& c : in_flight) c->wait();
    allreduce_s = sg4::Engine::get_clock() - t0;
  }
}

}  // namespace

PipelineResult simulate_pipeline(const PipelineWorkload& wl, const std::string& source) {
  check(wl, source);
  const int S = wl.stages, DP = wl.data_parallel;
  if (DP < 1) throw InputError(source, "data_parallel", "expected at least one replica");
  const int N = S * DP;
  if (!wl.gradient_bytes.empty() && static_cast<int>(wl.gradient_bytes.size()) != S)
    throw InputError(source, "gradient_bytes", "expected one size per stage");
  if (!wl.slowdown.empty() && static_cast<int>(wl.slowdown.size()) != N)
    throw InputError(source, "slowdown", "expected one factor per GPU (" + std::to_string(N) + ")");
  for (double f : wl.slowdown)
    if (!(f > 0)) throw InputError(source, "slowdown", "expected factors > 0");
  if (!(wl.jitter_cv >= 0)) throw InputError(source, "jitter_cv", "expected >= 0");
  const ClusterSpec& cs = wl.cluster;
  if (wl.use_cluster && (cs.gpus_per_node < 1 || cs.intra_bw_bps < 0 || cs.inter_bw_bps < 0 || !(cs.oversubscription >= 1)))
    throw InputError(source, "cluster", "expected gpus_per_node >= 1, bandwidths >= 0 and oversubscription >= 1");
  PipelineResult res;
  res.stage_end_s.assign(static_cast<std::size_t>(N), 0);
  res.stage_busy_s.assign(static_cast<std::size_t>(N), 0);
  res.stage_blocked_s.assign(static_cast<std::size_t>(N), 0);
  res.allreduce_s.assign(static_cast<std::size_t>(N), 0);

  // Durations, with per-GPU slowdown and seeded jitter, fixed before the replay.
  std::vector<std::vector<double>> fwd(static_cast<std::size_t>(N)), bwd(static_cast<std::size_t>(N));
  std::mt19937_64 rng(wl.seed);
  const double sigma = std::sqrt(std::log1p(wl.jitter_cv * wl.jitter_cv));
  // Mean-one lognormal factors, drawn with the project's Box-Muller (same on every standard library).
  auto jitter = [&] { return wl.jitter_cv > 0 ? std::exp(sigma * standard_normal(rng) - 0.5 * sigma * sigma) : 1.0; };
  for (int g = 0; g < N; ++g) {
    const int s = g % S;
    const double k = wl.slowdown.empty() ? 1.0 : wl.slowdown[static_cast<std::size_t>(g)];
    for (int m = 0; m < wl.microbatches; ++m) {
      fwd[static_cast<std::size_t>(g)].push_back(wl.forward_s[static_cast<std::size_t>(s)][static_cast<std::size_t>(m)] * k * jitter());
      bwd[static_cast<std::size_t>(g)].push_back(wl.backward_s[static_cast<std::size_t>(s)][static_cast<std::size_t>(m)] * k * jitter());
    }
  }

  auto engine = make_simgrid_engine();
  const std::vector<sg4::Host*> hosts = build_hosts(S, DP, wl.use_cluster, cs, wl.p2p_latency_s, wl.p2p_bandwidth_bps);

  std::exception_ptr failure;
  for (int g = 0; g < N; ++g) {
    sg4::Actor::create("gpu" + std::to_string(g), hosts[static_cast<std::size_t>(g)], [&, g]() {
      guarded(failure, [&] {
        const std::size_t gi = static_cast<std::size_t>(g);
        const double origin = sg4::Engine::get_clock();
        run_gpu(wl.schedule, cs, g, S, DP, wl.microbatches, wl.activation_bytes,
                wl.gradient_bytes.empty() ? 0.0 : wl.gradient_bytes[static_cast<std::size_t>(g % S)],
                [&](const PipelineOp& op) {
                  const double d = (op.backward ? bwd : fwd)[gi][static_cast<std::size_t>(op.microbatch)];
                  sg4::this_actor::sleep_for(d);
                  res.stage_busy_s[gi] += d;
                },
                res.stage_blocked_s[gi], res.allreduce_s[gi]);
        res.stage_end_s[gi] = sg4::Engine::get_clock() - origin;
      });
    });
  }
  run_and_rethrow(engine, failure);
  res.iteration_s = *std::max_element(res.stage_end_s.begin(), res.stage_end_s.end());
  return res;
}

KernelPipelineResult simulate_kernel_pipeline(const KernelPipeline& kp, const GpuModel& model,
                                              const PolicyFactory& make_policy, const ReplayOptions& opts,
                                              const std::string& source) {
  const int S = static_cast<int>(kp.stages.size());
  if (S < 1) throw InputError(source, "stages", "expected at least one pipeline stage");
  if (kp.microbatches < 1) throw InputError(source, "microbatches", "expected at least one micro-batch");
  if (static_cast<int>(kp.forward.size()) != S || static_cast<int>(kp.backward.size()) != S)
    throw InputError(source, "forward", "expected one forward and one backward kernel range per stage");
  if (!kp.optimizer.empty() && static_cast<int>(kp.optimizer.size()) != S)
    throw InputError(source, "optimizer", "expected one optimizer kernel range per stage, or none");
  for (int s = 0; s < S; ++s)
    for (const auto& r : {kp.forward[static_cast<std::size_t>(s)], kp.backward[static_cast<std::size_t>(s)]})
      if (r.first > r.second || r.second > kp.stages[static_cast<std::size_t>(s)].kernels.size())
        throw InputError(source, "stage " + std::to_string(s), "kernel range outside the stage's kernels");
  if (!(kp.p2p_latency_s >= 0)) throw InputError(source, "p2p_latency_s", "expected >= 0");
  for (const Rank& r : kp.stages)
    for (const Kernel& k : r.kernels)
      if (k.annotation_set >= kp.annotation_sets)
        throw InputError(source, "annotation_sets", "a kernel refers to an annotation set the pipeline does not hold");

  const int DP = kp.data_parallel;
  if (DP < 1) throw InputError(source, "data_parallel", "expected at least one replica");
  if (!kp.gradient_bytes.empty() && static_cast<int>(kp.gradient_bytes.size()) != S)
    throw InputError(source, "gradient_bytes", "expected one size per stage");
  const int N = S * DP;
  KernelPipelineResult res;
  std::vector<std::unique_ptr<Policy>> policies;
  for (int g = 0; g < N; ++g) {
    policies.push_back(make_policy(g));
    res.outcomes.push_back(RankOutcome{g, policies.back()->name(), {}, EnergyMeter(0, kp.annotation_sets, model.sm_clocks_mhz().size(), 0), 0});
  }
  res.blocked_s.assign(static_cast<std::size_t>(N), 0);
  res.allreduce_s.assign(static_cast<std::size_t>(N), 0);

  // The straggler replica replays its own copy of the stage programs with stretched kernels.
  std::vector<Rank> slow;
  if (kp.straggler_replica >= 0) {
    if (kp.straggler_replica >= DP || !(kp.straggler_factor > 0))
      throw InputError(source, "straggler_replica", "expected a replica index below data_parallel and a factor > 0");
    slow = kp.stages;
    for (Rank& r : slow)
      for (Kernel& k : r.kernels) k.duration_s *= kp.straggler_factor;
  }
  auto engine = make_simgrid_engine();
  const std::vector<sg4::Host*> hosts = build_hosts(S, DP, kp.use_cluster, kp.cluster, kp.p2p_latency_s, kp.p2p_bandwidth_bps);
  std::exception_ptr failure;
  for (int g = 0; g < N; ++g) {
    sg4::Actor::create("gpu" + std::to_string(g), hosts[static_cast<std::size_t>(g)], [&, g]() {
      guarded(failure, [&] {
        const std::size_t gi = static_cast<std::size_t>(g), si = static_cast<std::size_t>(g % S);
        const bool straggler = g / S == kp.straggler_replica;
        GpuReplayer replayer(straggler ? slow[si] : kp.stages[si], model, *policies[gi], opts, res.outcomes[gi].meter);
        LocalTime tk;
        const double origin = sg4::Engine::get_clock();
        run_gpu(kp.schedule, kp.cluster, g, S, DP, kp.microbatches, kp.activation_bytes, kp.gradient_bytes.empty() ? 0.0 : kp.gradient_bytes[si],
                [&](const PipelineOp& op) {
                  replayer.idle_until(tk, sg4::Engine::get_clock() - origin);  // the GPU idled while it waited
                  const auto& range = op.backward ? kp.backward[si] : kp.forward[si];
                  replayer.run_kernels(tk, range.first, range.second);
                  // Nothing outside this GPU could change its course meanwhile: one SimGrid event.
                  sg4::this_actor::sleep_until(origin + tk.now());
                },
                res.blocked_s[gi], res.allreduce_s[gi]);
        replayer.idle_until(tk, sg4::Engine::get_clock() - origin);  // waiting in the all-reduce
        if (si < kp.optimizer.size()) {
          replayer.run_kernels(tk, kp.optimizer[si].first, kp.optimizer[si].second);
          sg4::this_actor::sleep_until(origin + tk.now());
        }
        res.outcomes[gi].stats = replayer.stats();
        res.outcomes[gi].simgrid_end_s = sg4::Engine::get_clock() - origin;
      });
    });
  }
  run_and_rethrow(engine, failure);
  for (const auto& o : res.outcomes) res.iteration_s = std::max(res.iteration_s, o.stats.end_s);
  return res;
}

}  // namespace dvfs
