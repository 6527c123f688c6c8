// Real PyTorch traces as users bring them (issue 17): DDP's non-collective record_param_comms records,
// profiler step ranges that overlap, the 2021 schema, ROCm traces and ranks of unrelated jobs. The fixtures
// under tests/fixtures/pytorch/ copy the layout of PyTorch 2.x (and 1.8) Kineto traces, events trimmed.
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/engine/engine.hpp"
#include "sim/policies/policy_factory.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/multi_rank.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

std::string fixture(const std::string& name) { return std::string(DVFS_TEST_FIXTURES) + "/pytorch/" + name; }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

const Classifier& classifier() {
  static Classifier c = Classifier::load_default();
  return c;
}

// One NCCL kernel whose args carry PyTorch's record_param_comms fields under `name`.
Workload one_comm_kernel(const std::string& name, ImportReport* rep = nullptr) {
  const std::string trace = R"({"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2}, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic", "pid": 0, "tid": 20, "ts": 10, "dur": 5,
     "args": {"device": 0, "stream": 20, "Collective name": ")" + name + R"(", "dtype": "BFloat16", "In msg nelems": 1024,
              "Out msg nelems": 1024, "Group size": 2, "Process Group Name": "0", "Process Group Ranks": "[0, 1]",
              "Src Rank": 1, "Dst Rank": 1}}]})";
  return import_kineto_text(trace, "comm.json", classifier(), rep);
}

// Every rank's steps hold contiguous runs of its activities, in step order.
void require_contiguous_steps(const Rank& r) {
  int current = -1;
  std::vector<bool> seen(r.steps.size(), false);
  for (const Kernel& k : r.kernels) {
    if (k.step == current || k.step < 0) {
      current = k.step < 0 ? current : k.step;
      continue;
    }
    REQUIRE_FALSE(seen[static_cast<std::size_t>(k.step)]);  // a step that resumes after another one started
    seen[static_cast<std::size_t>(k.step)] = true;
    current = k.step;
  }
}

std::vector<RankOutcome> replay_at_max(const Workload& wl, const GpuModel& m) {
  PolicySpec ps;
  ps.name = "max";
  ReplayOptions o;
  o.timeline_interval_s = 0;
  return run_engine(wl, m, make_policy_factory(ps, m, ""), o, EngineMode::local_loop);
}

}  // namespace

TEST_CASE("a DDP trace's wait, init and coalesced records are no collectives: the trace imports, its all-reduce is one",
          "[traces][pytorch]") {
  ImportReport rep;
  const Workload wl = import_kineto(fixture("ddp_rank0_wait.json"), classifier(), &rep);
  REQUIRE(wl.ranks.size() == 1);
  const Rank& r = wl.ranks[0];
  CHECK(r.id == 0);
  REQUIRE(r.kernels.size() == 4);
  REQUIRE(wl.collectives.size() == 1);
  CHECK(wl.collectives[0].kind == CollectiveKind::all_reduce);
  CHECK(wl.collectives[0].bytes == 4.0 * 1048576);
  CHECK(r.kernels[0].collective == 0);  // the GEMM
  CHECK(r.kernels[1].collective == 1);  // the all-reduce, from its record_param_comms range
  // The all-gather kernel of a coalescing group and the kernel of a gather keep their recorded durations,
  // and the import says so.
  CHECK(r.kernels[2].collective == 0);
  CHECK(r.kernels[3].collective == 0);
  CHECK(r.kernels[2].cls == KernelClass::communication);
  REQUIRE(rep.notes.size() == 1);
  CHECK_THAT(rep.notes[0], Catch::Contains("2 communication calls") && Catch::Contains("coalesced x1, gather x1"));
  CHECK(rep.world_size == 2);
  CHECK(rep.backend == "nccl");
  CHECK(r.steps.size() == 1);
}

