// The trace export (sim/results/trace_export.hpp): a simulated run written in Kineto's layout imports back
// through our own importer as a recording made at the simulated clocks, and replaying that recording at
// those clocks gives the same run.
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/results/trace_export.hpp"
#include "sim/simulation/simulation.hpp"
#include "traces/src/gzip_file.hpp"
#include "traces/src/kineto_importer.hpp"
#include "replay_equality.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unistd.h>

using namespace dvfs;

using testing::check_same_run;

namespace {

std::vector<RankOutcome> replay(const Workload& wl, const GpuModel& m, const PolicySpec& spec, ReplayOptions opts) {
  opts.record_activities = true;
  return run_engine(wl, m, make_policy_factory(spec, m, "test"), opts, EngineMode::local_loop);
}

std::string export_text(const Workload& wl, const std::vector<RankOutcome>& out, const GpuModel& m, int repeat = 1) {
  return trace_export_text(engine_trace_export(wl, out, m.name(), m.sm_count(), repeat, Json::object()));
}

const GpuModel& h200() {
  static const GpuModel m = load_gpu_model("h200");
  return m;
}

}  // namespace

TEST_CASE("round trip: a replay at the recorded clocks exports, imports and replays to the same totals", "[export]") {
  // The shapes recording: kernels carry work rates (the activity power model) and their recorded clocks.
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-gpt3xl-shapes");
  const GpuModel m = h200().bound_to(trace.workload.names);
  ReplayOptions opts;
  opts.firmware_latency_s = 0.0;  // the clocks change between activities, not inside one
  const PolicySpec recorded{"recorded", {}, 0};
  const auto first = replay(trace.workload, m, recorded, opts);
  const std::string text = export_text(trace.workload, first, m);

  ImportReport rep;
  const Workload again = import_kineto_text(text, "exported.json", Classifier::load_default(), &rep);
  REQUIRE(again.ranks.size() == 1);
  REQUIRE(again.ranks[0].kernels.size() == trace.workload.ranks[0].kernels.size());
  CHECK(rep.step_source == "gpu_user_annotation");
  for (const std::string& note : rep.notes)  // its own phase ranges ("dvfs_phase", on the device) are no unknown category
    CHECK_THAT(note, !Catch::Contains("category Kineto does not write"));
  const auto second = replay(again, h200().bound_to(again.names), recorded, opts);
  check_same_run(first[0], second[0]);
}

TEST_CASE("round trip: the bytes of ATen's non-vectorised elementwise loop travel with their kernels", "[export]") {
  // split unvectorised_bytes: a ViT's transposes and broadcasts run `elementwise_kernel<`
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-user-scripts/vit-b32");
  const GpuModel m = h200().bound_to(trace.workload.names);
  ReplayOptions opts;
  opts.firmware_latency_s = 0.0;
  const auto first = replay(trace.workload, m, PolicySpec{"recorded", {}, 0}, opts);
  const Workload again = import_kineto_text(export_text(trace.workload, first, m), "exported.json", Classifier::load_default());
  testing::check_same_unvectorised_rates(trace.workload, again);
}

TEST_CASE("round trip at other fixed clocks: kernels come back at their simulated duration and clocks", "[export]") {
  // Kernels with class priors, and with work rates: Kernel keeps rates as floats, so rates rescaled to the
  // simulated duration round (~6e-8 each); the totals still agree to 1e-9, a step or a class to 1e-7.
  const std::string rec = GENERATE(std::string("h200-gpt3xl"), std::string("h200-gpt3xl-shapes"));
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/" + rec);
  const GpuModel m = h200().bound_to(trace.workload.names);
  const PolicySpec slow{"static", ClockPair{1410, 3201}, 0};
  ReplayOptions opts;
  opts.repeat = 2;
  const auto first = replay(trace.workload, m, slow, opts);
  const Workload again = import_kineto_text(export_text(trace.workload, first, m, 2), "exported.json", Classifier::load_default());
  // The imported trace is one pass of twice the steps, recorded at 1410 MHz.
  REQUIRE(again.ranks[0].kernels.size() == 2 * trace.workload.ranks[0].kernels.size());
  CHECK(again.ranks[0].steps.size() == 2 * trace.workload.ranks[0].steps.size());
  for (const Kernel& k : again.ranks[0].kernels)
    if (k.duration_s > 0) CHECK(k.recorded_sm_mhz == 1410.0f);
  ReplayOptions once;
  const auto second = replay(again, h200().bound_to(again.names), slow, once);
  check_same_run(first[0], second[0], rec == "h200-gpt3xl" ? 1e-9 : 1e-7);
}

