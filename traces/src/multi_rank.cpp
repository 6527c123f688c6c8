#include "traces/src/multi_rank.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace dvfs {

namespace {

std::string describe(const CollectiveCall& c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s of %.0f bytes", to_string(c.kind), c.bytes);
  return buf;
}

struct GroupKey {
  std::string name;
  std::vector<int> ranks;  // {-size} when the trace truncated the list
  bool operator<(const GroupKey& o) const { return name != o.name ? name < o.name : ranks < o.ranks; }
};

}  // namespace

bool group_complete(const Workload& wl, int g) {
  if (g < 0 || static_cast<std::size_t>(g) >= wl.groups.size() || wl.groups[static_cast<std::size_t>(g)].empty()) return false;
  for (int r : wl.groups[static_cast<std::size_t>(g)]) {
    bool found = false;
    for (const Rank& rk : wl.ranks) found = found || rk.id == r;
    if (!found) return false;
  }
  return true;
}

bool group_simulated(const Workload& wl, int g) { return group_complete(wl, g) && wl.groups[static_cast<std::size_t>(g)].size() > 1; }

namespace {

// Facts every rank of one job shares (distributedInfo): a difference proves two jobs.
void check_one_job(const std::vector<RankTrace>& parts) {
  const RankTrace* sized = nullptr;
  const RankTrace* backed = nullptr;
  for (const RankTrace& p : parts) {
    if (p.world_size > 0) {
      if (sized && sized->world_size != p.world_size)
        throw InputError(p.file, "distributedInfo.world_size",
                         "world size " + std::to_string(p.world_size) + " here, " + std::to_string(sized->world_size) + " in " +
                             sized->file + ": the traces are ranks of different jobs");
      if (!sized) sized = &p;
      for (const Rank& r : p.workload.ranks)
        if (r.id >= p.world_size)
          throw InputError(p.file, "distributedInfo.rank",
                           "rank " + std::to_string(r.id) + " is outside the job's world size " + std::to_string(p.world_size));
    }
    if (!p.backend.empty()) {
      if (backed && backed->backend != p.backend)
        throw InputError(p.file, "distributedInfo.backend",
                         "backend \"" + p.backend + "\" here, \"" + backed->backend + "\" in " + backed->file +
                             ": the traces are ranks of different jobs");
      if (!backed) backed = &p;
    }
  }
}

// Signs that the ranks were not recorded together, each as one line saying why.
void note_unrelated_ranks(const std::vector<RankTrace>& parts, std::vector<std::string>& notes) {
  const RankTrace& a = parts.front();
  if (a.workload.ranks.empty()) return;
  const Rank& ra = a.workload.ranks.front();
  auto span_ns = [](const Rank& r) {
    return r.kernels.empty() ? 0.0 : (r.recorded_start_s.back() + r.kernels.back().duration_s) * 1e9;
  };
  char buf[96];
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const RankTrace& b = parts[i];
    if (b.workload.ranks.empty()) continue;
    const Rank& rb = b.workload.ranks.front();
    if (rb.steps.size() != ra.steps.size())
      notes.push_back("rank " + std::to_string(rb.id) + " (" + b.file + ") has " + std::to_string(rb.steps.size()) + " steps, rank " +
                      std::to_string(ra.id) + " (" + a.file + ") " + std::to_string(ra.steps.size()) +
                      ": the traces do not cover the same steps of one job");
    if (ra.origin_epoch_ns <= 0 || rb.origin_epoch_ns <= 0) continue;
    const double a0 = ra.origin_epoch_ns, a1 = a0 + span_ns(ra), b0 = rb.origin_epoch_ns, b1 = b0 + span_ns(rb);
    if (b0 <= a1 && a0 <= b1) continue;
    std::snprintf(buf, sizeof buf, "%.3f s", (b0 > a1 ? b0 - a1 : a0 - b1) * 1e-9);
    notes.push_back("rank " + std::to_string(rb.id) + " (" + b.file + ") was recorded " + buf + (b0 > a1 ? " after" : " before") +
                    " rank " + std::to_string(ra.id) + " (" + a.file +
                    "): their timelines do not overlap, so they may be ranks of different runs (or of hosts whose clocks disagree)");
  }
}

