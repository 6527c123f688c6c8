#include "models/src/gpu_model.hpp"
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"

#include <catch2/catch.hpp>

using namespace dvfs;
using Catch::Detail::Approx;

namespace {

// The h200 model with a small activity block of round numbers.
Json activity_doc() {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["activity"] = {{"busy_w", 200.0},
                     {"tensor_pj_per_flop", {{"bf16", 0.5}, {"fp8", 0.25}, {"tf32", 1.0}}},
                     {"fma_pj_per_flop", 4.0},
                     {"alu_pj_per_op", 20.0},
                     {"memory_pj_per_byte", 50.0},
                     {"copy_engine_w", 3.0}};
  return doc;
}

GpuModel with_activity() {
  Json doc = activity_doc();
  doc["voltage_curve"] = {{"points", {{345, 0.7}, {1000, 0.7}, {1980, 1.0}}}};
  return GpuModel::from_json(doc, "a.json");
}

Kernel gemm_kernel() {
  Kernel k;
  k.cls = KernelClass::gemm;
  k.duration_s = 1e-3;
  k.recorded_sm_mhz = 1980;
  k.recorded_mem_mhz = 3201;
  k.work = WorkSource::shapes;
  k.tensor_precision = TensorPrecision::bf16;
  k.tensor_tflops = 600;
  k.memory_tbps = 1;
  return k;
}

}  // namespace

TEST_CASE("activity power at the recorded clocks is idle + busy + priced work", "[models][activity]") {
  const GpuModel m = with_activity();
  const int top = m.sm_index(1980), mem = m.mem_index(3201);
  const Kernel k = gemm_kernel();
  CHECK(m.kernel_power_w(k, top, mem) == Approx(m.idle_power_w(top) + 200 + 0.5 * 600 + 50 * 1));
}

TEST_CASE("a compute-bound kernel's power falls with V^2 f; a copy's does not move with the SM clock", "[models][activity]") {
  const GpuModel m = with_activity();
  const int top = m.sm_index(1980), low = m.sm_index(990), mem = m.mem_index(3201);
  const Kernel k = gemm_kernel();
  const double stretch = m.kernel_time_s(k, low, mem) / k.duration_s;
  REQUIRE(stretch > 1.0);
  const double v2 = 0.7 * 0.7;
  CHECK(m.kernel_power_w(k, low, mem) ==
        Approx(m.idle_power_w(low) + 200 * v2 * 990 / 1980 + (0.5 * 600 * v2 + 50) / stretch));
  Kernel copy = k;
  copy.work = WorkSource::copy_engine;
  copy.cls = KernelClass::copy;
  copy.tensor_tflops = 0;
  CHECK(m.kernel_power_w(copy, top, mem) == Approx(m.idle_power_w(top) + 3 + 50));
}

TEST_CASE("tensor FLOPs issued with mma.sync cost the extra energy per FLOP; a model without the key prices them alike", "[models][activity]") {
  Json doc = activity_doc();
  const GpuModel without = GpuModel::from_json(doc, "a.json");
  doc["activity"]["mma_sync_extra_pj_per_flop"] = 0.25;
  const GpuModel with = GpuModel::from_json(doc, "a.json");
  const int top = with.sm_index(1980), mem = with.mem_index(3201);
  Kernel wgmma = gemm_kernel(), sync = gemm_kernel();
  sync.tensor_issue = TensorIssue::warp;
  CHECK(with.kernel_power_w(sync, top, mem) == Approx(with.kernel_power_w(wgmma, top, mem) + 0.25 * 600));
  CHECK(with.kernel_power_w(wgmma, top, mem) == Approx(without.kernel_power_w(wgmma, top, mem)));
  CHECK(without.kernel_power_w(sync, top, mem) == Approx(without.kernel_power_w(wgmma, top, mem)));
  doc["activity"]["mma_sync_extra_pj_per_flop"] = -1;
  CHECK_THROWS_WITH(GpuModel::from_json(doc, "a.json"), Catch::Contains("mma_sync_extra_pj_per_flop"));
}

