#include "models/src/model_registry.hpp"
#include "sim/validate/validate.hpp"
#include "sim/core/json_util.hpp"
#include "traces/src/kernel_activity.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dvfs;

// The walking skeleton's acceptance figures on the real recording: energy per step within 10 % of the
// NVML counter, time per step within 5 %, with the simulated native governor.
TEST_CASE("H200 GPT-3 XL recording: native-governor replay meets the energy and time targets", "[validate]") {
  Json rep = validate_recording(data_dir() + "/traces/recordings/h200-gpt3xl", "h200");
  REQUIRE(rep["clock_sources"].size() == 2);
  const Json& native = rep["clock_sources"][0];
  const Json& recorded = rep["clock_sources"][1];
  CHECK(native["clock_source"] == "native");
  CHECK(recorded["clock_source"] == "recorded");
  REQUIRE(native["steps"].size() == 6);
  for (const Json& row : native["steps"]) {
    INFO("step " << row["step"]);
    CHECK(std::fabs(row["energy_error_pct"].get<double>()) <= 10.0);
    CHECK(std::fabs(row["time_error_pct"].get<double>()) <= 5.0);
  }
  CHECK(std::fabs(native["total"]["energy_error_pct"].get<double>()) <= 5.0);
  // With the recorded clocks the kernels take their recorded time: only the host lead/tail differ.
  CHECK(std::fabs(recorded["total"]["time_error_pct"].get<double>()) <= 0.5);
  for (const Json& row : recorded["steps"])
    CHECK(std::fabs(row["simulated_mean_sm_mhz"].get<double>() - row["measured_mean_sm_mhz"].get<double>()) < 15);
}

// Steps of 68-79 ms against the H200's ~100 ms energy-counter updates: no per-step energy is claimed, the
// profiled window (0.43 s) is compared instead; the GPT-3 XL steps (0.29-0.32 s) are each resolved.
TEST_CASE("validate compares per-step energy only where the counter resolves the step", "[validate]") {
  const Json short_steps = validate_recording(data_dir() + "/traces/recordings/h200-workloads/vit-b16-train-b32", "h200");
  const Json& counter = short_steps["energy_counter"];
  CHECK(counter["update_interval_s"].get<double>() == Catch::Detail::Approx(0.1).epsilon(0.02));
  CHECK(counter["steps_resolved"] == 0);
  CHECK(counter["window_resolved"] == true);
  for (const Json& row : short_steps["clock_sources"][0]["steps"]) CHECK(row["energy_resolved"] == false);
  const std::string text = format_validation(short_steps);
  CHECK(text.find("energy per step: not resolved") != std::string::npos);
  CHECK(text.find("the total row compares the whole profiled window") != std::string::npos);
  CHECK(text.find("MAPE over steps: time") != std::string::npos);
  CHECK(text.find(", energy ") == std::string::npos);  // no per-step energy MAPE

  const Json long_steps = validate_recording(data_dir() + "/traces/recordings/h200-gpt3xl", "h200");
  CHECK(long_steps["energy_counter"]["steps_resolved"] == 6);
  CHECK(format_validation(long_steps).find("not resolved") == std::string::npos);
}

// The GPT-3 XL recording's poller stalled for 587 ms just after step 5 ends: the counter advances bracketing that end
// lie 359 ms apart. Its energy there is interpolation, and the report says so; the short-step ViT recording has no such span.
TEST_CASE("validate names the steps whose measured energy is interpolated across a telemetry stall", "[validate]") {
  const Json rep = validate_recording(data_dir() + "/traces/recordings/h200-gpt3xl", "h200");
  const Json& gaps = rep["telemetry_gaps"];
  CHECK(gaps["steps"] == Json::array({5}));
  CHECK(gaps["longest_s"].get<double>() == Catch::Detail::Approx(0.359).margin(0.002));
  CHECK(format_validation(rep).find("telemetry gap: step 5 energy interpolated across up to 359 ms between telemetry readings") != std::string::npos);
  const Json vit = validate_recording(data_dir() + "/traces/recordings/h200-workloads/vit-b16-train-b32", "h200");
  CHECK(vit["telemetry_gaps"]["steps"].empty());
  CHECK(format_validation(vit).find("telemetry gap") == std::string::npos);
}