// Whether ranks 0 .. size - 1 are all among the merged files.
bool whole_world_here(int size, const std::map<int, std::string>& file_of_rank) {
  for (int r = 0; r < size; ++r)
    if (!file_of_rank.count(r)) return false;
  return size > 0;
}

// Where the members of one complete group first make different calls: the file of the member where it shows, what
// differs (to follow the group's name) and, for a differing count, what that says of the traces.
struct Mismatch {
  std::string file, what;
  std::string reading;  // what the difference says where the groups are the trace's own ("" when nothing more)
};

std::optional<Mismatch> first_mismatch(const std::vector<int>& members, const std::map<int, std::vector<const CollectiveCall*>>& by_rank,
                                       std::map<int, std::string>& file_of_rank) {
  if (by_rank.empty()) return std::nullopt;  // defensive: the caller lists only groups with a collective
  const auto& [first_rank, first_calls] = *by_rank.begin();
  for (int member : members) {
    auto it = by_rank.find(member);
    const std::size_t n = it == by_rank.end() ? 0 : it->second.size();
    if (n != first_calls.size())
      return Mismatch{file_of_rank[member], ": " + std::to_string(n) + (n == 1 ? " call" : " calls") + " on rank " + std::to_string(member) + ", " +
                                                std::to_string(first_calls.size()) + " on rank " + std::to_string(first_rank) + " (" +
                                                file_of_rank[first_rank] + ")",
                      ": the traces do not cover the same steps"};
    for (std::size_t i = 0; i < n; ++i) {
      const CollectiveCall& a = *first_calls[i];
      const CollectiveCall& b = *it->second[i];
      if (a.kind != b.kind || std::fabs(a.bytes - b.bytes) > 0.5)
        return Mismatch{file_of_rank[member], ", call " + std::to_string(i) + ": " + describe(b) + " on rank " + std::to_string(member) +
                                                  ", " + describe(a) + " on rank " + std::to_string(first_rank) + " (" +
                                                  file_of_rank[first_rank] + ")",
                        ""};
    }
  }
  return std::nullopt;
}

using PointToPoint = std::map<std::pair<int, int>, std::vector<CollectiveCall*>>;  // (from, to) -> calls in stream order