TEST_CASE("kernels without work figures keep the kernel-class prior (no ramp in this model)", "[models][activity]") {
  const GpuModel m = with_activity();
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc.erase("activity");
  const GpuModel prior_only = GpuModel::from_json(doc, "p.json");
  Kernel k = gemm_kernel();
  k.work = WorkSource::unknown;
  const int top = m.sm_index(1980), mem = m.mem_index(3201);
  CHECK(m.kernel_power_w(k, top, mem) == Approx(prior_only.kernel_power_w(k, top, mem)));
  k.work = WorkSource::shapes;  // a model without an activity block prices everything by class
  CHECK(prior_only.kernel_power_w(k, top, mem) == Approx(prior_only.kernel_power_w(gemm_kernel(), top, mem)));
}

TEST_CASE("a bad activity block is one error naming the field", "[models][activity]") {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["activity"]["tensor_pj_per_flop"]["int4"] = 0.1;
  CHECK_THROWS_WITH(GpuModel::from_json(doc, "m.json"), Catch::Contains("m.json: activity.tensor_pj_per_flop.int4: unknown key"));
  doc = read_json_file(load_gpu_model("h200").source_file());
  doc["activity"]["busy_w"] = -1;
  CHECK_THROWS_WITH(GpuModel::from_json(doc, "m.json"), Catch::Contains("activity.busy_w"));
}

TEST_CASE("an NCCL transfer is priced by its bytes at the copy engine's energy; kept waiting, the wait draws idle power", "[models][activity]") {
  Json doc = activity_doc();
  doc["activity"]["copy_engine_pj_per_byte"] = 100.0;
  doc["activity"]["ramp_s"] = 0.0;
  const GpuModel m = GpuModel::from_json(doc, "t.json");
  const int top = m.sm_index(1980), low = m.sm_index(990), mem = m.mem_index(3201);
  Kernel k;
  k.cls = KernelClass::communication;
  k.collective = 1;
  k.sm_fill = static_cast<float>(64.0 / m.sm_count());
  k.duration_s = 1e-3;
  k.recorded_sm_mhz = 1980;
  k.recorded_mem_mhz = 3201;
  k.work = WorkSource::transfer_bytes;
  k.memory_tbps = 2;  // 2 GB moved in its 1 ms
  const double idle = m.idle_power_w(top);
  // idle + copy_engine_w + 100 pJ/B x 2 TB/s: no fill x busy_w term, bytes not scaled by V^2
  CHECK(m.kernel_power_w(k, top, mem) == Approx(idle + 3 + 200));
  CHECK(m.collective_power_w(k, top, mem, 1e-3) == Approx(idle + 3 + 200));
  // the replay keeps it 4 ms (its peer came late): the same bytes' energy over 4 ms, the rest at idle power
  CHECK(m.collective_power_w(k, top, mem, 4e-3) == Approx(idle + 3 + 50));
  CHECK(m.collective_power_w(k, low, mem, 1e-3) == Approx(m.idle_power_w(low) + 3 + 200));
  // priced as a kernel at a lower clock (the planners), it takes kernel_time_s: the same 0.2 J of bytes
  const double t_low = m.kernel_time_s(k, low, mem);
  CHECK(t_low > 1e-3);
  CHECK(m.kernel_power_w(k, low, mem) * t_low == Approx((m.idle_power_w(low) + 3) * t_low + 100e-12 * 2e9));
  // an unsized collective keeps the class prior whatever its time
  Kernel prior = k;
  prior.work = WorkSource::unknown;
  prior.memory_tbps = 0;
  CHECK(m.collective_power_w(prior, top, mem, 4e-3) == Approx(m.kernel_power_w(prior, top, mem)));
  CHECK(m.kernel_power_w(prior, top, mem) > idle + 3);  // the prior's fill-scaled dynamic power
}

