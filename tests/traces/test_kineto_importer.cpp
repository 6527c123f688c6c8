#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "traces/src/gzip_file.hpp"
#include "traces/src/kernel_activity.hpp"
#include "traces/src/kineto_importer.hpp"
#include "traces/src/kineto_stream.hpp"
#include "tests/support/scratch_dir.hpp"

#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

using namespace dvfs;

namespace {

std::string fixture(const std::string& name) { return std::string(DVFS_TEST_FIXTURES) + "/" + name; }

const Classifier& classifier() {
  static Classifier c = Classifier::load_default();
  return c;
}

std::vector<std::string> annotations_of(const Workload& wl, const Kernel& k) {
  std::vector<std::string> out;
  for (auto a : wl.annotation_sets[k.annotation_set].annotations) out.push_back(wl.annotation_names[a]);
  std::sort(out.begin(), out.end());
  return out;
}

// The error message must name the file and the field.
void require_input_error(const std::string& file, const std::string& field_part, const std::string& problem_part) {
  try {
    import_kineto(file, classifier());
    FAIL("expected an InputError for " << file);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find(file) != std::string::npos);
    CHECK(msg.find(field_part) != std::string::npos);
    CHECK(msg.find(problem_part) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("current Kineto schema: activities, gaps, shapes, classes and fill are imported", "[traces]") {
  ImportReport rep;
  Workload wl = import_kineto(fixture("kineto_current.json"), classifier(), &rep);
  CHECK(rep.schema == "kineto");
  REQUIRE(wl.ranks.size() == 1);
  const Rank& r = wl.ranks[0];
  CHECK(r.device_name == "NVIDIA H200");
  REQUIRE(r.kernels.size() == 4);
  CHECK(r.kernels[0].duration_s == Catch::Detail::Approx(100e-6));
  CHECK(r.kernels[0].gap_before_s == 0.0);
  CHECK(r.kernels[1].gap_before_s == Catch::Detail::Approx(10e-6));   // 1110 -> 1120: host-bound gap kept
  CHECK(r.kernels[2].gap_before_s == Catch::Detail::Approx(10e-6));
  CHECK(r.kernels[3].gap_before_s == Catch::Detail::Approx(858e-6));  // between steps
  CHECK(r.kernels[0].cls == KernelClass::gemm);
  CHECK(r.kernels[1].cls == KernelClass::elementwise);
  CHECK(r.kernels[2].cls == KernelClass::copy);
  CHECK(r.kernels[2].kind == ActivityKind::memset);
  CHECK(r.kernels[3].cls == KernelClass::optimizer);
  CHECK(r.kernels[0].stream == 7);
  CHECK(r.kernels[0].sm_fill == Catch::Detail::Approx(1.0));
  CHECK(r.kernels[1].sm_fill == Catch::Detail::Approx(0.5));  // 66 blocks on 132 SMs
  CHECK(r.shapes[0].registers_per_thread == 168);
  CHECK(r.shapes[0].grid[0] == 132);
  CHECK(r.shapes[2].bytes == 4096);
  CHECK(r.origin_epoch_ns == Catch::Detail::Approx(1700000000000000000.0 + 1010.0 * 1000));
}

TEST_CASE("steps come from CPU step ranges through launch correlation, with the host lead", "[traces]") {
  ImportReport rep;
  Workload wl = import_kineto(fixture("kineto_current.json"), classifier(), &rep);
  const Rank& r = wl.ranks[0];
  CHECK(rep.step_source == "cpu user_annotation via launch correlation");
  REQUIRE(r.steps.size() == 2);
  CHECK(r.steps[0].label == "step0");
  CHECK(r.steps[0].first_kernel == 0);
  CHECK(r.steps[0].last_kernel == 2);
  CHECK(r.steps[0].lead_s == Catch::Detail::Approx(10e-6));  // step0 starts at 1000, its first kernel at 1010
  CHECK(r.steps[1].first_kernel == 3);
  CHECK(r.steps[1].lead_s == Catch::Detail::Approx(10e-6));
  CHECK(r.kernels[1].step == 0);
  CHECK(r.kernels[3].step == 1);
}

TEST_CASE("annotations are the union of GPU ranges and CPU ranges matched by correlation", "[traces]") {
  Workload wl = import_kineto(fixture("kineto_current.json"), classifier());
  const Rank& r = wl.ranks[0];
  CHECK(annotations_of(wl, r.kernels[0]) == std::vector<std::string>{"forward"});
  CHECK(annotations_of(wl, r.kernels[1]) == std::vector<std::string>{"forward", "layer0.mlp"});
  CHECK(annotations_of(wl, r.kernels[2]).empty());
  CHECK(wl.annotation_sets[r.kernels[1].annotation_set].phase == Phase::forward);
  CHECK(wl.annotation_sets[r.kernels[3].annotation_set].phase == Phase::other);
}

TEST_CASE("gzip-compressed traces import identically to plain ones", "[traces]") {
  Workload a = import_kineto(fixture("kineto_current.json"), classifier());
  Workload b = import_kineto(fixture("kineto_current.json.gz"), classifier());
  REQUIRE(a.kernel_count() == b.kernel_count());
  for (std::size_t i = 0; i < a.ranks[0].kernels.size(); ++i) {
    CHECK(a.ranks[0].kernels[i].duration_s == b.ranks[0].kernels[i].duration_s);
    CHECK(a.ranks[0].kernels[i].gap_before_s == b.ranks[0].kernels[i].gap_before_s);
  }
}

TEST_CASE("2021 Kineto schema: capitalised categories and 'stream N' thread ids", "[traces]") {
  ImportReport rep;
  Workload wl = import_kineto(fixture("kineto_2021.json"), classifier(), &rep);
  CHECK(rep.schema == "kineto-2021");
  const Rank& r = wl.ranks[0];
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].cls == KernelClass::gemm);
  CHECK(r.kernels[0].stream == 7);
  CHECK(r.kernels[1].kind == ActivityKind::memcpy);
  CHECK(r.kernels[1].cls == KernelClass::copy);
  CHECK(r.kernels[1].gap_before_s == Catch::Detail::Approx(30e-6));
  REQUIRE(r.steps.size() == 1);
  CHECK(r.steps[0].label == "ProfilerStep#4");
  CHECK(annotations_of(wl, r.kernels[0]) == std::vector<std::string>{"backward"});
  CHECK(wl.annotation_sets[r.kernels[0].annotation_set].phase == Phase::backward);
}

TEST_CASE("activities overlapping on other streams are replayed as the busy union and counted", "[traces]") {
  ImportReport rep;
  Workload wl = import_kineto(fixture("overlapping_streams.json"), classifier(), &rep);
  const Rank& r = wl.ranks[0];
  CHECK(rep.overlapped_activities == 1);
  REQUIRE(r.kernels.size() == 3);
  CHECK(r.kernels[1].cls == KernelClass::communication);
  CHECK(r.kernels[1].gap_before_s == 0.0);
  CHECK(r.kernels[1].duration_s == Catch::Detail::Approx(50e-6));  // only the part past the GEMM adds device time
  CHECK(r.kernels[2].gap_before_s == Catch::Detail::Approx(10e-6));
  double busy = 0;
  for (const auto& k : r.kernels) busy += k.duration_s + k.gap_before_s;
  CHECK(busy == Catch::Detail::Approx(200e-6));  // the recorded span is preserved
}

TEST_CASE("bad traces give one-line errors naming the file and the field", "[traces][errors]") {
  require_input_error(fixture("truncated.json.gz"), "truncated.json.gz", "truncated gzip");
  require_input_error(fixture("no_trace_events.json"), "traceEvents", "missing");
  require_input_error(fixture("no_kernels.json"), "traceEvents", "no device activity");
  require_input_error(fixture("bad_duration.json"), "traceEvents[0].dur", "expected a number");
  require_input_error(fixture("malformed.json"), "malformed.json", "malformed JSON");
  require_input_error(fixture("does_not_exist.json"), "does_not_exist.json", "cannot open");
}

TEST_CASE("events overlapping on one stream (a trace's events copied twice) are counted in a note", "[traces]") {
  Json doc = read_json_maybe_gzip(fixture("kineto_current.json"));
  const Json events = doc["traceEvents"];
  for (const Json& ev : events) doc["traceEvents"].push_back(ev);
  const std::string path = dvfs::testing::scratch_path("dvfs-duplicated-events.json");
  std::ofstream(path) << doc.dump();
  ImportReport rep;
  const Workload twice = import_kineto(path, classifier(), &rep);
  std::remove(path.c_str());
  ImportReport once_rep;
  const Workload once = import_kineto(fixture("kineto_current.json"), classifier(), &once_rep);
  CHECK(once_rep.notes.empty());
  REQUIRE(rep.notes.size() == 1);
  CHECK_THAT(rep.notes[0], Catch::Contains(std::to_string(once.kernel_count()) + " activities start before the previous one on its stream ends"));
  CHECK(twice.kernel_count() == 2 * once.kernel_count());  // still replayed as the busy union
}

TEST_CASE("a kernel launched with cudaLaunchKernelExC that starts before the previous one ends is noted as a dependent launch",
          "[traces]") {
  // Programmatic dependent launch (Hopper and later) lets a kernel start before the previous one on its stream ends;
  // launched through cudaLaunchKernelExC, such an overlap is no corrupt event. Both readers say so alike.
  auto kernel = [](double ts, int corr) {
    return R"({"ph": "X", "cat": "kernel", "name": "k", "ts": )" + std::to_string(ts) + R"(, "dur": 10, "args": {"device": 0, )"
           R"("stream": 7, "correlation": )" + std::to_string(corr) + R"(, "grid": [1, 1, 1], "block": [128, 1, 1]}})";
  };
  auto launch = [](const char* name, double ts, int corr) {
    return std::string(R"({"ph": "X", "cat": "cuda_runtime", "name": ")") + name + R"(", "ts": )" + std::to_string(ts) +
           R"(, "dur": 1, "pid": 1, "tid": 1, "args": {"correlation": )" + std::to_string(corr) + "}}";
  };
  // kernel 2 (ExC) starts 5 us into kernel 1; kernel 4 (plain launch) starts 5 us into kernel 3
  const std::string text = R"({"traceEvents": [)" + launch("cudaLaunchKernel", 0, 1) + ", " + kernel(2, 1) + ", " +
                           launch("cudaLaunchKernelExC", 1, 2) + ", " + kernel(7, 2) + ", " + launch("cudaLaunchKernel", 20, 3) + ", " +
                           kernel(30, 3) + ", " + launch("cudaLaunchKernel", 21, 4) + ", " + kernel(35, 4) + "]}";
  for (KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    INFO("reader " << static_cast<int>(reader));
    ImportReport rep;
    import_kineto_text(text, "pdl.json", classifier(), &rep, reader);
    REQUIRE(rep.notes.size() == 2);
    CHECK_THAT(rep.notes[0], Catch::StartsWith("1 activity starts before the previous one on its stream ends"));
    CHECK_THAT(rep.notes[1], Catch::StartsWith("1 kernel starts before the previous activity on its stream ends (rank 0), "
                                               "launched with cudaLaunchKernelExC"));
  }
}

TEST_CASE("a kernel on device -1 is refused, not replayed as a GPU of its own", "[traces][errors]") {
  Json doc = read_json_maybe_gzip(fixture("kineto_current.json"));
  for (Json& ev : doc["traceEvents"])
    if (ev.value("cat", "") == "kernel") {
      ev["args"]["device"] = -1;
      break;
    }
  const std::string path = dvfs::testing::scratch_path("dvfs-device-minus-one.json");
  std::ofstream(path) << doc.dump();
  require_input_error(path, ".args.device", "expected an integer in [0, ");
  std::remove(path.c_str());
}

TEST_CASE("a trace without device activity names the categories it holds instead", "[traces][errors]") {
  // As a CPU-only rank, another accelerator's trace (MTIA) or a CUPTI range-profiler trace (counters, no kernel times)
  // reads: what is there tells the user why nothing can be replayed.
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2},
    {"ph": "X", "cat": "cuda_profiler_range", "name": "k", "ts": 3, "dur": 1},
    {"ph": "f", "cat": "ac2g", "name": "flow", "ts": 3, "id": 1},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 5, "dur": 2}]})";
  for (KinetoReader reader : {KinetoReader::automatic, KinetoReader::checked}) {
    try {
      import_kineto_text(text, "ranges.json", classifier(), nullptr, reader);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      const std::string msg = e.what();
      CHECK(msg.find("ranges.json: traceEvents: no device activity") != std::string::npos);
      CHECK(msg.find("the categories of its complete events: \"cpu_op\" x2, \"cuda_profiler_range\" x1") != std::string::npos);
      CHECK(msg.find("ac2g") == std::string::npos);  // not a complete event
    }
  }
}

