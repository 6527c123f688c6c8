#include "sim/results/recording_gpu.hpp"

#include "models/src/model_registry.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;

TEST_CASE("a device name's chip is its first word with a digit, punctuation aside", "[results][notes]") {
  CHECK(chip_of("NVIDIA H200") == "h200");
  CHECK(chip_of("NVIDIA A100-SXM4-80GB") == "a100");
  CHECK(chip_of("Tesla V100-SXM2-32GB") == "v100");
  CHECK(chip_of("NVIDIA GeForce RTX 3080 Ti") == "3080");
  CHECK(chip_of("B200-like (NVIDIA Blackwell)") == "b200");
  CHECK(chip_of("GPU (simulated: h200)") == "h200");  // no ")" kept
  CHECK(chip_of("GPU").empty());
}

TEST_CASE("a Grace superchip's chip is its GPU's", "[results][notes]") {
  CHECK(chip_of("NVIDIA GH200 480GB") == "h100");  // 96 GB of HBM3
  CHECK(chip_of("NVIDIA GH200 144G HBM3e") == "h200");
  CHECK(chip_of("NVIDIA GB200") == "b200");
  CHECK(shipped_model_of("NVIDIA GH200 480GB") == "h100-sxm");
  CHECK(shipped_model_of("NVIDIA GH200 144G HBM3e") == "h200");
  CHECK_FALSE(other_gpu_note("NVIDIA GH200 144G HBM3e", load_gpu_model("h200"), false));
}

TEST_CASE("the shipped model of a recording chip is the board whose name shares most words with the device's", "[results][notes]") {
  CHECK(shipped_model_of("NVIDIA A100-SXM4-80GB") == "a100-sxm4");
  CHECK(shipped_model_of("NVIDIA A100 80GB PCIe") == "a100-pcie");
  CHECK(shipped_model_of("NVIDIA H100 80GB HBM3") == "h100-sxm");
  CHECK(shipped_model_of("Tesla V100-SXM2-32GB").empty());
}

TEST_CASE("a trace of another chip, or an export simulated on another model, replayed as recorded gets a note", "[results][notes]") {
  const GpuModel h200 = load_gpu_model("h200");
  CHECK_FALSE(other_gpu_note("NVIDIA H200", h200, false));
  CHECK_FALSE(other_gpu_note("NVIDIA A100-SXM4-80GB", h200, true));  // retargeted: the scenario named it
  const auto a100 = other_gpu_note("NVIDIA A100-SXM4-80GB", h200, false);
  REQUIRE(a100);
  CHECK_THAT(*a100, Catch::Contains("recorded on NVIDIA A100-SXM4-80GB") && Catch::Contains("(\"a100-sxm4\" for this chip)"));
  // an export names the model it was simulated on: its times are that model's, whatever the card it came from
  CHECK_FALSE(other_gpu_note("NVIDIA A100-SXM4-80GB (simulated: h200)", h200, false));
  const auto exported = other_gpu_note("NVIDIA H200 (simulated: a100-sxm4)", h200, false);
  REQUIRE(exported);
  CHECK_THAT(*exported, Catch::Contains("simulated on the a100-sxm4 model") && Catch::Contains("\"trace_gpu\": \"a100-sxm4\""));
  CHECK_FALSE(other_gpu_note("GPU (simulated: h200)", h200, false));
}