TEST_CASE("a kernel of a few microseconds draws its dynamic power over t / (t + ramp) of it", "[models][activity]") {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["activity"]["ramp_s"] = 2e-6;
  const GpuModel m = GpuModel::from_json(doc, "r.json");
  doc["activity"]["ramp_s"] = 0.0;
  const GpuModel flat = GpuModel::from_json(doc, "f.json");
  const int top = m.sm_index(1980), mem = m.mem_index(3201);
  Kernel k = gemm_kernel();
  k.duration_s = 2e-6;  // as long as the ramp: half its dynamic power
  const double idle = m.idle_power_w(top);
  CHECK(m.kernel_power_w(k, top, mem) - idle == Approx(0.5 * (flat.kernel_power_w(k, top, mem) - idle)));
  k.duration_s = 1e-3;  // long kernels barely notice
  CHECK(m.kernel_power_w(k, top, mem) - idle == Approx(flat.kernel_power_w(k, top, mem) - idle).epsilon(0.003));
}

TEST_CASE("a class-prior kernel of an activity model ramps in as a counted one does; a collective and a class-only model do not ramp", "[models][activity]") {
  Json doc = read_json_file(load_gpu_model("h200").source_file());
  doc["activity"]["ramp_s"] = 2e-6;
  const GpuModel ramped = GpuModel::from_json(doc, "r.json");
  doc.erase("activity");
  const GpuModel prior_only = GpuModel::from_json(doc, "p.json");
  const int top = ramped.sm_index(1980), low = ramped.sm_index(990), mem = ramped.mem_index(3201);
  Kernel k = gemm_kernel();
  k.work = WorkSource::unknown;  // a kernel replayed from a CUDA graph: no operator shapes
  k.duration_s = 2e-6;           // as long as the ramp: half the class's dynamic power
  const double idle = ramped.idle_power_w(top);
  CHECK(ramped.kernel_power_w(k, top, mem) - idle == Approx(0.5 * (prior_only.kernel_power_w(k, top, mem) - idle)));
  // at a lower clock the kernel runs longer, so more of it is at full power
  const double t_low = ramped.kernel_time_s(k, low, mem);
  REQUIRE(t_low > k.duration_s);
  const double idle_low = ramped.idle_power_w(low);
  CHECK(ramped.kernel_power_w(k, low, mem) - idle_low ==
        Approx(t_low / (t_low + 2e-6) * (prior_only.kernel_power_w(k, low, mem) - idle_low)));
  k.duration_s = 0;  // no duration: no ramp
  CHECK(ramped.kernel_power_w(k, top, mem) == Approx(prior_only.kernel_power_w(k, top, mem)));
  Kernel collective = k;  // a collective's duration is the network's: no ramp on its recorded length
  collective.cls = KernelClass::communication;
  collective.collective = 1;
  collective.duration_s = 2e-6;
  CHECK(ramped.kernel_power_w(collective, top, mem) == Approx(prior_only.kernel_power_w(collective, top, mem)));
  collective.collective = 0;  // a communication kernel replayed at its own length ramps like any other
  CHECK(ramped.kernel_power_w(collective, top, mem) - idle == Approx(0.5 * (prior_only.kernel_power_w(collective, top, mem) - idle)));
}