std::string count_of(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

bool inferred_transfer(const Workload& wl, const CollectiveCall& c) {
  return c.group >= 0 && starts_with(wl.group_names[static_cast<std::size_t>(c.group)], kInferredWorldGroup);
}

bool all_inferred(const Workload& wl, const std::vector<CollectiveCall*>& calls) {
  return std::all_of(calls.begin(), calls.end(), [&wl](const CollectiveCall* c) { return inferred_transfer(wl, *c); });
}

// A dry run of the meetings the engine holds ranks at: it replays each rank's kernels one after another and holds a
// rank at each collective of a complete group and at each send / receive whose peer is here (not itself) until the others meet it
// there; a batch's kernel (CollectiveCall::batched) posts all its sends and receives and goes on when each has met its
// peer's (the first of the peer's current calls on that channel not met yet). Incremental: a transfer un-paired (peer
// -1) while a rank waits at it, or before, is passed over on resume, so un-pairing channel after channel costs one pass
// over the calls in all. A caller outside its group, or a member listed twice, never releases the group here (only
// mixed or malformed traces have them; the engine's barrier would count the caller), so the dry run errs towards
// "cannot finish".
class MeetingDryRun {
 public:
  explicit MeetingDryRun(const Workload& wl) : wl_(wl), waits_(wl.ranks.size()), members_(wl.groups.size()), distinct_(wl.groups.size()),
                                               arrived_(wl.groups.size(), 0), next_(wl.ranks.size(), 0), waiting_(wl.ranks.size(), false),
                                               met_(wl.ranks.size()) {
    for (std::size_t i = 0; i < wl.ranks.size(); ++i) index_of_[wl.ranks[i].id] = i;
    for (std::size_t g = 0; g < wl.groups.size(); ++g)
      if (group_simulated(wl, static_cast<int>(g))) {
        members_[g] = wl.groups[g];
        std::sort(members_[g].begin(), members_[g].end());
        distinct_[g] = std::adjacent_find(members_[g].begin(), members_[g].end()) == members_[g].end();
      }
    for (std::size_t i = 0; i < wl.ranks.size(); ++i) {
      for (const Kernel& k : wl.ranks[i].kernels) {
        const CallSpan<const CollectiveCall> calls = calls_of(wl, k);
        if (calls.empty()) continue;
        const CollectiveCall& c = *calls.begin();
        if (is_transfer(c.kind) ? !peerless(calls, i) : c.group >= 0 && !members_[static_cast<std::size_t>(c.group)].empty()) waits_[i].push_back(calls);
      }
      todo_.push_back(i);
    }
  }

  // Runs until no rank can move; returns the calls ranks wait at (rank id, call), none when every rank finished.
  std::vector<std::pair<int, const CollectiveCall*>> run() {
    while (!todo_.empty()) {
      const std::size_t i = todo_.back();
      todo_.pop_back();
      arrive(i);
    }
    std::vector<std::pair<int, const CollectiveCall*>> stuck;
    for (std::size_t i = 0; i < waits_.size(); ++i)
      if (next_[i] < waits_[i].size()) {
        const CollectiveCall* at = waiting_[i] && is_transfer(waits_[i][next_[i]].begin()->kind) ? first_unmet(i) : nullptr;
        stuck.emplace_back(wl_.ranks[i].id, at ? at : waits_[i][next_[i]].begin());
      }
    return stuck;
  }

  // After transfers were un-paired: the ranks waiting at one go on.
  void resume(int rank_id) {
    const std::size_t i = index_of_.at(rank_id);
    if (waiting_[i] && is_transfer(waits_[i][next_[i]].begin()->kind) && all_met(i)) leave(i);
  }

 private:
  void leave(std::size_t i) {
    waiting_[i] = false;
    ++next_[i];
    todo_.push_back(i);
  }

  // A send / receive the engine holds rank i at: its peer is named (not un-paired), imported and not rank i itself.
  bool meets_peer(const CollectiveCall& c, std::size_t i) const {
    return is_transfer(c.kind) && c.peer >= 0 && index_of_.count(c.peer) > 0 && !transfer_to_self(c, wl_.ranks[i].id);
  }
  // Sends and receives of rank i none of which the engine holds it at (a collective's wait never is).
  bool peerless(const CallSpan<const CollectiveCall>& calls, std::size_t i) const {
    return is_transfer(calls.begin()->kind) && std::none_of(calls.begin(), calls.end(), [&](const CollectiveCall& c) { return meets_peer(c, i); });
  }
  // Whether every send / receive of rank i's current wait that has a peer here has met the peer's.
  bool all_met(std::size_t i) const { return first_unmet(i) == nullptr; }
  const CollectiveCall* first_unmet(std::size_t i) const {
    const CallSpan<const CollectiveCall>& calls = waits_[i][next_[i]];
    for (std::size_t k = 0; k < calls.size(); ++k)
      if (!met_[i][k] && meets_peer(calls.begin()[k], i)) return calls.begin() + k;
    return nullptr;
  }

  // Rank i's call k meets the first call not met yet of its peer's current wait that is the other end of its channel.
  void meet(std::size_t i, std::size_t k) {
    const CollectiveCall& c = waits_[i][next_[i]].begin()[k];
    const auto at = index_of_.find(c.peer);
    if (at == index_of_.end()) return;
    const std::size_t j = at->second;
    if (!waiting_[j]) return;
    const CollectiveKind other = c.kind == CollectiveKind::send ? CollectiveKind::recv : CollectiveKind::send;
    const CallSpan<const CollectiveCall>& theirs = waits_[j][next_[j]];
    for (std::size_t m = 0; m < theirs.size(); ++m) {
      const CollectiveCall& x = theirs.begin()[m];
      if (met_[j][m] || x.kind != other || x.peer != wl_.ranks[i].id) continue;  // x.peer: i is here (never j: meets_peer)
      met_[i][k] = met_[j][m] = true;
      if (j != i && all_met(j)) leave(j);
      return;
    }
  }

  void arrive(std::size_t i) {
    while (!waiting_[i] && next_[i] < waits_[i].size() && peerless(waits_[i][next_[i]], i)) ++next_[i];
    if (waiting_[i] || next_[i] == waits_[i].size()) return;
    waiting_[i] = true;
    const CallSpan<const CollectiveCall>& calls = waits_[i][next_[i]];
    met_[i].assign(calls.size(), false);
    const CollectiveCall& c = *calls.begin();
    if (is_transfer(c.kind)) {
      for (std::size_t k = 0; k < calls.size(); ++k)
        if (!met_[i][k] && meets_peer(calls.begin()[k], i)) meet(i, k);
      if (all_met(i)) leave(i);
      return;
    }
    const auto g = static_cast<std::size_t>(c.group);
    const bool member = std::binary_search(members_[g].begin(), members_[g].end(), wl_.ranks[i].id);
    if (!member || !distinct_[g] || ++arrived_[g] < members_[g].size()) return;
    arrived_[g] = 0;
    for (int m : members_[g]) leave(index_of_.at(m));
  }

  const Workload& wl_;
  std::map<int, std::size_t> index_of_;
  std::vector<std::vector<CallSpan<const CollectiveCall>>> waits_;
  std::vector<std::vector<int>> members_;  // of complete groups, sorted
  std::vector<bool> distinct_;
  std::vector<std::size_t> arrived_;  // members waiting at their group's next call
  std::vector<std::size_t> next_;
  std::vector<bool> waiting_;
  std::vector<std::vector<bool>> met_;  // per rank waiting at transfers: which calls of its wait met their peer's
  std::vector<std::size_t> todo_;
};

// Sends and receives inferred from "nccl:send R->D" annotations that pair up in number but in an order a replay of
// each rank's kernels one after another cannot finish (likely because PyTorch ran them on their own communicator and
// stream, beside the rank's other calls): the channels (from, to) ranks are stuck at, where every call on the channel
// was inferred, keep their recorded durations, channel by channel until the dry run finishes. Where ranks are stuck
// at anything else, every peer is put back and the engine names the deadlock as it does for recorded calls.
void unpair_unfinishable(Workload& out, PointToPoint& sends, PointToPoint& recvs, std::vector<std::string>* notes) {
  std::vector<std::pair<CollectiveCall*, int>> dropped;  // with the peer each had
  std::set<std::pair<int, int>> channels;
  std::pair<int, int> first{-1, -1};
  auto channel_inferred = [&](const std::pair<int, int>& ch) {
    for (PointToPoint* side : {&sends, &recvs})
      if (const auto it = side->find(ch); it != side->end() && !all_inferred(out, it->second)) return false;
    return true;
  };
  MeetingDryRun dry(out);
  for (auto stuck = dry.run(); !stuck.empty(); stuck = dry.run()) {
    std::set<std::pair<int, int>> these;
    for (const auto& [rank, c] : stuck)
      if (is_transfer(c->kind)) {
        const auto ch = transfer_channel(*c, rank);
        if (channel_inferred(ch)) these.insert(ch);
      }
    if (these.empty()) {
      for (const auto& [c, peer] : dropped) c->peer = peer;
      return;
    }
    for (const auto& ch : these) {
      if (channels.empty()) first = ch;
      channels.insert(ch);
      for (PointToPoint* side : {&sends, &recvs})
        if (const auto it = side->find(ch); it != side->end())
          for (CollectiveCall* c : it->second)
            if (c->peer >= 0) {
              dropped.emplace_back(c, c->peer);
              c->peer = -1;
            }
    }
    for (const auto& [rank, c] : stuck) dry.resume(rank);
  }
  if (dropped.empty() || !notes) return;
  notes->push_back("the sends and receives inferred from \"nccl:send\" / \"nccl:recv\" annotations pair up in number, but on " +
                   count_of(channels.size(), "channel", "channels") + " (one from rank " + std::to_string(first.first) + " to rank " +
                   std::to_string(first.second) + ") in an order a replay of each rank's kernels one after another cannot finish "
                   "(PyTorch runs sends and receives on their own communicator and stream, beside a rank's other calls); " +
                   count_of(dropped.size(), "call keeps its recorded duration", "calls keep their recorded durations"));
}

// Each sender's sends to a rank of the import against the receives there, in number (and, for inferred ones, in
// bytes, call by call). Sends and receives inferred from "nccl:send R->D" annotations read R and D as world ranks;
// where they do not pair up, that guess (or the profiled steps) was wrong: they keep their recorded durations (peer
// -1), with a note. Recorded ones that do not pair up in number are refused.
void pair_point_to_point(Workload& out, PointToPoint& sends, PointToPoint& recvs, std::map<int, std::string>& file_of_rank,
                         std::vector<std::string>* notes) {
  std::size_t unpaired = 0;
  std::string first_unpaired;
  auto unpair = [&](const std::vector<CollectiveCall*>& p2p, const std::string& what) {
    for (CollectiveCall* c : p2p) {
      c->peer = -1;
      ++unpaired;
    }
    if (first_unpaired.empty()) first_unpaired = what;
  };
  for (auto& [pair, s] : sends) {
    if (!file_of_rank.count(pair.second)) continue;  // the receiver is not part of this import
    const auto it = recvs.find(pair);
    const std::size_t n = it == recvs.end() ? 0 : it->second.size();
    const std::string channel = " from rank " + std::to_string(pair.first) + " to rank " + std::to_string(pair.second);
    std::string what;
    if (n != s.size()) {
      what = count_of(s.size(), "send", "sends") + channel + ", " + count_of(n, "receive", "receives") + " there (" + file_of_rank[pair.second] + ")";
      if (!all_inferred(out, s)) throw InputError(file_of_rank[pair.first], "collectives", what);
      if (it != recvs.end() && !all_inferred(out, it->second)) throw InputError(file_of_rank[pair.second], "collectives", what);
    } else if (all_inferred(out, s) && all_inferred(out, it->second)) {  // a wrong guess whose counts happen to match differs in bytes
      for (std::size_t k = 0; k < n && what.empty(); ++k)
        if (std::fabs(s[k]->bytes - it->second[k]->bytes) > 0.5)
          what = "send " + std::to_string(k + 1) + " of " + std::to_string(n) + channel + " carries " +
                 std::to_string(static_cast<long long>(s[k]->bytes)) + " bytes, its receive on rank " + std::to_string(pair.second) + " " +
                 std::to_string(static_cast<long long>(it->second[k]->bytes)) + " bytes (" + file_of_rank[pair.second] + ")";
    }
    if (what.empty()) continue;
    unpair(s, file_of_rank[pair.first] + ": " + what);
    if (it != recvs.end()) unpair(it->second, "");
  }
  for (auto& [pair, r] : recvs) {  // a receive whose send never comes would wait forever
    if (!file_of_rank.count(pair.first)) continue;  // the sender is not part of this import
    if (sends.count(pair)) continue;              // counted above
    const std::string what = count_of(r.size(), "receive", "receives") + " on rank " + std::to_string(pair.second) + " from rank " +
                             std::to_string(pair.first) + ", 0 sends there (" + file_of_rank[pair.first] + ")";
    if (!all_inferred(out, r)) throw InputError(file_of_rank[pair.second], "collectives", what);
    unpair(r, file_of_rank[pair.second] + ": " + what);
  }
  if (unpaired > 0 && notes)
    notes->push_back("the sends and receives inferred from \"nccl:send\" / \"nccl:recv\" annotations do not pair up across the "
                     "ranks (" + first_unpaired + "): the ranks in their names may be those of a process group smaller than the "
                     "world (the traces name none), or the ranks were profiled over different steps; " +
                     count_of(unpaired, "call keeps its recorded duration", "calls keep their recorded durations"));
  const bool paired_inferred = std::any_of(out.collectives.begin(), out.collectives.end(), [&out](const CollectiveCall& c) {
    return is_transfer(c.kind) && c.peer >= 0 && inferred_transfer(out, c);
  });
  if (paired_inferred) unpair_unfinishable(out, sends, recvs, notes);
}

}  // namespace