// PyTorch's profiler records no operator shapes by default (the shipped GPT-3 XL recording has none): its kernels are
// priced by class priors, and the report says so beside the figures; a trace with shapes gets no such note.
TEST_CASE("validate notes a trace priced mostly by class priors and where their measured error is", "[validate]") {
  const Json shapeless = validate_recording(data_dir() + "/traces/recordings/h200-gpt3xl", "h200");
  REQUIRE(shapeless.contains("class_prior_note"));
  const std::string note = shapeless["class_prior_note"].get<std::string>();
  CHECK(note.find("% of the kernel time is priced by class priors: no counted work reached those kernels") != std::string::npos);
  CHECK(note.find("shapes withheld") != std::string::npos);
  CHECK(format_validation(shapeless).find("note: " + note) != std::string::npos);
  const std::string vit = data_dir() + "/traces/recordings/h200-workloads/vit-b16-train-b32";
  CHECK_FALSE(validate_recording(vit, "h200").contains("class_prior_note"));
  CHECK(validate_recording(vit, "h200", "", true).contains("class_prior_note"));  // the same trace, shapes withheld
}

// The pre-pass (models/src/prior_regime.hpp) says which side of the cap a shapeless trace sits on: the at-cap GPT-3 XL
// training, where the priors were set, and a ViT training at 224 W, where they read high.
TEST_CASE("validate's class-prior note says whether the pre-pass puts the trace at the cap or below it", "[validate][prior_regime]") {
  const Json at_cap = validate_recording(data_dir() + "/traces/recordings/h200-gpt3xl", "h200");
  CHECK(at_cap["class_prior_at_cap_kernel_time_share"].get<double>() > 0.9);
  CHECK_THAT(at_cap["class_prior_note"].get<std::string>(), Catch::Contains("the regime the class priors were set in"));
  const Json below = validate_recording(data_dir() + "/traces/recordings/h200-workloads/vit-b16-train-b32", "h200", "", true);
  CHECK(below["class_prior_at_cap_kernel_time_share"].get<double>() < 0.5);
  CHECK_THAT(below["class_prior_note"].get<std::string>(), Catch::Contains("expect this energy too high"));
  CHECK(below["clock_sources"][0]["total"]["energy_error_pct"].get<double>() > 0);  // it does read high (+9.8 %)
}

// A user's model with class_prior_regime (no shipped model has it): the report says the trace was placed below the cap
// and priced with the model's below-cap scales, and the replay draws less than with the at-cap priors.
TEST_CASE("validate with a model that has class_prior_regime reports the regime it priced the trace in", "[validate][prior_regime]") {
  Recording rec = load_validation_recording(data_dir() + "/traces/recordings/h200-workloads/vit-b16-train-b32");
  REQUIRE(withhold_operator_work(rec.workload) > 0);
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  const Json plain = validate_recording(rec, GpuModel::from_json(doc, "h200.json"));
  doc["class_prior_regime"] = {{"cap_fraction", 0.9}, {"below_cap_scales", {{"elementwise", 0.5}, {"normalization", 0.5}}}};
  const Json scaled = validate_recording(rec, GpuModel::from_json(doc, "mine.json"));
  const Json& regime = scaled["gpu"]["class_prior_regime"];
  CHECK(regime["regime"] == "below the cap");
  CHECK(regime["at_cap_kernel_time_share"].get<double>() < 0.5);
  CHECK(regime["prior_scales"]["elementwise"].get<double>() == 0.5);
  CHECK_THAT(scaled["class_prior_note"].get<std::string>(), Catch::Contains("priced with the model's below-cap scales"));
  CHECK(scaled["clock_sources"][0]["total"]["simulated_energy_j"].get<double>() <
        plain["clock_sources"][0]["total"]["simulated_energy_j"].get<double>());
  CHECK_FALSE(plain["gpu"].contains("class_prior_regime"));
}
