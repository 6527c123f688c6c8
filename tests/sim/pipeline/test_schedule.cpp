#include "sim/core/errors.hpp"
#include "sim/pipeline/pipeline.hpp"
#include "sim/pipeline/schedule.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <tuple>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {
std::string order(const std::vector<PipelineOp>& ops) {
  std::string s;
  for (const auto& op : ops) s += (op.backward ? "B" : "F") + std::to_string(op.chunk) + "." + std::to_string(op.microbatch) + " ";
  return s;
}

// Every virtual stage: forward f / chunks and backward b / chunks per micro-batch.
PipelineWorkload uniform_interleaved(int stages, int chunks, int mbs, double f, double b) {
  PipelineWorkload wl;
  wl.stages = stages;
  wl.microbatches = mbs;
  wl.chunks = chunks;
  wl.schedule = chunks > 1 ? PipelineSchedule::interleaved_1f1b : PipelineSchedule::one_f_one_b;
  wl.forward_s.assign(static_cast<std::size_t>(stages * chunks), std::vector<double>(static_cast<std::size_t>(mbs), f / chunks));
  wl.backward_s.assign(static_cast<std::size_t>(stages * chunks), std::vector<double>(static_cast<std::size_t>(mbs), b / chunks));
  return wl;
}
}  // namespace

TEST_CASE("interleaved 1F1B visits the chunks in groups of stages, backwards in reverse chunk order", "[pipeline][schedule]") {
  // Megatron-LM, 2 stages x 2 chunks, 4 micro-batches, stage 0: (2 - 0 - 1) x 2 + (2 - 1) x 2 = 4 warm-up forwards.
  CHECK(order(interleaved_one_f_one_b(0, 2, 4, 2)) ==
        "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3 ");
  // Every stage runs every (chunk, micro-batch) forward and backward exactly once.
  for (int s = 0; s < 4; ++s) {
    const auto ops = interleaved_one_f_one_b(s, 4, 8, 3);
    CHECK(ops.size() == 2u * 8u * 3u);
    std::set<std::tuple<bool, int, int>> seen;
    for (const auto& op : ops) seen.insert({op.backward, op.chunk, op.microbatch});
    CHECK(seen.size() == ops.size());
  }
}

TEST_CASE("interleaving divides the pipeline bubble by the number of chunks", "[pipeline][schedule]") {
  // Narayanan et al. (SC'21): M (f + b) + (S - 1) (f + b) / v for uniform stages and free transfers.
  for (int v : {1, 2, 4})
    for (int m : {4, 8, 16}) {
      INFO("chunks " << v << ", micro-batches " << m);
      CHECK(simulate_pipeline(uniform_interleaved(4, v, m, 1.0, 2.0)).iteration_s == Approx(m * 3.0 + 3 * 3.0 / v).epsilon(1e-9));
    }
}

TEST_CASE("schedules that cannot run a shape are errors naming the field", "[pipeline][schedule]") {
  CHECK_THROWS_WITH(check_schedule(PipelineSchedule::interleaved_1f1b, 4, 6, 2, "s.json"),
                    Catch::Contains("s.json: microbatches: interleaved-1f1b needs micro-batches (6) to be a multiple of the pipeline stages (4)"));
  CHECK_THROWS_WITH(check_schedule(PipelineSchedule::interleaved_1f1b, 4, 8, 1, "s.json"), Catch::Contains("at least 2 model chunks"));
  CHECK_THROWS_WITH(check_schedule(PipelineSchedule::gpipe, 4, 8, 2, "s.json"), Catch::Contains("virtual_stages"));
  PipelineSchedule s;
  CHECK(pipeline_schedule_from_string("interleaved-1f1b", s));
  CHECK(s == PipelineSchedule::interleaved_1f1b);
  CHECK_FALSE(pipeline_schedule_from_string("zero-bubble", s));
}