Workload merge_rank_workloads(std::vector<RankTrace> parts, std::vector<std::string>* notes) {
  if (parts.empty()) throw InputError("traces", "", "expected at least one rank trace");
  check_one_job(parts);
  if (notes) note_unrelated_ranks(parts, *notes);
  Workload out;
  out.source = parts.front().file;
  std::unordered_map<std::string, std::uint32_t> names, ann_names;
  std::map<std::pair<std::vector<std::uint32_t>, Phase>, std::uint32_t> sets;
  std::map<GroupKey, int> groups;
  std::map<int, std::string> file_of_rank;
  auto intern = [](std::unordered_map<std::string, std::uint32_t>& ids, std::vector<std::string>& table, const std::string& n) {
    auto [it, inserted] = ids.emplace(n, static_cast<std::uint32_t>(table.size()));
    if (inserted) table.push_back(n);
    return it->second;
  };
  for (RankTrace& part : parts) {
    Workload& w = part.workload;
    std::vector<std::uint32_t> name_map, set_map(w.annotation_sets.size(), 0);
    for (const std::string& n : w.names) name_map.push_back(intern(names, out.names, n));
    for (std::size_t i = 1; i < w.annotation_sets.size(); ++i) {
      std::vector<std::uint32_t> anns;
      for (std::uint32_t a : w.annotation_sets[i].annotations) anns.push_back(intern(ann_names, out.annotation_names, w.annotation_names[a]));
      std::sort(anns.begin(), anns.end());
      auto [it, inserted] = sets.emplace(std::make_pair(anns, w.annotation_sets[i].phase), static_cast<std::uint32_t>(out.annotation_sets.size()));
      if (inserted) out.annotation_sets.push_back(AnnotationSet{anns, w.annotation_sets[i].phase});
      set_map[i] = it->second;
    }
    std::vector<int> group_map;
    for (std::size_t g = 0; g < w.groups.size(); ++g) {
      GroupKey key{g < w.group_names.size() ? w.group_names[g] : "", w.groups[g]};
      const int size = g < w.group_sizes.size() ? w.group_sizes[g] : static_cast<int>(w.groups[g].size());
      if (key.ranks.empty()) key.ranks = {-size};
      auto [it, inserted] = groups.emplace(key, static_cast<int>(out.groups.size()));
      if (inserted) {
        out.groups.push_back(w.groups[g]);
        out.group_names.push_back(key.name);
        out.group_sizes.push_back(size);
      }
      group_map.push_back(it->second);
    }
    std::vector<std::uint32_t> call_map;
    for (CollectiveCall c : w.collectives) {
      if (c.group >= 0) c.group = group_map[static_cast<std::size_t>(c.group)];
      out.collectives.push_back(c);
      call_map.push_back(static_cast<std::uint32_t>(out.collectives.size()));
    }
    for (Rank& r : w.ranks) {
      auto [it, inserted] = file_of_rank.emplace(r.id, part.file);
      if (!inserted)
        throw InputError(part.file, "distributedInfo.rank", "rank " + std::to_string(r.id) + " is also " + it->second);
      for (Kernel& k : r.kernels) {
        k.name_id = name_map[k.name_id];
        k.annotation_set = set_map[k.annotation_set];
        if (k.collective) k.collective = call_map[k.collective - 1];
      }
      out.ranks.push_back(std::move(r));
    }
  }
  std::sort(out.ranks.begin(), out.ranks.end(), [](const Rank& a, const Rank& b) { return a.id < b.id; });

  // Calls per group and member, in each member's stream order.
  std::map<int, std::map<int, std::vector<const CollectiveCall*>>> calls;
  PointToPoint sends, recvs;
  for (const Rank& r : out.ranks)
    for (const Kernel& k : r.kernels)
      for (CollectiveCall& c : calls_of(out, k)) {
        if (c.kind == CollectiveKind::send) sends[{r.id, c.peer}].push_back(&c);
        else if (c.kind == CollectiveKind::recv) recvs[{c.peer, r.id}].push_back(&c);
        else calls[c.group][r.id].push_back(&c);
      }
  // A truncated rank list is the ranks that took part, once all of them are here. The inferred world is every rank
  // of the job once all are here, whether or not each made a call (one whose annotations were unsized made none),
  // so that the check below compares them all.
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    if (!out.groups[g].empty() || ends_with(out.group_names[g], kCallsDifferSuffix)) continue;
    std::vector<int> members;
    if (const auto it = calls.find(static_cast<int>(g)); it != calls.end())
      for (const auto& kv : it->second) members.push_back(kv.first);
    if (out.group_names[g] == kInferredWorldGroup && whole_world_here(out.group_sizes[g], file_of_rank)) {
      members.clear();
      for (int r = 0; r < out.group_sizes[g]; ++r) members.push_back(r);
    }
    if (static_cast<int>(members.size()) == out.group_sizes[g]) out.groups[g] = members;
  }
  for (const auto& [g, by_rank] : calls) {
    if (!group_complete(out, g)) continue;
    const std::string& name = out.group_names[static_cast<std::size_t>(g)];
    const std::optional<Mismatch> m = first_mismatch(out.groups[static_cast<std::size_t>(g)], by_rank, file_of_rank);
    if (!m) continue;
    if (!starts_with(name, kInferredWorldGroup)) throw InputError(m->file, "collectives", "process group \"" + name + "\"" + m->what + m->reading);
    // Kept at their recorded durations: a group with no members is never complete, and its name says why.
    out.groups[static_cast<std::size_t>(g)].clear();
    if (!ends_with(name, kCallsDifferSuffix)) out.group_names[static_cast<std::size_t>(g)] = name + kCallsDifferSuffix;
    if (notes)
      notes->push_back("the collectives inferred from \"nccl:\" annotations differ across the ranks (" + m->file + m->what +
                       "): the job may have had process groups smaller than its world (the traces name none), ranks profiled "
                       "over different steps, or all-to-all calls with uneven splits; those NCCL kernels keep their recorded "
                       "durations");
  }
  pair_point_to_point(out, sends, recvs, file_of_rank, notes);
  return out;
}

