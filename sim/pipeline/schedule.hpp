#pragma once
// Pipeline-parallel schedules: the order in which one pipeline stage (GPU) runs the forward and
// backward passes of its micro-batches. With interleaving, a stage holds `chunks` model chunks:
// virtual stage v = chunk x stages + stage, so the model runs through stage 0..S-1 `chunks` times.
#include <string>
#include <vector>

namespace dvfs {

enum class PipelineSchedule { one_f_one_b, gpipe, interleaved_1f1b };

const char* to_string(PipelineSchedule s);
// "1f1b", "gpipe", "interleaved-1f1b"; false for anything else.
bool pipeline_schedule_from_string(const std::string& s, PipelineSchedule& out);

struct PipelineOp {
  bool backward = false;
  int microbatch = 0;
  int chunk = 0;  // model chunk on this stage (0 unless interleaved)
};

// The 1F1B order of one stage: warm-up forwards, then one forward / one backward, then the
// remaining backwards (PipeDream-flush / Megatron-LM).
std::vector<PipelineOp> one_f_one_b(int stage, int stages, int microbatches);
// GPipe: every forward, then every backward (in reverse micro-batch order).
std::vector<PipelineOp> gpipe(int stage, int stages, int microbatches);
// Megatron-LM's interleaved 1F1B (Narayanan et al., SC'21): micro-batches go through the chunks in
// groups of `stages`; warm-up (stages - stage - 1) x 2 + (chunks - 1) x stages forwards, then one
// forward / one backward, then the remaining backwards; backwards visit the chunks in reverse.
std::vector<PipelineOp> interleaved_one_f_one_b(int stage, int stages, int microbatches, int chunks);

std::vector<PipelineOp> schedule_ops(PipelineSchedule s, int stage, int stages, int microbatches, int chunks = 1);

// Throws InputError(source, field, ...) when the schedule cannot run this shape: interleaving needs
// chunks >= 2 and micro-batches a multiple of the stages; the others take one chunk.
void check_schedule(PipelineSchedule s, int stages, int microbatches, int chunks, const std::string& source);

}  // namespace dvfs