TEST_CASE("a category named in that refusal is quoted and cut, so the message stays one line", "[traces][errors]") {
  const std::string text = R"({"traceEvents": [{"ph": "X", "cat": "cpu_op\nx", "name": "a", "ts": 1, "dur": 2},
    {"ph": "X", "cat": ")" + std::string(300, 'c') + R"(", "name": "b", "ts": 3, "dur": 1}]})";
  try {
    import_kineto_text(text, "odd.json", classifier(), nullptr, KinetoReader::checked);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(R"("cpu_op\nx" x1)") != std::string::npos);
    CHECK(msg.size() < 600);
  }
}

TEST_CASE("withholding operator work prices a trace as the same trace recorded without shapes", "[traces][activity][shapes_withheld]") {
  // A user's ViT training (recorded with record_shapes=True), imported once as it is and once with the four shape
  // fields taken out of every event, as a trace recorded without record_shapes has them.
  const std::string path = data_dir() + "/traces/recordings/h200-user-scripts/vit-b32/trace.json.gz";
  Json doc = Json::parse(read_maybe_gzip(path));
  std::size_t stripped = 0;
  for (Json& e : doc["traceEvents"])
    if (e.contains("args") && e["args"].is_object())
      for (const char* key : {"Input Dims", "Input type", "Input Strides", "Concrete Inputs"}) stripped += e["args"].erase(key);
  REQUIRE(stripped > 1000);
  Workload withheld = import_kineto(path, classifier());
  const Workload shapeless = import_kineto_text(doc.dump(), "stripped.json", classifier());
  const std::size_t counted = withhold_operator_work(withheld);
  CHECK(counted > 100);
  CHECK(withhold_operator_work(withheld) == 0);  // nothing left to withhold
  REQUIRE(withheld.ranks.size() == shapeless.ranks.size());
  std::size_t launch_sized = 0, memsets = 0;
  for (std::size_t r = 0; r < withheld.ranks.size(); ++r) {
    const auto& a = withheld.ranks[r].kernels;
    const auto& b = shapeless.ranks[r].kernels;
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].work == b[i].work);
      CHECK(a[i].tensor_precision == b[i].tensor_precision);
      CHECK(work_rates(a[i]) == work_rates(b[i]));
      launch_sized += a[i].work == WorkSource::launch_shape;
      memsets += a[i].kind == ActivityKind::memset && a[i].memory_fill_tbps > 0;
    }
  }
  CHECK(launch_sized > 0);  // the optimizer's multi_tensor_apply kernels keep their launch sizing
  CHECK(memsets > 0);       // and memsets their bytes
}