TEST_CASE("DRAM bytes beyond the part's datasheet bandwidth are not priced (L2 serves them)", "[models][activity]") {
  const GpuModel m = with_activity();  // h200 specs: 4800 GB/s
  REQUIRE(m.specs().mem_bandwidth_gbs == Approx(4800));
  const int top = m.sm_index(1980), mem = m.mem_index(3201);
  Kernel gather = gemm_kernel();
  gather.cls = KernelClass::elementwise;
  gather.tensor_precision = TensorPrecision::none;
  gather.tensor_tflops = 0;
  gather.memory_tbps = 4.0f;  // below the bandwidth: every byte priced
  const double base = m.idle_power_w(top) + 200;
  CHECK(m.kernel_power_w(gather, top, mem) == Approx(base + 50 * 4.0));
  gather.memory_tbps = 6.8f;  // a GCN's index_select gathers, hot rows re-read from L2: priced up to 4.8 TB/s
  CHECK(m.kernel_power_w(gather, top, mem) == Approx(base + 50 * 4.8));
  CHECK(m.dram_share(6.8) == Approx(4.8 / 6.8));
  CHECK(m.dram_share(3.0) == 1.0);
  // a model without the datasheet figure prices every counted byte
  Json doc = activity_doc();
  doc["specs"].erase("mem_bandwidth_gbs");
  const GpuModel no_specs = GpuModel::from_json(doc, "a.json");
  CHECK(no_specs.kernel_power_w(gather, top, mem) == Approx(no_specs.idle_power_w(top) + 200 + 50 * 6.8));
}

TEST_CASE("an fp64 tensor FLOP costs tensor_pj_per_flop.fp64, or a CUDA-core FMA FLOP's energy without it", "[models][activity]") {
  Kernel k = gemm_kernel();
  k.tensor_precision = TensorPrecision::fp64;
  k.tensor_tflops = 50;
  k.memory_tbps = 0;
  const GpuModel without = with_activity();  // no fp64 key: the FMA energy (4 pJ)
  const int top = without.sm_index(1980), mem = without.mem_index(3201);
  CHECK(without.kernel_power_w(k, top, mem) == Approx(without.idle_power_w(top) + 200 + 4.0 * 50));
  Json doc = activity_doc();
  doc["voltage_curve"] = {{"points", {{345, 0.7}, {1000, 0.7}, {1980, 1.0}}}};
  doc["activity"]["tensor_pj_per_flop"]["fp64"] = 3.0;
  const GpuModel with = GpuModel::from_json(doc, "a.json");
  CHECK(with.kernel_power_w(k, top, mem) == Approx(with.idle_power_w(top) + 200 + 3.0 * 50));
  doc["activity"]["tensor_pj_per_flop"]["fp64"] = -1.0;
  CHECK_THROWS_WITH(GpuModel::from_json(doc, "m.json"), Catch::Contains("m.json: activity.tensor_pj_per_flop.fp64"));
}

TEST_CASE("bytes of the non-vectorised elementwise loop cost unvectorised_pj_per_byte x V^2 on top of their DRAM energy", "[models][activity]") {
  Kernel k = gemm_kernel();
  k.cls = KernelClass::elementwise;
  k.tensor_precision = TensorPrecision::none;
  k.tensor_tflops = 0;
  k.memory_tbps = 2;
  k.unvectorised_tbps = 2;
  Json doc = activity_doc();
  doc["voltage_curve"] = {{"points", {{345, 0.7}, {1000, 0.7}, {1980, 1.0}}}};
  const GpuModel without = GpuModel::from_json(doc, "a.json");  // no key: the path costs nothing extra
  const int top = without.sm_index(1980), low = without.sm_index(990), mem = without.mem_index(3201);
  CHECK(without.kernel_power_w(k, top, mem) == Approx(without.idle_power_w(top) + 200 + 50 * 2));
  doc["activity"]["unvectorised_pj_per_byte"] = 30.0;
  const GpuModel with = GpuModel::from_json(doc, "a.json");
  CHECK(with.kernel_power_w(k, top, mem) == Approx(with.idle_power_w(top) + 200 + 50 * 2 + 30 * 2));
  // an SM-side cost: it scales with V^2 where the DRAM energy does not
  const double stretch = with.kernel_time_s(k, low, mem) / k.duration_s;
  CHECK(with.kernel_power_w(k, low, mem) - without.kernel_power_w(k, low, mem) == Approx(30 * 2 * 0.7 * 0.7 / stretch));
  doc["activity"]["unvectorised_pj_per_byte"] = -1.0;
  CHECK_THROWS_WITH(GpuModel::from_json(doc, "m.json"), Catch::Contains("m.json: activity.unvectorised_pj_per_byte"));
}
