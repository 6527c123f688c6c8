#include "models/src/collective_cost.hpp"
#include "tests/sim/pipeline/kernel_pipeline_helpers.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

using pipeline_test::a100;
using pipeline_test::run;

Kernel gemm(double s) { return pipeline_test::top_clock_kernel(s); }

// One stage, one micro-batch, two replicas: a 1 ms forward and a backward of four 10 ms kernels whose
// gradients fill a bucket each; a bucket's ring all-reduce over two replicas at 1 GB/s takes 5 ms.
KernelPipeline four_buckets() {
  KernelPipeline kp;
  kp.microbatches = 1;
  kp.data_parallel = 2;
  kp.use_cluster = true;
  kp.cluster.gpus_per_node = 1;
  kp.cluster.inter_bw_bps = 1e9;
  Rank r;
  r.kernels = {gemm(1e-3), gemm(1e-2), gemm(1e-2), gemm(1e-2), gemm(1e-2)};
  kp.stages = {r};
  kp.forward = {{0, 1}};
  kp.backward = {{1, 5}};
  kp.buckets = {{{2, 5e6, 5e6}, {3, 5e6, 5e6}, {4, 5e6, 5e6}, {5, 5e6, 5e6}}};
  return kp;
}

}  // namespace

TEST_CASE("gradient buckets are all-reduced while the backward goes on, only the last one exposed", "[pipeline][buckets]") {
  KernelPipeline kp = four_buckets();
  REQUIRE(collective_time_s(CollectiveKind::all_reduce, false, 2, 5e6, 1e9, 0) == Approx(5e-3));
  const KernelPipelineResult overlapped = run(kp);
  CHECK(overlapped.iteration_s == Approx(0.041 + 0.005).epsilon(1e-9));
  for (double w : overlapped.allreduce_s) CHECK(w == Approx(0.005).epsilon(1e-6));
  kp.overlap_gradient_sync = false;  // every bucket after the last backward
  const KernelPipelineResult after = run(kp);
  CHECK(after.iteration_s == Approx(0.041 + 4 * 0.005).epsilon(1e-9));
  for (double w : after.allreduce_s) CHECK(w == Approx(0.020).epsilon(1e-6));
  // Waiting, the GPU draws idle power at the clocks in effect (max: the top SM clock).
  const double idle = a100().idle_power_w(static_cast<int>(a100().sm_clocks_mhz().size()) - 1);
  for (double j : after.sync_wait_j) CHECK(j == Approx(idle * 0.020).epsilon(1e-6));
  for (double j : after.pipeline_wait_j) CHECK(j == Approx(0).margin(1e-9));
}

TEST_CASE("a bucket that takes longer than the backward left behind it queues up the next", "[pipeline][buckets]") {
  KernelPipeline kp = four_buckets();
  for (auto& b : kp.buckets[0]) b.bytes = 4e7;  // 40 ms each, a backward kernel is 10 ms
  CHECK(run(kp).iteration_s == Approx(0.011 + 4 * 0.040).epsilon(1e-9));  // the first ready after 11 ms
}

TEST_CASE("the distributed optimizer reduce-scatters gradients and all-gathers parameters after the step", "[pipeline][buckets]") {
  KernelPipeline kp = four_buckets();
  kp.gradient_sync = GradientSync::reduce_scatter;
  // Reduce-scatter over 2 replicas: (2 - 1) / 2 x 5 MB at 1 GB/s = 2.5 ms per bucket, the last exposed;
  // then the four buckets' parameters are all-gathered, 2.5 ms each.
  CHECK(run(kp).iteration_s == Approx(0.041 + 0.0025 + 4 * 0.0025).epsilon(1e-9));
}

TEST_CASE("without buckets a stage's gradients are synchronised once, after its last backward", "[pipeline][buckets]") {
  KernelPipeline kp = four_buckets();
  kp.buckets.clear();
  kp.gradient_bytes = {2e7};
  CHECK(run(kp).iteration_s == Approx(0.041 + 0.020).epsilon(1e-9));
}

