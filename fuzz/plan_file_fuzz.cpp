// Fuzz target: clock plan files (Perseus's N.sched.json format, plain or gzip-compressed), read by
// sim/critical_path/plan_file.cpp, then mapped onto a 1F1B pipeline as the critical-path replay does
// (one clock per computation, or Merak's instruction list).
#include "fuzz/fuzz_support.hpp"
#include "sim/core/errors.hpp"
#include "sim/critical_path/plan_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dvfs::fuzz::scratch_dir() + "/plan.sched.json";
  dvfs::fuzz::write_file(path, data, size);
  dvfs::fuzz::expect_input_errors_only("plan_file", [&] {
    const dvfs::ClockPlanFile plan = dvfs::read_clock_plan(path);
    const int stages = static_cast<int>(plan.ranks.size());
    // The micro-batch count for which the first rank's entries are one per computation, and the
    // smallest one, so that both layouts' paths run.
    const int per_computation = static_cast<int>(plan.ranks.front().power_states_mhz.size() / 2);
    for (int microbatches : {per_computation, 1}) {
      if (microbatches < 1 || stages > 64) continue;
      try {
        dvfs::PlanLayout layout{};
        const auto clocks = dvfs::computation_clocks(plan, stages, microbatches, 1, dvfs::PipelineSchedule::one_f_one_b, &layout);
        const dvfs::ClockPlanFile back = dvfs::plan_from_computation_clocks(clocks, stages, microbatches, layout);
        (void)dvfs::clock_plan_to_json(back).dump();
      } catch (const dvfs::InputError&) {
      }
    }
  });
  return 0;
}
