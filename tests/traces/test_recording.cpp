#include "support/scratch_dir.hpp"
#include <filesystem>
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "traces/src/recording.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

using namespace dvfs;

namespace {

// A fresh directory per call, inside one scratch directory that goes when the test process ends.
std::string temp_dir() {
  static const dvfs::testing::ScratchDir root("dvfs-test");
  static int made = 0;
  const std::string dir = root / std::to_string(made++);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string fixture_text(const std::string& name) {
  std::ifstream in(std::string(DVFS_TEST_FIXTURES) + "/" + name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A recording of the small fixture trace (epoch 1.7e18 ns + 1010 us onwards).
std::string make_recording(const std::string& telemetry, const std::string& run_json) {
  std::string dir = temp_dir();
  write(dir + "/trace.json", fixture_text("kineto_current.json"));
  write(dir + "/telemetry.csv", telemetry);
  write(dir + "/run.json", run_json);
  return dir;
}

const char* kTelemetry =
    "t_ns,energy_mj,power_mw,power_instant_mw,sm_mhz,mem_mhz\n"
    "1700000000000900000,1000,300000,300000,1980,3201\n"
    "1700000000001100000,1000,300000,300000,1500,3201\n"
    "1700000000003000000,1600,300000,300000,1500,3201\n";

}  // namespace

TEST_CASE("the shipped GPT-3 XL recording loads with clocks, steps and measured energy", "[traces][recording]") {
  Recording rec = load_recording(data_dir() + "/traces/recordings/h200-gpt3xl", Classifier::load_default());
  const Rank& r = rec.workload.ranks[0];
  CHECK(r.kernels.size() == 11172);
  REQUIRE(r.steps.size() == 6);
  REQUIRE(rec.steps.size() == 6);
  double counter = 0, interpolated = 0;
  for (std::size_t s = 0; s < 6; ++s) {
    CHECK(r.steps[s].last_kernel - r.steps[s].first_kernel + 1 == 1862);
    CHECK(r.steps[s].lead_s > 0);
    CHECK(r.steps[s].lead_s < 0.01);
    counter += rec.steps[s].counter_energy_j;
    interpolated += rec.steps[s].energy_j;
    CHECK(rec.steps[s].mean_sm_mhz > 1400);
    CHECK(rec.steps[s].mean_sm_mhz < 1990);
  }
  // run.json's per-step counter differences sum to 1,241.4 J; interpolation moves energy between
  // neighbouring steps but cannot create or lose much of it.
  CHECK(counter == Catch::Detail::Approx(1241.397).epsilon(1e-6));
  CHECK(interpolated == Catch::Detail::Approx(counter).epsilon(0.05));
  for (const Kernel& k : r.kernels) {
    CHECK(k.recorded_sm_mhz >= 1470);
    CHECK(k.recorded_sm_mhz <= 1980);
    CHECK(k.recorded_mem_mhz == 3201);
  }
}

TEST_CASE("recorded clocks are the telemetry's at each kernel start", "[traces][recording]") {
  std::string dir = make_recording(kTelemetry, R"({"run": {"profiled_steps": [
      {"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000, "energy_mj": 300},
      {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000, "energy_mj": 300}]}})");
  Recording rec = load_recording(dir, Classifier::load_default());
  const Rank& r = rec.workload.ranks[0];
  CHECK(r.kernels[0].recorded_sm_mhz == 1980);  // starts at 1010 us, before the 1100 us sample
  CHECK(r.kernels[1].recorded_sm_mhz == 1500);
  // Measured bounds set the host lead (1010 - 1000 us) and tail (1160 - 1152 us); epoch nanoseconds
  // near 1.7e18 carry only ~256 ns of double precision.
  CHECK(r.steps[0].lead_s == Catch::Detail::Approx(10e-6).margin(0.5e-6));
  CHECK(r.steps[0].tail_s == Catch::Detail::Approx(8e-6).margin(0.5e-6));
  // The counter read 1 J from the first sample (0.9 ms) and 1.6 J from its update between the samples
  // at 1.1 and 3.0 ms (midpoint 2.05 ms): step 1 [2.0, 2.05] ms gets 0.6 J * 0.05 / 1.15.
  CHECK(rec.steps[1].energy_j == Catch::Detail::Approx(0.6 * 0.05 / 1.15).epsilon(0.01));
}

TEST_CASE("telemetry and run.json problems are one-line errors naming file and field", "[traces][recording][errors]") {
  auto expect = [](const std::string& dir, const std::string& part) {
    try {
      load_recording(dir, Classifier::load_default());
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(part) != std::string::npos);
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  };
  expect(make_recording("t_ns,energy_mj\n1,2\n3,4\n", "{}"), "missing column \"sm_mhz\"");
  expect(make_recording("t_ns,sm_mhz,mem_mhz\n1700000000000900000,fast,3201\n1700000000003000000,1500,3201\n", "{}"),
         "row 2, column sm_mhz");
  // a negative or non-finite reading (a negative power passed for the column-absent mark)
  expect(make_recording("t_ns,sm_mhz,mem_mhz,power_mw\n1700000000000900000,1500,3201,-5\n1700000000003000000,1500,3201,1\n", "{}"),
         "row 2, column power_mw: expected a finite number >= 0 and <= 1e+07, got \"-5\"");
  expect(make_recording("t_ns,sm_mhz,mem_mhz\n1700000000000900000,nan,3201\n1700000000003000000,1500,3201\n", "{}"),
         "row 2, column sm_mhz: expected a finite number >= 0");
  expect(make_recording("t_ns,sm_mhz,mem_mhz\n5,1500,3201\n6,1500,3201\n", "{}"), "does not overlap");
  // a row longer than the header (a shifted column), a clock or a power no GPU reaches: accepted before
  expect(make_recording("t_ns,sm_mhz,mem_mhz\n1700000000000900000,1500,3201,7\n1700000000003000000,1500,3201\n", "{}"),
         "row 2: expected at most 3 values as in the header, got 4");
  expect(make_recording("t_ns,sm_mhz,mem_mhz\n1700000000000900000,99999,3201\n1700000000003000000,1500,3201\n", "{}"),
         "row 2, column sm_mhz: expected a finite number >= 0 and <= 10000, got \"99999\"");
  expect(make_recording("t_ns,sm_mhz,mem_mhz,power_mw\n1700000000000900000,1500,3201,1e300\n1700000000003000000,1500,3201,1\n", "{}"),
         "row 2, column power_mw: expected a finite number >= 0 and <= 1e+07");
  expect(make_recording(kTelemetry, R"({"run": {"profiled_steps": [{"t0_ns": 1, "t1_ns": 2}]}})"),
         "run.profiled_steps");
  expect(temp_dir(), "trace.json.gz");
  // Step bounds of 0 or a negative epoch, or far beyond the trace: their idle lead and tail were replayed for hours.
  for (const char* t0 : {"0", "-1700000000000000000"})
    expect(make_recording(kTelemetry, std::string(R"({"run": {"profiled_steps": [{"t0_ns": )") + t0 + R"(, "t1_ns": 1700000000001160000},
        {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})"),
           "run.profiled_steps[0].t1_ns: expected a step of at most 86400 s");
  expect(make_recording(kTelemetry, R"({"run": {"profiled_steps": [{"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000},
        {"t0_ns": 1700000000002000000, "t1_ns": 2e18}]}})"),
         "run.profiled_steps[1].t1_ns: expected a step of at most 86400 s (t1_ns - t0_ns");
  expect(make_recording(kTelemetry, R"({"run": {"profiled_steps": [{"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000, "energy_mj": -300},
        {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})"),
         "run.profiled_steps[0].energy_mj");
  expect(make_recording(kTelemetry, R"({"run": {"profiled_steps": [{"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000, "energy_mJ": 300},
        {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})"),
         "run.profiled_steps[0].energy_mJ: unknown key (expected one of: t0_ns, t1_ns, energy_mj)");
}