TEST_CASE("the collective names PyTorch's c10d writes map to our kinds, and the others to none", "[traces][pytorch]") {
  const std::pair<const char*, CollectiveKind> names[] = {
      {"allreduce", CollectiveKind::all_reduce},
      {"allreduce_coalesced", CollectiveKind::all_reduce},
      {"barrier", CollectiveKind::all_reduce},
      {"_allgather_base", CollectiveKind::all_gather},
      {"all_gather", CollectiveKind::all_gather},
      {"allgather_coalesced", CollectiveKind::all_gather},
      {"allgather_into_tensor_coalesced", CollectiveKind::all_gather},
      {"reduce_scatter", CollectiveKind::reduce_scatter},
      {"_reduce_scatter_base", CollectiveKind::reduce_scatter},
      {"reduce_scatter_tensor_coalesced", CollectiveKind::reduce_scatter},
      {"all_to_all", CollectiveKind::all_to_all},
      {"all_to_allv", CollectiveKind::all_to_all},
      {"alltoall_base", CollectiveKind::all_to_all},
      {"broadcast", CollectiveKind::broadcast},
      {"_broadcast_oop", CollectiveKind::broadcast},
      {"reduce", CollectiveKind::broadcast},
      {"_reduce_oop", CollectiveKind::broadcast},
      {"send", CollectiveKind::send},
      {"recv", CollectiveKind::recv},
      {"recvAnySource", CollectiveKind::recv},
  };
  for (const auto& [name, kind] : names) {
    INFO(name);
    const Workload wl = one_comm_kernel(name);
    REQUIRE(wl.collectives.size() == 1);
    CHECK(wl.collectives[0].kind == kind);
    CHECK(wl.ranks[0].kernels[0].collective == 1);
  }
  // Rooted gather/scatter (root and members hold different buffers) and a coalescing group's end are kept
  // at their recorded duration, with a note; a wait or an init is no transfer at all.
  for (const char* name : {"gather", "scatter", "coalesced", "wait", "init"}) {
    INFO(name);
    ImportReport rep;
    const Workload wl = one_comm_kernel(name, &rep);
    CHECK(wl.collectives.empty());
    CHECK(wl.ranks[0].kernels[0].collective == 0);
    CHECK(rep.notes.size() == (std::string(name) == "wait" || std::string(name) == "init" ? 0u : 1u));
  }
  CHECK_THROWS_WITH(one_comm_kernel("hyperreduce"), Catch::Contains("comm.json: traceEvents[0].args.Collective name: expected an NCCL collective"));
}

TEST_CASE("profiler step ranges that overlap their neighbours partition the run: step times and energies add up to the totals",
          "[traces][pytorch]") {
  const GpuModel m = load_gpu_model("h200");
  double idle_w = 1e300;
  for (double f : m.sm_clocks_mhz()) idle_w = std::min(idle_w, m.idle_power_at(f));
  // Device-side ranges (one per stream; step 1's NCCL kernel ran after step 2's last kernel) and host-side
  // ranges (that kernel was launched in step 1 and ran in step 2).
  // The run is the recording: from the first activity (100 µs; on the host side, from step 1's range at 50 µs)
  // to the last one's end (1500 µs), no time added between the steps.
  const std::pair<const char*, double> cases[] = {{"profiler_steps_overlap.json", 1400e-6}, {"profiler_steps_launched_late.json", 1450e-6}};
  for (const auto& [name, recorded_s] : cases) {
    INFO(name);
    ImportReport rep;
    const Workload wl = import_kineto(fixture(name), classifier(), &rep);
    const Rank& r = wl.ranks[0];
    REQUIRE(r.steps.size() == 2);
    CHECK(r.steps[0].label == "ProfilerStep#1");
    CHECK(r.steps[1].label == "ProfilerStep#2");
    require_contiguous_steps(r);
    // The late NCCL kernel is counted where it ran: in step 2.
    CHECK(r.kernels.back().cls == KernelClass::communication);
    CHECK(r.kernels.back().step == 1);
    const auto out = replay_at_max(wl, m);
    const EnergyMeter& meter = out[0].meter;
    double time = 0, energy = 0;
    for (const StepTotals& st : meter.steps()) {
      CHECK(st.end_s > st.start_s);
      CHECK(st.energy_j / (st.end_s - st.start_s) >= idle_w);
      time += st.end_s - st.start_s;
      energy += st.energy_j;
    }
    // Every activity is in a step and the first step starts at the first activity: the steps are the run.
    CHECK(time == Approx(out[0].stats.end_s).epsilon(1e-12));
    CHECK(energy == Approx(meter.total_j()).epsilon(1e-12));
    CHECK(out[0].stats.end_s == Approx(recorded_s).epsilon(1e-9));
  }
}