namespace {

// Two stages, three micro-batches, two replicas; each stage's forward and backward carry a TP
// all-reduce (collective 1) between two GEMMs; gradients in two buckets.
KernelPipeline tp_pipeline(int tp_ranks, const ClusterSpec& cs) {
  KernelPipeline kp;
  kp.microbatches = 3;
  kp.data_parallel = 2;
  kp.use_cluster = true;
  kp.cluster = cs;
  kp.tp_ranks = tp_ranks;
  kp.activation_bytes = 1e7;
  kp.collectives = {CollectiveCall{CollectiveKind::all_reduce, 1e8, -1, -1}};
  Kernel ar;
  ar.cls = KernelClass::communication;
  ar.collective = 1;
  ar.duration_s = collective_time_s(CollectiveKind::all_reduce, false, 4, 1e8, cs.intra_bw_bps, cs.intra_latency_s);
  for (int s = 0; s < 2; ++s) {
    Rank r;
    r.id = s;
    r.kernels = {gemm(1e-3), ar, gemm(1e-3), gemm(2e-3), ar, gemm(2e-3), gemm(5e-4)};
    kp.stages.push_back(r);
    kp.forward.push_back({0, 3});
    kp.backward.push_back({3, 6});
    kp.buckets.push_back({{5, 2e7, 1e7}, {6, 2e7, 1e7}});
  }
  kp.optimizer = {{6, 7}, {6, 7}};
  return kp;
}

}  // namespace

TEST_CASE("one actor per TP group gives what simulating every TP rank on the network gives", "[pipeline][tp]") {
  ClusterSpec cs;
  cs.placement = Placement::dp_inner;
  cs.intra_bw_bps = 1e11;
  cs.intra_latency_s = 1e-5;
  cs.inter_bw_bps = 1e10;
  cs.inter_latency_s = 1e-5;
  ClusterSpec folded_cs = cs, unfolded_cs = cs;
  folded_cs.gpus_per_node = 1;    // a node holds one TP group of 4 GPUs, simulated as one host
  unfolded_cs.gpus_per_node = 4;  // ... or as its 4 GPUs
  for (int straggler : {-1, 1}) {
    INFO("straggler replica " << straggler);
    KernelPipeline folded = tp_pipeline(1, folded_cs), unfolded = tp_pipeline(4, unfolded_cs);
    folded.straggler_replica = unfolded.straggler_replica = straggler;
    folded.straggler_factor = unfolded.straggler_factor = 1.3;
    const KernelPipelineResult f = run(folded, "native"), u = run(unfolded, "native");
    REQUIRE(u.outcomes.size() == 4 * f.outcomes.size());
    CHECK(u.iteration_s == Approx(f.iteration_s).epsilon(1e-9));
    double ef = 0, eu = 0;
    for (const auto& o : f.outcomes) ef += 4 * o.meter.total_j();
    for (const auto& o : u.outcomes) eu += o.meter.total_j();
    CHECK(eu == Approx(ef).epsilon(1e-9));
    for (std::size_t g = 0; g < u.outcomes.size(); ++g) {
      CHECK(u.allreduce_s[g] == Approx(f.allreduce_s[g / 4]).epsilon(1e-6).margin(1e-12));
      CHECK(u.blocked_s[g] == Approx(f.blocked_s[g / 4]).epsilon(1e-6).margin(1e-12));
    }
    CHECK(u.collective_s[0] == Approx(2 * 3 * folded.stages[0].kernels[1].duration_s).epsilon(1e-6));
  }
}

TEST_CASE("per-GPU slowdown and per-kernel jitter are seeded and stretch only that GPU's kernels", "[pipeline][variation]") {
  KernelPipeline kp = four_buckets();
  kp.buckets.clear();
  kp.data_parallel = 1;
  const double base = run(kp).iteration_s;
  kp.slowdown = {1.5};
  CHECK(run(kp).iteration_s == Approx(1.5 * base).epsilon(1e-9));
  kp.slowdown.clear();
  kp.jitter_cv = 0.2;
  kp.seed = 7;
  const double a = run(kp).iteration_s, b = run(kp).iteration_s;
  CHECK(a == Approx(b).epsilon(1e-12));
  CHECK(std::fabs(a - base) > 1e-6 * base);
  kp.seed = 8;
  CHECK(std::fabs(run(kp).iteration_s - a) > 1e-6 * a);
}