TEST_CASE("profiled steps that overlap, or that the telemetry does not cover, are refused instead of measured wrong",
          "[traces][recording][errors]") {
  auto message = [](const std::string& run_json) {
    try {
      load_recording(make_recording(kTelemetry, run_json), Classifier::load_default());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // the second step starts 60 us before the first ends: its overlap would be counted twice
  CHECK_THAT(message(R"({"run": {"profiled_steps": [{"t0_ns": 1700000000001000000, "t1_ns": 1700000000002060000},
        {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})"),
             Catch::Contains("run.profiled_steps[1].t0_ns: expected steps that do not overlap (this step starts 0.06"));
  // the telemetry ends at ...3000000 ns: a step ending later has no measurement for its end
  CHECK_THAT(message(R"({"run": {"profiled_steps": [{"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000},
        {"t0_ns": 1700000000002000000, "t1_ns": 1700000000003500000}]}})"),
             Catch::Contains("run.profiled_steps[1].t1_ns: expected the step within the telemetry's samples"));
  CHECK_THAT(message(R"({"run": {"profiled_steps": [{"t0_ns": 1700000000000800000, "t1_ns": 1700000000001160000},
        {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})"),
             Catch::Contains("run.profiled_steps[0].t0_ns: expected the step within the telemetry's samples"));
}