TEST_CASE("a step's tail gives way to the next step's lead: the replay adds no time the recording lacks", "[traces][pytorch]") {
  const Workload wl = import_kineto(fixture("profiler_steps_overlap.json"), classifier());
  const Rank& r = wl.ranks[0];
  const Step& s1 = r.steps[0];
  const Kernel& next = r.kernels[static_cast<std::size_t>(s1.last_kernel) + 1];
  CHECK(s1.tail_s + r.steps[1].lead_s <= next.gap_before_s + 1e-15);
  CHECK(s1.tail_s == Approx(30e-6));  // the gap between 690 µs and 720 µs, where step 2's range starts
}

TEST_CASE("a 2021-schema trace (PyTorch 1.8) marks its steps as Operator events: they are its steps", "[traces][pytorch]") {
  ImportReport rep;
  const Workload wl = import_kineto(fixture("kineto_2021_operator_steps.json"), classifier(), &rep);
  CHECK(rep.schema == "kineto-2021");
  CHECK(rep.step_source == "cpu user_annotation via launch correlation");
  const Rank& r = wl.ranks[0];
  CHECK(r.device_name.empty());  // no deviceProperties before PyTorch 1.9
  REQUIRE(r.kernels.size() == 5);
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[0].label == "ProfilerStep#1");
  CHECK(r.steps[1].label == "ProfilerStep#2");
  CHECK(r.steps[0].first_kernel == 0);
  CHECK(r.steps[0].last_kernel == 2);
  CHECK(r.steps[1].first_kernel == 3);
  CHECK(r.kernels[0].cls == KernelClass::gemm);
  // Its operators' "Input dims" and the kernels' "external id" give the GEMM its work (2 M N K, fp32).
  CHECK(r.kernels[0].work == WorkSource::shapes);
  CHECK(r.kernels[0].fma_tflops == Approx(2.0 * 64 * 1024 * 1024 / 120e-6 / 1e12).epsilon(1e-6));
  CHECK(r.kernels[2].kind == ActivityKind::memcpy);                 // cat "Memcpy"
  CHECK(r.kernels[0].sm_fill == Approx(1.0));                       // "blocks per SM" 1.6, no numSms needed
  CHECK(r.kernels[1].sm_fill == Approx(0.8));
  CHECK(r.kernels[3].gap_before_s == Approx((1618891045360.0 - 1618891044530.0) * 1e-6));
  CHECK(rep.device_platform == "cuda");
}

TEST_CASE("a mid-2021 trace (PyTorch 1.9) whose Operator events spell it \"Input Dims\" gives its kernels their work", "[traces][pytorch]") {
  // kineto's own tb_plugin samples of June 2021 write cat "Operator" with "Input Dims": those operators were not
  // read, and every kernel of such a trace was priced by its class's priors
  std::string text = read_text(fixture("kineto_2021_operator_steps.json"));
  for (std::size_t at; (at = text.find("\"Input dims\"")) != std::string::npos;) text.replace(at, 12, "\"Input Dims\"");
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    INFO((reader == KinetoReader::checked ? "checked" : "streaming"));
    const Workload wl = import_kineto_text(text, "mid2021.json", classifier(), nullptr, reader);
    const Kernel& gemm = wl.ranks[0].kernels[0];
    CHECK(gemm.work == WorkSource::shapes);
    CHECK(gemm.fma_tflops == Approx(2.0 * 64 * 1024 * 1024 / 120e-6 / 1e12).epsilon(1e-6));
  }
}

