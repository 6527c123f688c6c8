#pragma once
namespace dvfs {
// Benchmark lines of the critical-path module: the frontier of the measured Perseus pipelines (A100
// GPT-3 XL, 4 stages x 128 micro-batches; A40 GPT-3 2.7B, 8 x 256) and the plans of llama-3.3-70b and
// gpt3-175b on 1,024 GPUs, each with its target.
void bench_critical_path();
}  // namespace dvfs