TEST_CASE("measured step bounds that do not hold their traced kernels are refused: run.json and the trace's clock disagree",
          "[traces][recording][errors]") {
  const std::string long_telemetry =  // 0.9 ms to 500 ms after the fixture's epoch
      "t_ns,energy_mj,power_mw,power_instant_mw,sm_mhz,mem_mhz\n"
      "1700000000000900000,1000,300000,300000,1980,3201\n"
      "1700000000250000000,76000,300000,300000,1980,3201\n"
      "1700000000500000000,151000,300000,300000,1980,3201\n";
  // both steps 200 ms later than their kernels (which run 1-3 ms after the epoch)
  try {
    load_recording(make_recording(long_telemetry, R"({"run": {"profiled_steps": [{"t0_ns": 1700000000201000000, "t1_ns": 1700000000201160000},
        {"t0_ns": 1700000000202000000, "t1_ns": 1700000000202050000}]}})"),
                   Classifier::load_default());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("run.profiled_steps[0].t0_ns: expected the step to hold its traced kernels") &&
                             Catch::Contains("run.json's bounds and the trace's clock (baseTimeNanoseconds) disagree"));
  }
  // within the clocks' slack (a few ms off), the same steps load
  CHECK_NOTHROW(load_recording(make_recording(long_telemetry, R"({"run": {"profiled_steps": [{"t0_ns": 1700000000003000000, "t1_ns": 1700000000003160000},
        {"t0_ns": 1700000000004000000, "t1_ns": 1700000000004050000}]}})"),
                               Classifier::load_default()));
}

