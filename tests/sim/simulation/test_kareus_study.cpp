#include "sim/simulation/kareus_study.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dvfs;

TEST_CASE("the Kareus study's text ends with its last line whole", "[kareus][format]") {
  // The study's six lines run past 512 characters at 1,024 GPUs: a fixed buffer printed them without their end.
  const Json study = {
      {"model", "llama-3.3-70b"},
      {"gpu", "b200-like"},
      {"layout", {{"gpus", 1024}, {"tp", 8}, {"pp", 8}, {"dp", 16}}},
      {"both_off", {{"iteration_s", 3.133}, {"energy_j", 20200.0}}},
      {"iso_time",
       {{"iteration_s", 3.133}, {"perseus_j", 16300.0}, {"perseus_vs_off_pct", -19.2}, {"kareus_j", 15900.0},
        {"kareus_vs_perseus_pct", -2.4}, {"kareus_setting", "2 nano-batches, 16 comm SMs, window 1.00"}}},
      {"iso_energy", {{"energy_j", 16300.0}, {"perseus_s", 3.133}, {"kareus_s", 3.055}, {"kareus_vs_perseus_pct", -2.5}}},
      {"along_perseus_frontier", {{"max_energy_saving_pct", 3.1}, {"max_time_saving_pct", 2.6}}},
      {"settings", 13},
      {"frontier_s", 25.86}};
  const std::string text = format_kareus_study(study);
  CHECK(text.size() > 512);
  CHECK(text.rfind("  13 knob settings, frontiers in 25.9 s\n") == text.size() - 40);
  CHECK(text.find("llama-3.3-70b on 1024 GPUs (TP 8 x PP 8 x DP 16, b200-like)") == 0);
}