TEST_CASE("an AMD ROCm trace is imported and names its device and platform", "[traces][pytorch]") {
  ImportReport rep;
  const Workload wl = import_kineto(fixture("rocm_mi300x.json"), classifier(), &rep);
  CHECK(rep.device_platform == "rocm");
  CHECK(rep.device_name == "AMD Instinct MI300X");
  CHECK(wl.ranks[0].kernels.size() == 2);
  CHECK(wl.ranks[0].steps.size() == 1);  // launched through hipExtModuleLaunchKernel / hipLaunchKernel
  // Without deviceProperties, the HIP runtime still tells.
  const std::string text = read_text(fixture("rocm_mi300x.json"));
  const auto a = text.find("\"deviceProperties\""), b = text.find("\"displayTimeUnit\"");
  ImportReport bare;
  import_kineto_text(text.substr(0, a) + text.substr(b), "bare.json", classifier(), &bare);
  CHECK(bare.device_platform == "rocm");
  CHECK(bare.device_name.empty());
  // An NVIDIA trace is not taken for one.
  ImportReport nv;
  import_kineto(fixture("ddp_rank0_wait.json"), classifier(), &nv);
  CHECK(nv.device_platform == "cuda");
  CHECK(nv.device_name == "NVIDIA H200");
}

TEST_CASE("two ranks of one DDP job merge; ranks of unrelated jobs are refused where they provably are", "[traces][pytorch][multi-rank]") {
  const std::string r0 = read_text(fixture("ddp_rank0_wait.json")), r1 = read_text(fixture("ddp_rank1_wait.json"));
  auto parts = [&](const std::string& second) {
    std::vector<RankTrace> p;
    ImportReport a, b;
    Workload wa = import_kineto_text(r0, "rank0.json", classifier(), &a);
    Workload wb = import_kineto_text(second, "rank1.json", classifier(), &b);
    p.push_back({std::move(wa), "rank0.json", a.world_size, a.backend});
    p.push_back({std::move(wb), "rank1.json", b.world_size, b.backend});
    return p;
  };
  std::vector<std::string> notes;
  const Workload wl = merge_rank_workloads(parts(r1), &notes);
  CHECK(notes.empty());
  REQUIRE(wl.ranks.size() == 2);
  CHECK(group_complete(wl, 0));

  CHECK_THROWS_WITH(merge_rank_workloads(parts(replaced(r1, "\"world_size\": 2", "\"world_size\": 4"))),
                    Catch::Contains("rank1.json: distributedInfo.world_size: world size 4 here, 2 in rank0.json: the traces are ranks of different jobs"));
  CHECK_THROWS_WITH(merge_rank_workloads(parts(replaced(r1, "\"backend\": \"nccl\"", "\"backend\": \"gloo\""))),
                    Catch::Contains("rank1.json: distributedInfo.backend: backend \"gloo\" here, \"nccl\" in rank0.json"));
  CHECK_THROWS_WITH(merge_rank_workloads(parts(replaced(r1, "\"rank\": 1,", "\"rank\": 2,"))),
                    Catch::Contains("rank1.json: distributedInfo.rank: rank 2 is outside the job's world size 2"));
  CHECK_THROWS_WITH(merge_rank_workloads(parts(r0)), Catch::Contains("rank 0 is also rank0.json"));
}

