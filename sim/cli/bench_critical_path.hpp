#pragma once
namespace dvfs {
// Benchmark lines of the critical-path module: the frontier of the measured Perseus A100 pipeline
// (GPT-3 XL, 4 stages x 128 micro-batches) and the plans of llama-3.3-70b and gpt3-175b on 1,024
// GPUs, each with its target.
void bench_critical_path(bool quick = false);
}  // namespace dvfs