TEST_CASE("kernels whose External id repeats their correlation id are linked to the operator around their launch",
          "[traces][activity][launch_link]") {
  // PyTorch 2.0 / 2.1 traces (PARAM's 2023 DLRM ranks) write the launch's correlation id as the kernel's External id,
  // which names no operator. The same ViT trace, rewritten that way, must price every kernel as the original does:
  // the innermost operator around the launch on its thread is the one the profiler links.
  const std::string path = data_dir() + "/traces/recordings/h200-user-scripts/vit-b32/trace.json.gz";
  Json doc = Json::parse(read_maybe_gzip(path));
  std::size_t rewritten = 0;
  for (Json& e : doc["traceEvents"]) {
    if (!e.contains("args") || !e["args"].is_object() || !e["args"].contains("correlation")) continue;
    const std::string cat = e.value("cat", "");
    if (cat == "kernel" || cat == "cuda_runtime") {
      e["args"]["External id"] = e["args"]["correlation"];
      rewritten += cat == "kernel";
    }
  }
  REQUIRE(rewritten > 1000);
  const Workload original = import_kineto(path, classifier());
  for (KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    INFO("reader " << static_cast<int>(reader));
    ImportReport rep;
    const Workload relinked = import_kineto_text(doc.dump(), "correlation-as-external-id.json", classifier(), &rep, reader);
    REQUIRE(relinked.ranks.size() == original.ranks.size());
    std::size_t kernels = 0, same = 0, shaped = 0;
    for (std::size_t r = 0; r < original.ranks.size(); ++r) {
      const auto& a = original.ranks[r].kernels;
      const auto& b = relinked.ranks[r].kernels;
      REQUIRE(a.size() == b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        ++kernels;
        shaped += a[i].work == WorkSource::shapes;
        same += a[i].work == b[i].work && work_rates(a[i]) == work_rates(b[i]);
      }
    }
    CHECK(shaped > kernels / 2);  // the original prices most kernels from shapes: the link matters
    CHECK(same == kernels);
    const bool noted = std::any_of(rep.notes.begin(), rep.notes.end(), [](const std::string& n) {
      return n.find("linked to their operator through their launch") != std::string::npos;
    });
    CHECK(noted);
  }
}

