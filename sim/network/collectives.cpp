#include "sim/network/collectives.hpp"

#include "sim/core/errors.hpp"
#include "sim/network/simgrid_world.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sg4 = simgrid::s4u;

namespace dvfs {

namespace {

std::string box(char role, int group, int member) {
  return "c" + std::to_string(group) + role + std::to_string(member);
}

}  // namespace

int Collectives::add_group(std::vector<int> members) {
  if (members.empty()) throw InputError("collectives", "group", "expected at least one member");
  groups_.push_back(Group{std::move(members), nullptr, 0, 0});
  return static_cast<int>(groups_.size()) - 1;
}

std::vector<std::pair<int, int>> Collectives::route_pairs(AllReduceAlgorithm algorithm) const {
  std::vector<std::pair<int, int>> out;
  for (const Group& g : groups_) {
    const int n = static_cast<int>(g.members.size());
    if (n < 2) continue;
    const auto m = [&](int i) { return g.members[static_cast<std::size_t>(i)]; };
    for (int i = 0; i < n; ++i) {
      out.emplace_back(m(i), m((i + 1) % n));
      out.emplace_back(m((i + 1) % n), m(i));
      if (algorithm == AllReduceAlgorithm::tree && i > 0) {
        out.emplace_back(m(i), m((i - 1) / 2));
        out.emplace_back(m((i - 1) / 2), m(i));
      }
    }
    if (n <= 16)  // all-to-all only in small groups (context / expert parallelism)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j) out.emplace_back(m(i), m(j));
  }
  return out;
}

void Collectives::prepare(const std::vector<sg4::Host*>& hosts, AllReduceAlgorithm algorithm) {
  algorithm_ = algorithm;
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    const int n = static_cast<int>(g.members.size());
    g.barrier = sg4::Barrier::create(static_cast<unsigned>(n));
    auto host = [&](int i) { return hosts.at(static_cast<std::size_t>(g.members[static_cast<std::size_t>(i)])); };
    for (int i = 0; n > 1 && i < n; ++i) {
      g.ring_latency_s = std::max(g.ring_latency_s, route_latency_s(host(i), host((i + 1) % n)));
      if (i > 0) g.tree_latency_s = std::max(g.tree_latency_s, route_latency_s(host(i), host((i - 1) / 2)));
    }
  }
}

void Collectives::run(int gid, int rank, CollectiveKind kind, double bytes) {
  Group& g = groups_.at(static_cast<std::size_t>(gid));
  const int n = static_cast<int>(g.members.size());
  if (n <= 1) return;
  if (is_transfer(kind))
    throw InputError("collectives", "kind", "send / recv are point-to-point transfers, not collectives");
  g.barrier->wait();  // nobody can finish before the last member has contributed
  // Receives are posted before the sends, so every flow starts at once (a receive posted late would
  // delay its flow: SimGrid mailboxes rendezvous).
  std::vector<sg4::CommPtr> comms;
  std::vector<int*> payloads(static_cast<std::size_t>(n));
  std::size_t next_payload = 0;
  auto receive = [&](char role, int count) {
    for (int i = 0; i < count; ++i) comms.push_back(sg4::Mailbox::by_name(box(role, gid, rank))->get_async<int>(&payloads[next_payload++]));
  };
  auto send = [&](char role, int to, double b) {
    comms.push_back(sg4::Mailbox::by_name(box(role, gid, to))->put_async(&message_token, message_bytes(b)));
  };
  double extra_latency = 0;
  if (kind == CollectiveKind::all_reduce && algorithm_ == AllReduceAlgorithm::tree) {
    const int children = (2 * rank + 1 < n) + (2 * rank + 2 < n);
    receive('u', children);
    if (rank > 0) receive('d', 1);
    if (rank > 0) send('u', (rank - 1) / 2, bytes);
    for (int c : {2 * rank + 1, 2 * rank + 2})
      if (c < n) send('d', c, bytes);
    extra_latency = (2 * tree_depth(n) - 1) * g.tree_latency_s;
  } else if (kind == CollectiveKind::all_to_all) {
    receive('a', n - 1);
    for (int j = 0; j < n; ++j)
      if (j != rank) send('a', j, bytes / n);
  } else {
    const bool chain = kind == CollectiveKind::broadcast;  // a pipelined chain from member 0
    if (!chain || rank > 0) receive('r', 1);
    if (!chain || rank < n - 1) send('r', (rank + 1) % n, ring_flow_bytes(kind, n, bytes));
    extra_latency = (ring_steps(kind, n) - 1) * g.ring_latency_s;
  }
  for (auto& c : comms) c->wait();
  g.barrier->wait();  // the collective moves at its slowest flow
  if (extra_latency > 0) sg4::this_actor::sleep_for(extra_latency);
}

}  // namespace dvfs