TEST_CASE("ranks whose steps or timelines differ merge with a note saying why they look unrelated", "[traces][pytorch][multi-rank]") {
  const std::string r0 = read_text(fixture("ddp_rank0_wait.json")), r1 = read_text(fixture("ddp_rank1_wait.json"));
  auto merge = [&](const std::string& second, std::vector<std::string>& notes) {
    std::vector<RankTrace> p;
    p.push_back({import_kineto_text(r0, "rank0.json", classifier()), "rank0.json", 2, "nccl"});
    p.push_back({import_kineto_text(second, "rank1.json", classifier()), "rank1.json", 2, "nccl"});
    return merge_rank_workloads(std::move(p), &notes);
  };
  std::vector<std::string> later;  // recorded an hour later
  merge(replaced(r1, "1790857026000000000", "1790860626000000000"), later);
  REQUIRE(later.size() == 1);
  CHECK_THAT(later[0], Catch::Contains("rank 1 (rank1.json) was recorded 3599.9") && Catch::Contains("s after rank 0 (rank0.json)") &&
                           Catch::Contains("timelines do not overlap"));
  std::vector<std::string> fewer;  // no step range
  merge(replaced(r1, "\"ProfilerStep#3\"", "\"forward\""), fewer);
  REQUIRE(fewer.size() == 1);
  CHECK_THAT(fewer[0], Catch::Contains("rank 1 (rank1.json) has 0 steps, rank 0 (rank0.json) 1"));
}

TEST_CASE("kernels replayed from a CUDA graph carry no operator: the import says how much time the class priors price",
          "[traces][pytorch]") {
  // A decode step replayed from a graph captured before profiling (vLLM, torch.compile "reduce-overhead", a
  // hand-made torch.cuda.CUDAGraph): two kernels correlate with one cudaGraphLaunch; one eager GEMM has its operator.
  const std::string trace = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10,
     "args": {"External id": 7, "Input Dims": [[64, 64], [64, 64]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 2,
     "args": {"correlation": 1, "External id": 7}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst_64x64", "pid": 0, "tid": 7, "ts": 5, "dur": 10,
     "args": {"device": 0, "stream": 7, "correlation": 1, "External id": 7}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1, "ts": 20, "dur": 3,
     "args": {"correlation": 2}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst_64x16_64x16_2x1_v_bz_TNT", "pid": 0, "tid": 7, "ts": 30, "dur": 20,
     "args": {"device": 0, "stream": 7, "correlation": 2}},
    {"ph": "X", "cat": "kernel", "name": "cudnn_generated_fort_native_sdpa_sm80_flash_fprop", "pid": 0, "tid": 7, "ts": 55, "dur": 10,
     "args": {"device": 0, "stream": 7, "correlation": 2}}
  ]})";
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    ImportReport rep;
    const Workload wl = import_kineto_text(trace, "graph.json", classifier(), &rep, reader);
    REQUIRE(wl.ranks.size() == 1);
    REQUIRE(wl.ranks[0].kernels.size() == 3);
    CHECK(wl.ranks[0].kernels[0].work == WorkSource::shapes);
    CHECK(wl.ranks[0].kernels[1].work == WorkSource::unknown);
    REQUIRE(rep.notes.size() == 1);
    CHECK_THAT(rep.notes[0], Catch::Contains("2 kernels were launched by CUDA graph replays (1 cudaGraphLaunch calls)") &&
                                 Catch::Contains("(75.0 % of the kernel time)") && Catch::Contains("class priors"));
  }
  // without a graph launch, no note
  ImportReport plain;
  import_kineto_text(replaced(trace, "cudaGraphLaunch", "cudaLaunchKernel"), "plain.json", classifier(), &plain);
  CHECK(plain.notes.empty());
}

// Recorded on an H100 by traces/recorder/record_profiler_options.py: the same four steps profiled with PyTorch's
// default options and with record_shapes, with_stack, profile_memory, with_flops and with_modules all on.
namespace {

std::string profiler_options_trace(const std::string& name) {
  return data_dir() + "/traces/recordings/h100-profiler-options/" + name;
}

double kernel_time_us(const Workload& wl) {
  double us = 0;
  for (const Kernel& k : wl.ranks.at(0).kernels) us += k.duration_s * 1e6;
  return us;
}

bool notes_profiler_overhead(const ImportReport& rep) {
  return std::any_of(rep.notes.begin(), rep.notes.end(), [](const std::string& n) { return n.find("profiler's own host work") != std::string::npos; });
}

}  // namespace