TEST_CASE("in a trace whose kernels repeat their correlation id, a CUDA graph's kernel takes no operator's work", "[traces][launch_link]") {
  // The graph kernel's correlation id (7) equals the operator's External id: it must neither take the operator's work
  // nor share it with the GEMM the operator launched.
  const std::string op = R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 100, "pid": 1, "tid": 1, "args": )"
                         R"({"External id": 7, "Input Dims": [[256, 256], [256, 256]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}})";
  auto launch = [](const char* name, double ts, int corr) {
    return std::string(R"({"ph": "X", "cat": "cuda_runtime", "name": ")") + name + R"(", "ts": )" + std::to_string(ts) +
           R"(, "dur": 1, "pid": 1, "tid": 1, "args": {"correlation": )" + std::to_string(corr) + R"(, "External id": )" +
           std::to_string(corr) + "}}";
  };
  auto kernel = [](const char* name, double ts, int corr) {
    return std::string(R"({"ph": "X", "cat": "kernel", "name": ")") + name + R"(", "ts": )" + std::to_string(ts) +
           R"(, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(corr) + R"(, "External id": )" +
           std::to_string(corr) + R"(, "grid": [4, 1, 1], "block": [128, 1, 1]}})";
  };
  const std::string text = R"({"traceEvents": [)" + op + ", " + launch("cudaLaunchKernel", 10, 100) + ", " +
                           kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 200, 100) + ", " +
                           launch("cudaGraphLaunch", 150, 7) + ", " + kernel("vectorized_elementwise_kernel", 300, 7) + "]}";
  for (KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
    INFO("reader " << static_cast<int>(reader));
    const Workload wl = import_kineto_text(text, "graph.json", classifier(), nullptr, reader);
    REQUIRE(wl.ranks.size() == 1);
    REQUIRE(wl.ranks[0].kernels.size() == 2);
    CHECK(wl.ranks[0].kernels[0].work == WorkSource::shapes);  // the GEMM: linked through its launch
    CHECK(wl.ranks[0].kernels[0].tensor_tflops == Approx(2.0 * 256 * 256 * 256 / 20e-6 * 1e-12).epsilon(1e-6));  // all of it
    CHECK(wl.ranks[0].kernels[1].work != WorkSource::shapes);  // the graph's kernel: no operator
  }
}

