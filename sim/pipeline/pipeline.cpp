#include "sim/pipeline/pipeline.hpp"

#include "sim/core/errors.hpp"

#include "sim/engine/simgrid_engine.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <exception>
#include <memory>

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

PipelineResult simulate_pipeline(const PipelineWorkload& wl, const std::string& source) {
  check(wl, source);
  const int S = wl.stages;
  PipelineResult res;
  res.stage_end_s.assign(static_cast<std::size_t>(S), 0);
  res.stage_busy_s.assign(static_cast<std::size_t>(S), 0);
  res.stage_blocked_s.assign(static_cast<std::size_t>(S), 0);

  auto engine = make_simgrid_engine();
  // A star: each stage's GPU has its own link (half the transfer latency, its bandwidth) to a switch.
  auto* zone = sg4::create_star_zone("pipeline");
  const double bw = wl.p2p_bandwidth_bps > 0 ? wl.p2p_bandwidth_bps : 1e15;
  std::vector<sg4::Host*> hosts;
  for (int s = 0; s < S; ++s) {
    sg4::Host* h = zone->create_host("stage" + std::to_string(s), 1e9)->seal();
    const sg4::Link* l = zone->create_link("link" + std::to_string(s), bw)->set_latency(wl.p2p_latency_s / 2)->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {sg4::LinkInRoute(l)}, true);
    hosts.push_back(h);
  }
  zone->seal();

  static int token = 0;  // payload: only the message matters
  std::exception_ptr failure;
  for (int s = 0; s < S; ++s) {
    sg4::Actor::create("stage" + std::to_string(s), hosts[static_cast<std::size_t>(s)], [&, s]() {
      try {
        const double origin = sg4::Engine::get_clock();
        for (const PipelineOp& op : one_f_one_b(s, S, wl.microbatches)) {
          const double t0 = sg4::Engine::get_clock();
          if (!op.backward && s > 0) sg4::Mailbox::by_name(box("act", s, op.microbatch))->get<int>();
          if (op.backward && s < S - 1) sg4::Mailbox::by_name(box("grad", s, op.microbatch))->get<int>();
          res.stage_blocked_s[static_cast<std::size_t>(s)] += sg4::Engine::get_clock() - t0;
          const double d = (op.backward ? wl.backward_s : wl.forward_s)[static_cast<std::size_t>(s)][static_cast<std::size_t>(op.microbatch)];
          sg4::this_actor::sleep_for(d);
          res.stage_busy_s[static_cast<std::size_t>(s)] += d;
          if (!op.backward && s < S - 1)
            sg4::Mailbox::by_name(box("act", s + 1, op.microbatch))->put_init(&token, static_cast<uint64_t>(wl.activation_bytes))->detach();
          if (op.backward && s > 0)
            sg4::Mailbox::by_name(box("grad", s - 1, op.microbatch))->put_init(&token, static_cast<uint64_t>(wl.activation_bytes))->detach();
        }
        res.stage_end_s[static_cast<std::size_t>(s)] = sg4::Engine::get_clock() - origin;
      } catch (...) {
        failure = std::current_exception();
      }
    });
  }
  engine->run();
  engine.reset();
  if (failure) std::rethrow_exception(failure);
  res.iteration_s = *std::max_element(res.stage_end_s.begin(), res.stage_end_s.end());
  return res;
}

}  // namespace dvfs