TEST_CASE("a step's counter energy is a measurement only when the step spans two counter updates", "[traces][recording]") {
  // Samples every 10 us over the fixture trace; the counter advances 5 mJ every 50 us (5 samples).
  std::string csv = "t_ns,energy_mj,sm_mhz,mem_mhz\n";
  for (int i = 0; i <= 210; ++i)
    csv += std::to_string(1700000000000900000LL + 10000LL * i) + "," + std::to_string(1000 + 5 * (i / 5)) + ",1980,3201\n";
  std::string dir = make_recording(csv, R"({"run": {"profiled_steps": [
      {"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000},
      {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})");
  Recording rec = load_recording(dir, Classifier::load_default());
  CHECK(rec.telemetry.counter_update_interval_s() == Catch::Detail::Approx(50e-6).margin(0.5e-6));  // epoch ns near 1.7e18 carry ~256 ns
  REQUIRE(rec.steps.size() == 2);
  CHECK(rec.steps[0].energy_resolved);        // 160 us >= 2 x 50 us
  CHECK_FALSE(rec.steps[1].energy_resolved);  // 50 us: one update
  CHECK(counter_resolves(0.2, 0.1));
  CHECK_FALSE(counter_resolves(0.19, 0.1));
  CHECK_FALSE(counter_resolves(10.0, -1));  // a counter seen advancing fewer than three times resolves nothing
}

TEST_CASE("a step measured across a stall in the telemetry carries the span its energy interpolates over",
          "[traces][recording]") {
  // As above (a sample every 10 us, the counter advancing every 50 us), but the poller stalls from 50 us to 300 us
  // after the first sample: the first step's start falls inside the stall.
  std::string csv = "t_ns,energy_mj,sm_mhz,mem_mhz\n";
  for (int i = 0; i <= 210; ++i)
    if (i < 5 || i > 30)
      csv += std::to_string(1700000000000900000LL + 10000LL * i) + "," + std::to_string(1000 + 5 * (i / 5)) + ",1980,3201\n";
  std::string dir = make_recording(csv, R"({"run": {"profiled_steps": [
      {"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000},
      {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})");
  Recording rec = load_recording(dir, Classifier::load_default());
  REQUIRE(rec.steps.size() == 2);
  CHECK(rec.steps[0].interpolated_span_s > 250e-6);                                     // the stall
  CHECK(rec.steps[1].interpolated_span_s == Catch::Detail::Approx(50e-6).margin(1e-6));  // the counter's own updates
}

TEST_CASE("with power samples standing in for the counter, a step's span is its longest gap between samples",
          "[traces][recording]") {
  // The counter never advances (power samples are integrated instead); samples every 10 us, stalled from 50 us to 300 us.
  std::string csv = "t_ns,energy_mj,power_mw,sm_mhz,mem_mhz\n";
  for (int i = 0; i <= 210; ++i)
    if (i < 5 || i > 30) csv += std::to_string(1700000000000900000LL + 10000LL * i) + ",1000,300000,1980,3201\n";
  std::string dir = make_recording(csv, R"({"run": {"profiled_steps": [
      {"t0_ns": 1700000000001000000, "t1_ns": 1700000000001160000},
      {"t0_ns": 1700000000002000000, "t1_ns": 1700000000002050000}]}})");
  Recording rec = load_recording(dir, Classifier::load_default());
  REQUIRE_FALSE(rec.telemetry.energy_note().empty());  // power samples, not the counter
  REQUIRE(rec.steps.size() == 2);
  CHECK(rec.steps[0].interpolated_span_s == Catch::Detail::Approx(270e-6).margin(1e-6));
  CHECK(rec.steps[1].interpolated_span_s == Catch::Detail::Approx(10e-6).margin(1e-6));
}

TEST_CASE("a step ending in a telemetry stall after the counter's last advance carries the stall", "[traces][recording]") {
  // Samples every 10 us over the fixture's first 40 us, then one sample (with an advance) 560 us later: the second
  // step ends 360 us into the stall, past the midpoint where its last advance is placed; its energy is held flat there.
  std::string csv = "t_ns,energy_mj,sm_mhz,mem_mhz\n";
  for (int i = 0; i <= 4; ++i) csv += std::to_string(1700000000000900000LL + 10000LL * i) + "," + std::to_string(1000 + 5 * (i / 2)) + ",1980,3201\n";
  csv += "1700000000001500000,1100,1980,3201\n";
  std::string dir = make_recording(csv, R"({"run": {"profiled_steps": [
      {"t0_ns": 1700000000000905000, "t1_ns": 1700000000000912000},
      {"t0_ns": 1700000000000920000, "t1_ns": 1700000000001300000}]}})");
  Recording rec = load_recording(dir, Classifier::load_default());
  REQUIRE(rec.steps.size() == 2);
  CHECK(rec.steps[0].interpolated_span_s < 20e-6);                                         // inside the dense samples
  CHECK(rec.steps[1].interpolated_span_s == Catch::Detail::Approx(560e-6).margin(1e-6));  // the stall (its start: 20 us)
}
