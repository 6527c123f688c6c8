#include "sim/cli/bench_critical_path.hpp"

#include "models/src/model_registry.hpp"
#include "sim/critical_path/perseus_validation.hpp"
#include "sim/kareus/kareus.hpp"
#include "sim/synthetic_run.hpp"

#include <chrono>
#include <cstdio>
#include <string_view>

namespace dvfs {

void bench_critical_path(bool quick) {
  std::printf("  critical-path frontier (Phillips-Dessouky min cuts on Boost.Graph, 1 ms quantum, clocks from the model's calibration floor):\n");
  // The A100 set (the target's size); the A40's 8 x 256 frontier takes ~30 s (validate --perseus prints it).
  for (const char* set : {"a100_gpt3-xl_pp4"}) {
    const PerseusRunSet rs = find_perseus_runs(data_dir() + "/traces/perseus-runs/" + set);
    const GpuModel m = load_gpu_model(set[1] == '1' ? "a100-sxm4" : "a40");
    const PerseusPrediction p = build_perseus_prediction(rs, m, m.idle_w(), 0, calibrated_min_sm_mhz(m));
    FrontierOptions fo;
    fo.p_blocking_w = p.p_blocking_w;
    const Frontier f = solve_frontier(p.dag, p.curves, fo);
    const int S = static_cast<int>(p.node_of.size()), M = static_cast<int>(p.node_of.front().size()) / 2;
    std::printf("    Perseus %s, %d stages x %d micro-batches: %zu points (%zu cuts) in %.2f s   target < 10 s   ratio %.1fx\n", set, S, M,
                f.points.size(), f.iterations, f.solve_s, 10.0 / f.solve_s);
  }
  for (const char* model : {"llama-3.3-70b", "gpt3-175b"}) {
    if (quick && model != std::string_view("llama-3.3-70b")) {  // --quick: the 70B plan only
      std::printf("    %s: skipped (--quick)\n", model);
      continue;
    }
    SyntheticRun req;
    req.model = model;
    req.layout = {8, 8, 16};
    req.cluster = default_cluster_spec();
    req.policy = "critical-path";
    const Json r = run_synthetic(req);
    const Json& cp = r["critical_path"];
    const Json& rep = cp["replicas"][0];
    std::printf("    %s on %d GPUs (TP 8 x PP 8 x DP 16, h200): curves %.2f s + frontier %.2f s (%zu cuts) + plan = %.2f s   "
                "target < 120 s   ratio %.0fx; replay %.2f s\n",
                model, r["gpus"].get<int>(), cp["curves_s"].get<double>(), rep["frontier"]["solve_s"].get<double>(),
                rep["frontier"]["cuts"].get<std::size_t>(), cp["plan_s"].get<double>(), 120.0 / cp["plan_s"].get<double>(),
                r["replay_s"].get<double>());
  }
  if (quick) {
    std::printf("    Kareus frontier: skipped (--quick)\n");
    return;
  }
  {  // Kareus: every knob setting's frontier and their envelope (sim/kareus)
    SyntheticRun req;
    req.model = "llama-3.3-70b";
    req.layout = {8, 8, 16};
    req.cluster = default_cluster_spec();
    const SynthesizedJob job = synthesize_job(req);
    const KareusFrontier kf = kareus_frontier(job.kp, job.wl.names, job.bound, job.opts, load_kareus_knobs(default_kareus_knobs_path()),
                                              load_contention_model(data_dir() + "/models/contention/h200-streams.json"));
    std::printf("    Kareus frontier llama-3.3-70b on 1024 GPUs (h200): %zu knob settings, envelope of %zu points in %.1f s   target < 120 s   "
                "ratio %.1fx\n",
                kf.settings.size(), kf.envelope.size(), kf.seconds, 120.0 / kf.seconds);
  }
}

}  // namespace dvfs