TEST_CASE("a trace written with every profiler option on imports to the default options' kernels, with a note on the host gaps",
          "[traces][pytorch]") {
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    ImportReport plain_rep, all_rep;
    const Workload plain = import_kineto(profiler_options_trace("cnn-plain.json.gz"), classifier(), &plain_rep, reader);
    const Workload all = import_kineto(profiler_options_trace("cnn-all-options.json.gz"), classifier(), &all_rep, reader);
    REQUIRE(plain.ranks.size() == 1);
    REQUIRE(all.ranks.size() == 1);
    // python_function ranges and [memory] instants are no device work: the same 424 activities, the same busy time
    CHECK(plain.ranks[0].kernels.size() == 424);
    CHECK(all.ranks[0].kernels.size() == plain.ranks[0].kernels.size());
    CHECK(kernel_time_us(all) == Approx(kernel_time_us(plain)).epsilon(0.02));
    CHECK_FALSE(notes_profiler_overhead(plain_rep));
    REQUIRE(notes_profiler_overhead(all_rep));
    CHECK_THAT(all_rep.notes[0], Catch::Contains("with_stack / with_modules (2510 python_function events) and profile_memory (912 [memory] events)"));
  }
}

TEST_CASE("a file of one profiler schedule cycle, gzipped by tensorboard_trace_handler, holds that cycle's active steps",
          "[traces][pytorch]") {
  // schedule(wait=1, warmup=1, active=2, repeat=2): each cycle's file holds its two active steps
  ImportReport rep;
  const Workload wl =
      import_kineto(profiler_options_trace("cnn-scheduled/vm_967.1796681556681751269.pt.trace.json.gz"), classifier(), &rep);
  REQUIRE(wl.ranks.size() == 1);
  CHECK(wl.ranks[0].steps.size() == 2);
  CHECK(wl.ranks[0].kernels.size() == 212);  // half of the unscheduled four steps' 424
  // the device-side ProfilerStep ranges hold only the main thread's launches (the forward), not the backward kernels
  // autograd's thread launches: the steps come from the host's ranges, and the note says so
  CHECK(rep.step_source == "cpu user_annotation via launch correlation");
  std::string notes;
  for (const std::string& n : rep.notes) notes += n + "\n";
  CHECK_THAT(notes, Catch::Contains("the device-side step ranges (gpu_user_annotation ProfilerStep) hold 36.3 % of the device time") &&
                               Catch::Contains("autograd's thread"));
}

TEST_CASE("operator shapes whose counted work no GPU could do in the kernel's time are refused, not priced", "[traces][pytorch][errors]") {
  // an 8192^3 bf16 GEMM in 10 us would be 110 PFLOP/s: above any part, but a miscount of that size is still priced;
  // 2^31-sided matrices in 10 us are 1.9e15 TFLOP/s: no GPU, so the shapes are wrong
  const std::string trace = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10,
     "args": {"External id": 7, "Input Dims": [[SIDE, SIDE], [SIDE, SIDE]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 2,
     "args": {"correlation": 1, "External id": 7}},
    {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_tst_64x64", "pid": 0, "tid": 7, "ts": 5, "dur": 10,
     "args": {"device": 0, "stream": 7, "correlation": 1, "External id": 7}}
  ]})";
  auto sides = [&](const std::string& n) {
    std::string t = trace;
    for (std::size_t at; (at = t.find("SIDE")) != std::string::npos;) t.replace(at, 4, n);
    return t;
  };
  for (const KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    CHECK_NOTHROW(import_kineto_text(sides("8192"), "ok.json", classifier(), nullptr, reader));
    CHECK_THROWS_WITH(import_kineto_text(sides("2147483648"), "huge.json", classifier(), nullptr, reader),
                      Catch::Contains("huge.json: Input Dims: expected operator shapes whose arithmetic a GPU can do in the kernel's time") &&
                          Catch::Contains("kernel \"nvjet_sm90_tst_64x64\" (10 us)"));
  }
}
