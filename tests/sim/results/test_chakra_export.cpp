// The Chakra export (sim/results/simulated_workload.hpp + traces/src/chakra/): a simulated run written as Chakra
// execution traces imports back through the Chakra reader and replays at its recorded clocks to the same run:
// a single-GPU recording, a two-rank job with an all-reduce and a send/recv, and a synthesised PP x DP iteration.
#include "support/scratch_dir.hpp"
#include "models/src/model_registry.hpp"
#include "sim/network/cluster.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/results/simulated_workload.hpp"
#include "sim/results/trace_export.hpp"
#include "sim/simulation/simulation.hpp"
#include "sim/synthetic_run.hpp"
#include "traces/src/chakra/chakra_attrs.hpp"
#include "traces/src/chakra/chakra_importer.hpp"
#include "traces/src/chakra/chakra_stream.hpp"
#include "traces/src/chakra/chakra_writer.hpp"
#include "replay_equality.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

using namespace dvfs;

using testing::check_same_run;
using testing::same;

namespace {

const GpuModel& h200() {
  static const GpuModel m = load_gpu_model("h200");
  return m;
}

std::vector<RankOutcome> replay(const Workload& wl, const PolicySpec& spec, ReplayOptions opts) {
  const GpuModel m = h200().bound_to(wl.names);
  opts.record_activities = true;
  const ClusterSpec cluster = resolve_bandwidths(default_cluster_spec(), m.specs().interconnect_gbs * 1e9, m.specs().nic_gbs * 1e9);
  return run_engine(wl, m, make_policy_factory(spec, m, "test"), opts, EngineMode::local_loop, cluster);
}

// The workload the engine's trace export of a replay describes (what the Chakra writer reads).
Workload simulated_of(const Workload& wl, const std::vector<RankOutcome>& out) {
  return simulated_workload(engine_trace_export(wl, out, "h200", h200().sm_count(), 1, Json::object()));
}

// The run exported as Chakra bytes (one file per rank) and imported again.
Workload through_chakra(const Workload& wl, const std::vector<RankOutcome>& out) {
  const Workload sim = simulated_of(wl, out);
  std::vector<std::string> bytes, names;
  for (std::size_t r = 0; r < sim.ranks.size(); ++r) {
    bytes.push_back(chakra_rank_bytes(sim, r));
    names.push_back("run." + std::to_string(sim.ranks[r].id) + ".et");
  }
  return import_chakra_bytes(bytes, names, Classifier::load_default());
}

}  // namespace

TEST_CASE("chakra round trip: a recording replayed at its clocks exports, imports and replays to the same totals", "[chakra-export]") {
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-gpt3xl-shapes");
  ReplayOptions opts;
  opts.firmware_latency_s = 0.0;
  const PolicySpec recorded{"recorded", {}, 0};
  const auto first = replay(trace.workload, recorded, opts);
  const Workload again = through_chakra(trace.workload, first);
  REQUIRE(again.ranks.size() == 1);
  CHECK(again.ranks[0].kernels.size() == trace.workload.ranks[0].kernels.size());
  CHECK(again.ranks[0].steps.size() == trace.workload.ranks[0].steps.size());
  const auto second = replay(again, recorded, opts);
  check_same_run(first[0], second[0], 1e-7);  // rates rescaled to the simulated duration are floats (docs/chakra.md)
}

TEST_CASE("chakra round trip: the bytes of ATen's non-vectorised elementwise loop travel with their kernels", "[chakra-export]") {
  // split unvectorised_bytes; dvfs.kernel_floats carries them (a list one shorter, from older files, reads as 0)
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-user-scripts/vit-b32");
  ReplayOptions opts;
  opts.firmware_latency_s = 0.0;
  const Workload again = through_chakra(trace.workload, replay(trace.workload, PolicySpec{"recorded", {}, 0}, opts));
  testing::check_same_unvectorised_rates(trace.workload, again);
}