TEST_CASE("export layout: a process per GPU, a track per stream, names and correlation ids kept, counters", "[export]") {
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-gpt3xl");
  const GpuModel m = h200().bound_to(trace.workload.names);
  ReplayOptions opts;
  const auto out = replay(trace.workload, m, PolicySpec{"native", {}, 0}, opts);
  const Json doc = Json::parse(export_text(trace.workload, out, m));
  const Rank& rank = trace.workload.ranks[0];

  std::set<std::string> counters, threads;
  std::vector<std::pair<std::string, long>> kernels;  // name, correlation in start order
  std::size_t steps = 0, with_clocks = 0;
  double energy = 0;
  for (const Json& ev : doc["traceEvents"]) {
    const std::string ph = ev["ph"];
    if (ph == "C") counters.insert(ev["name"].get<std::string>());
    if (ph == "M" && ev["name"] == "thread_name") threads.insert(ev["args"]["name"].get<std::string>());
    if (ph == "M" && ev["name"] == "process_name") CHECK(ev["pid"] == rank.id);
    if (ph != "X") continue;
    const std::string cat = ev["cat"];
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      kernels.emplace_back(ev["name"].get<std::string>(), ev["args"]["correlation"].get<long>());
      energy += ev["args"]["energy (J)"].get<double>();
      if (ev["args"].contains("sm clock (MHz)")) ++with_clocks;
      CHECK(ev["tid"] == ev["args"]["stream"]);
    }
    if (cat == "gpu_user_annotation" && Classifier::load_default().is_step_annotation(ev["name"])) ++steps;
  }
  REQUIRE(kernels.size() == rank.kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    CHECK(kernels[i].first == trace.workload.names[rank.kernels[i].name_id]);
    CHECK(kernels[i].second == rank.correlations[i]);
  }
  CHECK(rank.correlations.front() >= 0);  // the recorded trace had them: they are the ones exported
  CHECK(steps == rank.steps.size());
  CHECK(with_clocks > kernels.size() / 2);
  // The activities' energies are the busy energy of the replay.
  CHECK(energy == Approx(out[0].meter.total_j() - out[0].meter.gap_j() - out[0].meter.switch_j()).epsilon(1e-9));
  for (const char* c : {"power (W)", "SM clock (MHz)", "memory clock (MHz)", "energy (J)"}) CHECK(counters.count(c) == 1);
  for (const char* t : {"steps", "phases", "annotations"}) CHECK(threads.count(t) == 1);
}

TEST_CASE("export needs the replay's activity records", "[export]") {
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-gpt3xl");
  const GpuModel m = h200().bound_to(trace.workload.names);
  const auto out = run_engine(trace.workload, m, make_policy_factory(PolicySpec{"max", {}, 0}, m, "test"), ReplayOptions{},
                              EngineMode::local_loop);
  CHECK_THROWS_AS(export_text(trace.workload, out, m), std::logic_error);
}

TEST_CASE("importer: malformed simulated args name the event and field", "[export]") {
  const std::string bad = R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":0,"dur":1,
      "args":{"device":0,"stream":7,"sm clock (MHz)":"fast"}}]})J";
  try {
    import_kineto_text(bad, "bad.json", Classifier::load_default());
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("bad.json: traceEvents[0].args.sm clock (MHz)") != std::string::npos);
  }
  // the non-vectorised loop's bytes are a part of the memory rate, never more
  const std::string over = R"J({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":0,"dur":1,
      "args":{"device":0,"stream":7,"work":{"source":"shapes","memory TB/s":1.0,"unvectorised TB/s":2.0}}}]})J";
  CHECK_THROWS_WITH(import_kineto_text(over, "over.json", Classifier::load_default()),
                    Catch::Contains("over.json: traceEvents[0].args.work.unvectorised TB/s") && Catch::Contains("at most"));
}

TEST_CASE("gzip export: per-GPU deflate segments make one gzip member that inflates to the same text; a GPU subset", "[export]") {
  // Two ranks so that the file has several segments (head, one per GPU, tail), each deflated on its own thread.
  const LoadedTrace trace = load_trace(data_dir() + "/traces/recordings/h200-gpt3xl");
  Workload two = trace.workload;
  two.ranks.push_back(two.ranks[0]);
  two.ranks[1].id = 1;
  const GpuModel m = h200().bound_to(two.names);
  const auto out = replay(two, m, PolicySpec{"max", {}, 0}, ReplayOptions{});
  TraceExport t = engine_trace_export(two, out, m.name(), m.sm_count(), 1, Json::object());
  // Under the temp folder and removed after: a run from the source tree must not leave files beside it.
  const std::string path = std::string(P_tmpdir) + "/dvfs_export_gz_" + std::to_string(::getpid()) + ".json.gz";
  const TraceExportStats st = write_trace_export(t, path);
  const std::string text = trace_export_text(t);
  CHECK(read_maybe_gzip(path) == text);  // zlib's inflate: one member, CRC-32 and length checked
  CHECK(st.bytes == text.size());
  CHECK(st.file_bytes < text.size() / 4);
  std::remove(path.c_str());
  t.only_gpus = {1};
  const Json one = Json::parse(trace_export_text(t));
  std::set<int> pids;
  for (const Json& e : one["traceEvents"]) pids.insert(e["pid"].get<int>());
  CHECK(pids == std::set<int>{1});
  CHECK(one["deviceProperties"].size() == 1);
  CHECK_THROWS_AS(parse_gpu_list("3-1", "--trace-gpus"), InputError);
  CHECK(parse_gpu_list("0-2,7", "--trace-gpus") == std::vector<int>{0, 1, 2, 7});
}
