#include "sim/pipeline/schedule.hpp"

#include "sim/core/errors.hpp"

#include <algorithm>

namespace dvfs {

const char* to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::interleaved_1f1b: return "interleaved-1f1b";
  }
  return "?";
}

bool pipeline_schedule_from_string(const std::string& s, PipelineSchedule& out) {
  for (PipelineSchedule p : {PipelineSchedule::one_f_one_b, PipelineSchedule::gpipe, PipelineSchedule::interleaved_1f1b})
    if (s == to_string(p)) {
      out = p;
      return true;
    }
  return false;
}

std::vector<PipelineOp> one_f_one_b(int stage, int stages, int microbatches) {
  std::vector<PipelineOp> ops;
  const int warm = std::min(stages - stage - 1, microbatches);
  int f = 0, b = 0;
  for (; f < warm; ++f) ops.push_back({false, f, 0});
  while (f < microbatches) {
    ops.push_back({false, f++, 0});
    ops.push_back({true, b++, 0});
  }
  while (b < microbatches) ops.push_back({true, b++, 0});
  return ops;
}

std::vector<PipelineOp> gpipe(int stage, int stages, int microbatches) {
  (void)stage;
  (void)stages;
  std::vector<PipelineOp> ops;
  for (int m = 0; m < microbatches; ++m) ops.push_back({false, m, 0});
  for (int m = microbatches - 1; m >= 0; --m) ops.push_back({true, m, 0});
  return ops;
}

std::vector<PipelineOp> interleaved_one_f_one_b(int stage, int stages, int microbatches, int chunks) {
  // Megatron-LM forward_backward_pipelining_with_interleaving: the k-th forward (backward) of a
  // stage is micro-batch (k / (S v)) S + k % S of chunk (k / S) % v (reversed for backwards).
  const int S = stages, v = chunks, total = microbatches * chunks;
  auto op = [&](int k, bool backward) {
    int chunk = (k % (S * v)) / S;
    if (backward) chunk = v - 1 - chunk;
    return PipelineOp{backward, (k / (S * v)) * S + k % S, chunk};
  };
  int warm = microbatches == S ? total : std::min(total, (S - stage - 1) * 2 + (v - 1) * S);
  std::vector<PipelineOp> ops;
  for (int k = 0; k < warm; ++k) ops.push_back(op(k, false));
  int b = 0;
  for (int k = warm; k < total; ++k) {
    ops.push_back(op(k, false));
    ops.push_back(op(b++, true));
  }
  while (b < total) ops.push_back(op(b++, true));
  return ops;
}

std::vector<PipelineOp> schedule_ops(PipelineSchedule s, int stage, int stages, int microbatches, int chunks) {
  switch (s) {
    case PipelineSchedule::gpipe: return gpipe(stage, stages, microbatches);
    case PipelineSchedule::interleaved_1f1b: return interleaved_one_f_one_b(stage, stages, microbatches, chunks);
    case PipelineSchedule::one_f_one_b: break;
  }
  return one_f_one_b(stage, stages, microbatches);
}

void check_schedule(PipelineSchedule s, int stages, int microbatches, int chunks, const std::string& source) {
  if (stages < 1) throw InputError(source, "stages", "expected at least one pipeline stage");
  if (microbatches < 1) throw InputError(source, "microbatches", "expected at least one micro-batch");
  if (s != PipelineSchedule::interleaved_1f1b) {
    if (chunks != 1)
      throw InputError(source, "virtual_stages", "expected 1 model chunk per stage for the " + std::string(to_string(s)) +
                                                     " schedule (interleaved-1f1b takes more)");
    return;
  }
  if (chunks < 2) throw InputError(source, "virtual_stages", "expected at least 2 model chunks per stage for interleaved-1f1b");
  if (microbatches % stages != 0)
    throw InputError(source, "microbatches", "interleaved-1f1b needs micro-batches (" + std::to_string(microbatches) +
                                                 ") to be a multiple of the pipeline stages (" + std::to_string(stages) + ")");
}

}  // namespace dvfs