TEST_CASE("chakra: a file written before the unvectorised rate (8 kernel floats) reads it as 0, the rest unchanged", "[chakra-export]") {
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-user-scripts/vit-b32");
  ReplayOptions opts;
  opts.firmware_latency_s = 0.0;
  const Workload sim = simulated_of(trace.workload, replay(trace.workload, PolicySpec{"recorded", {}, 0}, opts));
  const std::string now = chakra_rank_bytes(sim, 0);
  // the same file as the fifteenth round's writer made it: every dvfs.kernel_floats list one float shorter
  ChakraFile older = parse_chakra_bytes(now, "run.0.et");
  std::size_t cut = 0;
  for (auto& n : older.nodes)
    for (auto& at : *n.mutable_attr())
      if (at.name() == chakra_attr::kKernelFloats) {
        REQUIRE(at.float_list().values_size() == chakra_attr::kKernelFloatCount);
        at.mutable_float_list()->mutable_values()->RemoveLast();
        ++cut;
      }
  REQUIRE(cut > 100);
  std::string bytes;
  append_delimited(bytes, older.metadata);
  for (const auto& n : older.nodes) append_delimited(bytes, n);
  const Workload a = import_chakra_bytes({now}, {"run.0.et"}, Classifier::load_default());
  const Workload b = import_chakra_bytes({bytes}, {"run.0.et"}, Classifier::load_default());
  REQUIRE(a.ranks[0].kernels.size() == b.ranks[0].kernels.size());
  std::size_t unvectorised = 0;
  for (std::size_t i = 0; i < a.ranks[0].kernels.size(); ++i) {
    const Kernel &x = a.ranks[0].kernels[i], &y = b.ranks[0].kernels[i];
    unvectorised += x.unvectorised_tbps > 0;
    CHECK(y.unvectorised_tbps == 0);
    CHECK(y.memory_tbps == x.memory_tbps);
    CHECK(y.tensor_tflops == x.tensor_tflops);
    CHECK(y.duration_s == x.duration_s);
  }
  CHECK(unvectorised > 0);  // the recording has kernels on that path, so the cut took something away
}

TEST_CASE("chakra round trip: a two-rank job with an all-reduce and a send / recv replays the same", "[chakra-export]") {
  const dvfs::testing::ScratchDir scratch("dvfs_chakra_rt");
  const std::string prefix = scratch / "job";
  REQUIRE(std::system(("/usr/bin/python3 " + std::string(DVFS_TEST_FIXTURES) + "/make_chakra_fixture.py write " + prefix).c_str()) == 0);
  const Workload wl = import_chakra(prefix, Classifier::load_default());
  const PolicySpec max{"max", {}, 0};
  const auto first = replay(wl, max, ReplayOptions{});
  const Workload again = through_chakra(wl, first);
  REQUIRE(again.ranks.size() == 2);
  const auto second = replay(again, max, ReplayOptions{});
  for (std::size_t r = 0; r < 2; ++r) check_same_run(first[r], second[r]);
  // The collectives took part in the replay (not kept at a recorded length): the ranks end together.
  CHECK(first[0].stats.end_s == Approx(first[1].stats.end_s));
}

TEST_CASE("chakra round trip: a synthesised PP 2 x DP 2 iteration (synth --chakra-out) replays to its energy and time", "[chakra-export]") {
  SyntheticRun req;
  req.layout.tp = 1;
  req.layout.pp = 2;
  req.layout.dp = 2;
  req.microbatches = 4;
  req.policy = "max";
  req.per_gpu = true;
  req.cluster = default_cluster_spec();
  const dvfs::testing::ScratchDir scratch("dvfs_chakra_synth");
  req.chakra_out = scratch.path();
  const Json r = run_synthetic(req);
  REQUIRE(r["chakra_export"]["ranks"] == 4);
  const Workload wl = import_chakra(req.chakra_out + "/trace", Classifier::load_default());
  REQUIRE(wl.ranks.size() == 4);
  const auto out = replay(wl, PolicySpec{"max", {}, 0}, ReplayOptions{});
  double energy = 0, end = 0;
  for (const RankOutcome& o : out) energy += o.meter.total_j(), end = std::max(end, o.stats.end_s);
  CHECK(same(energy, r["energy_j"].get<double>()));
  CHECK(same(end, r["iteration_s"].get<double>()));
  for (std::size_t g = 0; g < 4; ++g) {  // per_gpu rows: [gpu, replica, stage, tp rank, gpus, energy, busy, ..., end]
    CHECK(same(out[g].meter.total_j(), r["per_gpu"][g][5].get<double>()));
    CHECK(same(out[g].meter.busy_s(), r["per_gpu"][g][6].get<double>()));
    CHECK(same(out[g].stats.end_s, r["per_gpu"][g][10].get<double>()));
  }
}
