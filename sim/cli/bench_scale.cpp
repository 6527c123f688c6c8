// `dvfs-sim bench`, multi-GPU part: synthesised llama-3.3-70b iterations at scale. Each case runs in a
// child process, so the peak memory printed is that case's own, not the largest so far.
#include "sim/cli/bench.hpp"

#include "sim/core/json_util.hpp"
#include "sim/synthetic_run.hpp"

#include <cstdio>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dvfs {

namespace {

struct Measured {
  Json result;
  double peak_mib = 0;
  bool ok = false;
};

Measured in_child(const SyntheticRun& req) {
  Measured m;
  int fd[2];
  if (pipe(fd) != 0) return m;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    std::string out;
    try {
      out = run_synthetic(req).dump();
    } catch (const std::exception& e) {
      out = Json{{"error", e.what()}}.dump();
    }
    for (std::size_t done = 0; done < out.size();) {
      const ssize_t w = write(fd[1], out.data() + done, out.size() - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
    close(fd[1]);
    _exit(0);
  }
  close(fd[1]);
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  close(fd[0]);
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  m.peak_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  try {
    m.result = Json::parse(text);
    m.ok = !m.result.contains("error");
  } catch (...) {
    m.result = Json{{"error", "the child process returned no result"}};
  }
  return m;
}

SyntheticRun llama70b(int pp, int dp, int microbatches) {
  SyntheticRun req;
  req.model = "llama-3.3-70b";
  req.layout = {8, pp, dp};
  req.microbatches = microbatches;
  req.cluster = default_cluster_spec();
  return req;
}

void row(const Measured& m) {
  if (!m.ok) {
    std::printf("    failed: %s\n", m.result.value("error", std::string("?")).c_str());
    return;
  }
  const Json& r = m.result;
  const double events = r["kernel_events"].get<double>();
  std::printf("    %6d %4d %4d %9.3e %8.2f %8.2f %9.3f %8.0f %9.3f\n", r["gpus"].get<int>(), r["layout"]["pp"].get<int>(),
              r["layout"]["dp"].get<int>(), events, r["wall_s"].get<double>(), r["replay_s"].get<double>(),
              r["iteration_s"].get<double>(), m.peak_mib, 1e6 * r["replay_s"].get<double>() / events);
}

void header() {
  std::printf("    %6s %4s %4s %9s %8s %8s %9s %8s %9s\n", "GPUs", "PP", "DP", "events", "wall s", "replay s", "iter s",
              "peak MiB", "us/event");
}

}  // namespace

void bench_scale(bool quick) {
  // The target: llama-3.3-70b, 1,024 sequences of 4,096 tokens, TP 8 x PP 8 x DP 16 = 1,024 GPUs, 1F1B,
  // per-kernel clock decisions (1 % budget) with the model's NVML switch latency.
  SyntheticRun target = llama70b(8, 16, 0);
  target.policy = "per-kernel";
  target.budget_pct = 1;
  const Measured t = in_child(target);
  if (t.ok)
    std::printf("  llama-3.3-70b on 1,024 GPUs (TP 8 x PP 8 x DP 16, 1F1B, 1,024 x 4,096 tokens), per-kernel clocks: "
                "%.2e kernel events, wall %.2f s (target < 60 s, ratio %.0fx), peak %.0f MiB (target < 4,096 MiB, ratio %.1fx); "
                "iteration %.3f s (model output)\n",
                t.result["kernel_events"].get<double>(), t.result["wall_s"].get<double>(), 60.0 / t.result["wall_s"].get<double>(),
                t.peak_mib, 4096.0 / t.peak_mib, t.result["iteration_s"].get<double>());
  else
    std::printf("  llama-3.3-70b on 1,024 GPUs: failed: %s\n", t.result.value("error", std::string("?")).c_str());
  if (quick) {
    std::printf("  weak and strong scaling tables: skipped (--quick)\n");
    return;
  }
  // Weak scaling: every pipeline runs 64 micro-batches; more replicas, more GPUs, more kernels. Cost
  // per kernel event should stay flat (linear in GPUs x kernels).
  std::printf("  weak scaling (llama-3.3-70b, TP 8, 64 micro-batches per pipeline, native on h200; 8 GPUs: PP 1, 4 micro-batches,\n"
              "  a what-if with the memory check off: 70B does not fit on 8 GPUs):\n");
  header();
  SyntheticRun eight = llama70b(1, 1, 4);
  eight.check_memory = false;
  row(in_child(eight));
  for (int dp : {1, 2, 8, 16, 64, 128}) row(in_child(llama70b(8, dp, 64)));
  // Strong scaling: the same 1,024 x 4,096-token batch on more GPUs (fewer micro-batches per pipeline).
  std::printf("  strong scaling (the same 1,024 x 4,096-token batch; micro-batches per pipeline = 1,024 / DP):\n");
  header();
  for (int dp : {1, 2, 8, 16, 64, 128}) row(in_child(llama70b(8, dp, 0)));
}

}  // namespace dvfs