TEST_CASE("each kernel keeps its own launch shape when the trace lists activities out of order", "[traces]") {
  // Read in the order written, the activities are sorted by device and start; the shapes must follow them, on a
  // one-device trace (its list becomes the rank's) as on one with several devices (each rank takes its part).
  auto kernel = [](int device, double ts, int grid) {
    return R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(grid) + R"(", "ts": )" + std::to_string(ts) +
           R"(, "dur": 1, "args": {"device": )" + std::to_string(device) + R"(, "stream": 7, "grid": [)" + std::to_string(grid) +
           R"(, 1, 1], "block": [128, 1, 1]}})";
  };
  for (const bool two_devices : {false, true}) {
    const int other = two_devices ? 1 : 0;
    const std::string text = R"({"traceEvents": [)" + kernel(0, 30, 3) + ", " + kernel(other, 10, 1) + ", " + kernel(0, 20, 2) +
                             ", " + kernel(other, 40, 4) + ", " + kernel(0, 5, 5) + "]}";
    for (KinetoReader reader : {KinetoReader::checked, KinetoReader::streaming}) {
      INFO("two devices " << two_devices << " reader " << static_cast<int>(reader));
      const Workload wl = import_kineto_text(text, "order.json", classifier(), nullptr, reader);
      std::vector<std::uint32_t> grids;
      for (const Rank& r : wl.ranks) {
        REQUIRE(r.shapes.size() == r.kernels.size());
        for (std::size_t i = 0; i < r.kernels.size(); ++i) {
          CHECK(wl.names[r.kernels[i].name_id] == "k" + std::to_string(r.shapes[i].grid[0]));
          grids.push_back(r.shapes[i].grid[0]);
        }
      }
      CHECK(grids == (two_devices ? std::vector<std::uint32_t>{5, 2, 3, 1, 4} : std::vector<std::uint32_t>{5, 1, 2, 3, 4}));
    }
  }
}