Json describe_collectives(const Workload& wl) {
  Json groups = Json::array();
  std::vector<std::size_t> per_group(wl.groups.size(), 0);
  std::size_t simulated = 0, recorded = 0, p2p = 0, peerless = 0, to_self = 0, batches = 0, batched = 0;
  std::set<int> ids;
  for (const Rank& r : wl.ranks) ids.insert(r.id);
  std::vector<bool> simulated_group(wl.groups.size());  // once per group, not per call
  for (std::size_t g = 0; g < wl.groups.size(); ++g) simulated_group[g] = group_simulated(wl, static_cast<int>(g));
  for (const Rank& r : wl.ranks)
    for (const Kernel& k : r.kernels) {
      const CallSpan<const CollectiveCall> calls = calls_of(wl, k);
      if (calls.size() > 1) ++batches, batched += calls.size();
      for (const CollectiveCall& c : calls) {
        if (is_transfer(c.kind)) {
          ++p2p;
          peerless += transfer_without_peer(c);
          to_self += transfer_to_self(c, r.id);
          (ids.count(c.peer) && !transfer_to_self(c, r.id) ? simulated : recorded) += 1;
          continue;
        }
        if (c.group >= 0) ++per_group[static_cast<std::size_t>(c.group)];
        (c.group >= 0 && simulated_group[static_cast<std::size_t>(c.group)] ? simulated : recorded) += 1;
      }
    }
  for (std::size_t g = 0; g < wl.groups.size(); ++g)
    groups.push_back({{"name", wl.group_names[g]}, {"ranks", wl.groups[g]}, {"size", wl.group_sizes[g]},
                      {"complete", group_complete(wl, static_cast<int>(g))}, {"simulated", static_cast<bool>(simulated_group[g])},
                      {"calls", per_group[g]}});
  return {{"groups", groups}, {"calls_simulated", simulated}, {"calls_at_recorded_duration", recorded}, {"point_to_point_calls", p2p},
          {"point_to_point_without_peer", peerless}, {"point_to_point_to_self", to_self}, {"batched_kernels", batches}, {"batched_calls", batched}};
}

}  // namespace dvfs
