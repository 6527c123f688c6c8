#pragma once
// `dvfs-sim calibrate --power-suite DIR --split FILE --base MODEL`: fits the activity power model
// (models/README.md, "Activity power") on the kernel loops the split file lists under fit.micro, and nothing
// else: the held-out loops are not read.
//
// Each loop's measured mean power (NVML energy counter over its unprofiled steady window, or over its profiled
// window for the loops the split lists under profiled_window: LoopRecordings) is the time-weighted mean of
// its kernels' power at their recorded clocks and of idle power in its gaps (traces/src/kernel_loop.hpp). The
// model is linear in its eleven coefficients once the voltage curve is fixed:
//   P_loop - idle = busy_w * mean(fill g(f)) + sum_p e_p * mean(V^2 tensor rate_p) + e_fma * mean(V^2 fma rate)
//                   + e_mma_sync * mean(V^2 tensor rate of kernels issuing mma.sync)
//                   + e_alu * mean(V^2 alu rate) + e_mem * mean(SM kernels' DRAM rate) + copy_engine_w * (copy-engine share)
//                   + e_ce * mean(copy engines' byte rate) + e_fill * mean(fill byte rate)
// (each kernel's terms weighted by d / (d + ramp_s), see GpuModel::activity_power_w), so for every voltage curve
// and ramp_s of a grid (flat floor up to a knee, linear to 1 at the top clock) the coefficients
// are the non-negative least squares of the relative error. The loops only see the clocks the card chose
// (down to ~1350 MHz on the H200, under its cap), so many curves fit alike: of those within 0.05 points of the
// smallest in-sample mean absolute relative error, the one nearest the base model's curve (its stated prior)
// is kept. Loops with less than 90 % of their kernel time priced by operator shapes
// (tensor-list optimizers) are left out of the fit; their kernels use the class prior.
#include "sim/core/json_util.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dvfs {

struct PowerSuiteCalibration {
  Json model;
  Json report;  // chosen voltage curve, coefficients, per fit loop: measured, fitted, error; loops left out
};

PowerSuiteCalibration calibrate_from_power_suite(const std::string& suite_dir, const std::string& split_path,
                                                 const std::string& base_path, const std::string& command,
                                                 const std::string& date, const std::string& window_dir = "");
std::string format_power_suite_calibration(const PowerSuiteCalibration& c);
// What calibrate_from_power_suite reads of a split file, checked before it loads anything: unknown keys in the blocks
// it reads and loops listed twice or on both sides; InputError naming the file and field. The split's other blocks
// (the rounds' rules and outcomes) stay free-form.
void check_power_split(const Json& doc, const std::string& split_path);

// The names a split file lists (`fit.micro` or `held_out.micro`); InputError naming the file and field.
std::vector<std::string> split_names(const std::string& split_path, const std::string& side, const std::string& kind);
// The kernel loops of one side: `micro`, then the lists recorded later (`micro_stores`, `micro_alu_conv`,
// `micro_family`), where present.
std::vector<std::string> split_loop_names(const std::string& split_path, const std::string& side);
// The loops of a split block that names its own `folder` (`fp64_tensor_energy`, twelfth round, and
// `unvectorised_bytes`, sixteenth: fit after the joint fit, every other coefficient fixed; `busy_sm_fma`, fifteenth
// round, and `strided_fit_loops`, sixteenth: their refits were not kept, validate --models prints them) on one side
// ("fit" / "held_out") as (name, directory under the folder); empty when the split has no such block.
std::vector<std::pair<std::string, std::string>> split_block_loops(const std::string& split_path, const std::string& block,
                                                                   const std::string& side);
// The same from the split file's parsed document (`split_path` names it in errors): one read for many blocks.
std::vector<std::pair<std::string, std::string>> split_block_loops(const Json& doc, const std::string& split_path,
                                                                   const std::string& block, const std::string& side);

// Where each kernel loop's measurement is. The split file's `profiled_window.loops` were also recorded over their
// own profiled window (window_dir/<loop>; window_dir "" = the split's `profiled_window.folder` under data_dir());
// when `profiled_window.measurement_of_record` is true those recordings are the loops' measurement (fit and
// validate), otherwise every loop is measured by the suite (suite_dir/<loop>) and the window recordings are a
// diagnostic (validate --models prints both). InputError naming the split file when a listed loop is on neither
// side's lists or its window recording is missing.
// The split's `copy_data.replaces` ({suite loop: recording}, in force when `copy_data.measurement_of_record` is
// true) names loops whose suite measurement is replaced by a recording of the same benchmark in
// `copy_data.folder` (seventh round: a copy of random data replaces the suite's copy of never-written buffers).
class LoopRecordings {
 public:
  LoopRecordings(const std::string& split_path, const std::string& suite_dir, const std::string& window_dir = "");
  std::string dir(const std::string& loop) const;  // the loop's measurement
  // Which measurement dir() gives: "replacement", "one long profiled step", "profiled window" or "steady window".
  const char* measured_over(const std::string& loop) const;
  std::string replacement(const std::string& loop) const;  // "" when the loop's measurement is not replaced
  bool measured_over_profiled_window(const std::string& loop) const;
  // The split's `gapless_window` (seventh round): the same loops recorded with one long profiled step into its
  // `folder`; their measurement when its `measurement_of_record` is true.
  bool recorded_gapless(const std::string& loop) const;
  bool measured_gapless(const std::string& loop) const { return gapless_of_record_ && recorded_gapless(loop); }
  std::string gapless_dir(const std::string& loop) const { return gapless_dir_ + "/" + loop; }
  bool recorded_over_window(const std::string& loop) const;  // listed under profiled_window.loops
  const std::vector<std::string>& window_loops() const { return window_loops_; }
  std::string window_dir(const std::string& loop) const { return window_dir_ + "/" + loop; }
  std::string suite_dir(const std::string& loop) const { return suite_dir_ + "/" + loop; }

 private:
  enum class Source { replacement, gapless, window, suite };  // which measurement of a loop is of record, by precedence
  Source source(const std::string& loop) const;
  std::string suite_dir_, window_dir_, gapless_dir_;
  std::vector<std::string> window_loops_;
  bool window_of_record_ = false, gapless_of_record_ = false;
  std::map<std::string, std::string> replaced_;  // suite loop -> recording directory
};

// Non-negative least squares min |A x - b|^2, x >= 0, for a handful of unknowns (every active set is tried).
std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& a, const std::vector<double>& b);

}  // namespace dvfs