namespace {

// What `text` gives read by `reader`: "error:" and the one-line message (the streaming reader's, where it declines,
// is the message it declined on: the checked reader's code named the problem), or "notes:" and the import's notes.
std::string reader_outcome(const std::string& text, KinetoReader reader) {
  try {
    ImportReport rep;
    import_kineto_text(text, "t.json", classifier(), &rep, reader);
    std::string notes = "notes:";
    for (const std::string& n : rep.notes) notes += "\n" + n;
    return notes;
  } catch (const InputError& e) {
    return std::string("error:") + e.what();
  } catch (const StreamingDeclined& e) {
    return std::string("error:") + e.what();
  }
}

// The outcome, checked to be the same for the checked reader, the streaming reader and the importer as users call it.
std::string both_readers(const std::string& text) {
  const std::string checked = reader_outcome(text, KinetoReader::checked);
  CHECK(reader_outcome(text, KinetoReader::streaming) == checked);
  CHECK(reader_outcome(text, KinetoReader::automatic) == checked);
  return checked;
}

Json current_fixture() { return read_json_maybe_gzip(fixture("kineto_current.json")); }

Json& event_of(Json& doc, const std::string& cat, long correlation) {
  for (Json& ev : doc["traceEvents"])
    if (ev.value("cat", "") == cat && ev.contains("args") && ev["args"].value("correlation", -1L) == correlation) return ev;
  FAIL("no " << cat << " event of correlation " << correlation);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("deviceProperties that is not an array of device objects is refused, naming it, by both readers", "[traces][errors]") {
  Json doc = current_fixture();
  doc["deviceProperties"] = 5;
  CHECK(both_readers(doc.dump()) == "error:t.json: deviceProperties: expected an array of device objects, got number");
  doc["deviceProperties"] = Json::object({{"id", 0}, {"numSms", 132}});
  CHECK(both_readers(doc.dump()) == "error:t.json: deviceProperties: expected an array of device objects, got object");
  doc["deviceProperties"] = Json::array({Json::object({{"id", 0}, {"numSms", 132}}), "NVIDIA H200"});
  CHECK(both_readers(doc.dump()) == "error:t.json: deviceProperties[1]: expected a device object, got string");
  doc["deviceProperties"] = Json::array();  // no device named: the SM fill falls back as for a 2021 trace
  CHECK(both_readers(doc.dump()) == "notes:");
}

TEST_CASE("a device activity that is not a complete event is refused by both readers, not dropped", "[traces][errors]") {
  Json doc = current_fixture();
  std::size_t at = 0;  // the first kernel
  for (std::size_t i = 0; i < doc["traceEvents"].size(); ++i)
    if (doc["traceEvents"][i].value("cat", "") == "kernel") { at = i; break; }
  for (const Json& phase : {Json("B"), Json("i"), Json(7)}) {
    Json d = doc;
    d["traceEvents"][at]["ph"] = phase;
    CHECK(both_readers(d.dump()) == "error:t.json: traceEvents[" + std::to_string(at) +
                                        "].ph: expected \"X\" (a complete event with ts and dur) for a device activity of category "
                                        "\"kernel\", got " + phase.dump());
  }
  Json host = doc;  // a host-side event of another phase is no activity: skipped as before
  host["traceEvents"].push_back({{"ph", "i"}, {"cat", "cpu_instant_event"}, {"name", "mark"}, {"pid", 1}, {"tid", 1}, {"ts", 5}});
  CHECK(both_readers(host.dump()) == "notes:");
}

TEST_CASE("distributedInfo: a rank below 0, a world size below 1 or a rank outside the world is refused by both readers", "[traces][errors]") {
  Json doc = current_fixture();
  auto with_info = [&](const Json& info) {
    doc["distributedInfo"] = info;
    return both_readers(doc.dump());
  };
  // -1 was read as "no rank": the trace replayed as rank 0 of whatever job it was put in.
  CHECK(with_info({{"backend", "nccl"}, {"rank", -1}, {"world_size", 2}}) ==
        "error:t.json: distributedInfo.rank: expected an integer in [0, 2147483647], got -1");
  CHECK(with_info({{"rank", 0}, {"world_size", 0}}) == "error:t.json: distributedInfo.world_size: expected an integer in [1, 2147483647], got 0");
  CHECK(with_info({{"rank", 0}, {"world_size", -3}}) == "error:t.json: distributedInfo.world_size: expected an integer in [1, 2147483647], got -3");
  CHECK(with_info({{"rank", 2}, {"world_size", 2}}) == "error:t.json: distributedInfo.rank: rank 2 is outside the job's world size 2");
  CHECK(with_info({{"rank", "one"}}) == "error:t.json: distributedInfo.rank: expected an integer in [0, 2147483647], got string");
  CHECK(with_info(5) == "error:t.json: distributedInfo: expected an object, got number");
  CHECK(with_info({{"backend", "nccl"}, {"rank", 1}, {"world_size", 2}}) == "notes:");
  CHECK(with_info({{"rank", 3}}) == "notes:");  // no world size: a rank of a job of unknown size
  ImportReport rep;
  const Workload wl = import_kineto_text(doc.dump(), "t.json", classifier(), &rep);
  CHECK(wl.ranks.at(0).id == 3);
}

TEST_CASE("device events of a category Kineto does not write are counted in a note, the same by both readers", "[traces]") {
  Json doc = current_fixture();
  const Json kernel = event_of(doc, "kernel", 12);
  auto add = [&](const std::string& cat, double ts, const Json& args) {
    Json ev = kernel;
    ev["cat"] = cat, ev["ts"] = ts, ev["args"] = args;
    doc["traceEvents"].push_back(ev);
  };
  add("weird", 3000, kernel["args"]);
  add("weird", 3100, kernel["args"]);
  add("gpu_op", 3200, {{"stream", 7}});
  add("cuda_sync", 3300, kernel["args"]);  // Kineto's: a wait on the device, not work; not noted
  add("dvfs_phase", 3350, {{"device", 0}});  // dvfs-sim's export's phase ranges: not noted either
  add("mystery_host", 3400, {{"External id", 5}});  // names no device or stream: a host event of its own kind
  const std::string notes = both_readers(doc.dump());
  CHECK(notes ==
        "notes:\n3 events on a device (args name a device or stream) have a category Kineto does not write "
        "(\"weird\" x2, \"gpu_op\" x1): not replayed; device activities are \"kernel\", \"gpu_memcpy\" and \"gpu_memset\"");
  // More categories than are named: the rest counted; batches parsed side by side name them as one pass does.
  for (int c = 0; c < 10; ++c) add("cat" + std::to_string(c), 4000 + c, kernel["args"]);
  const std::string text = doc.dump();
  const std::string many = both_readers(text);
  CHECK_THAT(many, Catch::Contains("13 events on a device (args name a device or stream) have a category Kineto does not write "
                                   "(\"weird\" x2, \"gpu_op\" x1, \"cat0\" x1, \"cat1\" x1, \"cat2\" x1, \"cat3\" x1, \"cat4\" x1, "
                                   "\"cat5\" x1, 4 more)"));
  for (std::size_t batch : {std::size_t{1}, std::size_t{700}})
    for (std::size_t parse : {1, 2, 3}) {
      INFO("batch " << batch << " parse threads " << parse);
      ImportReport rep;
      kineto::import_streaming(ByteSource::of_text(text), "t.json", classifier(), &rep, {batch, 0, 0, parse});
      REQUIRE(rep.notes.size() == 1);
      CHECK("notes:\n" + rep.notes[0] == many);
    }
}

TEST_CASE("a memcpy or memset of more bytes than any copy engine moves in its duration is refused by both readers", "[traces][errors]") {
  Json doc = current_fixture();
  Json& memset = event_of(doc, "gpu_memset", 13);
  memset["dur"] = 0.001;
  memset["args"]["bytes"] = 9000000000000000000L;  // 9e18 bytes in 1 ns: a fill at 9e27 B/s
  const std::string at = "error:t.json: traceEvents[" + std::to_string(&memset - &doc["traceEvents"][0]) + "].args.bytes: ";
  CHECK(both_readers(doc.dump()) == at + "expected at most 1e+15 bytes in one copy or fill (1 PB; a GPU holds ~0.2 TB), got 9000000000000000000");
  memset["args"]["bytes"] = 10000000000000L;  // 10 TB in 1 ns, counted as 1 us: 1e19 B/s
  CHECK(both_readers(doc.dump()) ==
        at + "expected bytes a copy or fill can move in its dur (at most 1e+15 B/s over max(dur, 1 us); HBM moves < 1e13 B/s), "
             "got 10000000000000 bytes in 0.001 us (1e+19 B/s)");
  memset["cat"] = "gpu_memcpy";
  CHECK(both_readers(doc.dump()) == at + "expected bytes a copy or fill can move in its dur (at most 1e+15 B/s over max(dur, 1 us); "
                                         "HBM moves < 1e13 B/s), got 10000000000000 bytes in 0.001 us (1e+19 B/s)");
  memset["args"]["bytes"] = 1000000000L;  // 1 GB in a duration that rounded to 0: within the bound
  memset["dur"] = 0;
  CHECK(both_readers(doc.dump()) == "notes:");
  memset["args"]["bytes"] = 2000000000L, memset["dur"] = 500.0;  // 2 GB in 0.5 ms (4 TB/s, HBM's rate)
  CHECK(both_readers(doc.dump()) == "notes:");
}

TEST_CASE("activities starting more than 1 us before their launch are counted in a note, not refused, by both readers", "[traces]") {
  Json doc = current_fixture();
  Json& launch = event_of(doc, "cuda_runtime", 11);  // its kernel starts at 1010 us
  launch["ts"] = 1010.5;                              // within the trace's rounding: no note
  CHECK(both_readers(doc.dump()) == "notes:");
  launch["ts"] = 1012.0;
  event_of(doc, "cuda_runtime", 13)["ts"] = 1160.0;  // the memset at 1150 us too
  CHECK(both_readers(doc.dump()) ==
        "notes:\n2 activities start more than 1 us before the host call that launched them (matched by correlation id; rank 0): "
        "the host's and the device's clocks disagree or the events are corrupt; replayed at their recorded device times");
  ImportReport rep;
  const Workload wl = import_kineto_text(doc.dump(), "t.json", classifier(), &rep);
  CHECK(wl.kernel_count() == 4);  // replayed all the same
}

TEST_CASE("a comm record's negative Rank is refused by both readers (it was read as \"no rank\")", "[traces][errors]") {
  Json doc = read_json_maybe_gzip(fixture("pytorch/ddp_rank0_wait.json"));
  doc.erase("distributedInfo");  // the rank then comes from the comm records
  CHECK(both_readers(doc.dump()).rfind("notes:", 0) == 0);
  doc["traceEvents"][0]["args"]["Rank"] = -1;
  CHECK(both_readers(doc.dump()) == "error:t.json: traceEvents[0].args.Rank: expected an integer in [0, 2147483647], got -1");
  // with distributedInfo naming the rank too: the streaming reader meets the records first, the checked one after
  Json with_info = read_json_maybe_gzip(fixture("pytorch/ddp_rank0_wait.json"));
  with_info["traceEvents"][5]["args"]["Rank"] = -1;
  CHECK(both_readers(with_info.dump()) == "error:t.json: traceEvents[5].args.Rank: expected an integer in [0, 2147483647], got -1");
}

TEST_CASE("device-side step ranges that hold almost none of the device time give way to the host's step ranges", "[traces]") {
  // An MI300X trace's gpu_user_annotation ProfilerStep#N ranges last ~16 us each while its kernels run for ~16 ms a
  // step: its steps covered 0.07 % of the device time. The host's step ranges (through launch correlation) hold them.
  Json doc = current_fixture();
  const auto gpu_step = [](const std::string& name, double ts, double dur) {
    return Json{{"ph", "X"}, {"cat", "gpu_user_annotation"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", ts}, {"dur", dur}, {"args", Json::object()}};
  };
  Json tiny = doc, whole = doc;
  tiny["traceEvents"].push_back(gpu_step("step0", 1005.0, 1.0));
  tiny["traceEvents"].push_back(gpu_step("step1", 2005.0, 1.0));
  const std::string notes = both_readers(tiny.dump());
  CHECK(notes.find("the device-side step ranges (gpu_user_annotation ProfilerStep) hold 0.0 % of the device time, the host's 100.0 %") !=
        std::string::npos);
  ImportReport rep;
  const Workload wl = import_kineto_text(tiny.dump(), "t.json", classifier(), &rep);
  CHECK(rep.step_source == "cpu user_annotation via launch correlation");
  REQUIRE(wl.ranks[0].steps.size() == 2);
  CHECK(wl.ranks[0].kernels[1].step == 0);
  CHECK(wl.ranks[0].kernels[3].step == 1);
  // device-side ranges that hold the kernels are kept, without a note
  whole["traceEvents"].push_back(gpu_step("step0", 1000.0, 500.0));
  whole["traceEvents"].push_back(gpu_step("step1", 2000.0, 500.0));
  CHECK(both_readers(whole.dump()) == "notes:");
  ImportReport kept;
  import_kineto_text(whole.dump(), "t.json", classifier(), &kept);
  CHECK(kept.step_source == "gpu_user_annotation");
}
