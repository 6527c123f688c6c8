#include "sim/validate/sibling_loops.hpp"

#include "models/src/model_registry.hpp"
#include "sim/validate/loop_check.hpp"
#include "sim/validate/repeat_recordings.hpp"
#include "traces/src/kernel_loop.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <iomanip>
#include <map>

namespace dvfs {

namespace {

void require_recording(const JsonReader& block, const char* key, const std::string& dir) {
  if (!std::filesystem::exists(dir + "/run.json")) block.fail(key, "no recording (run.json) at " + dir);
}

}  // namespace

Json sibling_loop_checks(const Json& split_doc, const std::string& split_path, const char* block_name) {
  if (!split_doc.is_object() || !split_doc.contains(block_name)) return nullptr;
  const JsonReader block(split_doc[block_name], split_path, block_name);
  const GpuModel model = load_gpu_model(block.string("model"), split_path);
  const std::string folder = block.string("folder");
  Json loops = Json::array(), idle = Json::array();
  std::vector<double> native, recorded;
  std::size_t native_ok = 0, recorded_ok = 0;
  std::map<std::string, std::vector<double>> by_regime;
  for (const std::string& n : block.string_list("loops", "names")) {
    const std::string dir = data_dir() + "/" + folder + "/" + n;
    require_recording(block, "loops", dir);
    Json row = validate_kernel_loop(load_kernel_loop(dir), model);
    row["recording"] = folder + "/" + n;
    row["kind"] = "held-out";
    row["regime"] = loop_regime(n);
    const double en = row["native"]["energy_error_pct"].get<double>(), er = row["recorded"]["energy_error_pct"].get<double>();
    native.push_back(en);
    recorded.push_back(er);
    native_ok += std::fabs(en) <= 8.0;
    recorded_ok += std::fabs(er) <= 5.0;
    by_regime[loop_regime(n)].push_back(en);
    loops.push_back(std::move(row));
  }
  for (const std::string& rel : block.string_list("idle_folders", "names")) {  // no kernel: the model's idle power
    const std::string dir = data_dir() + "/" + rel;
    require_recording(block, "idle_folders", dir);
    const double meas = measured_steady_power_w(dir);
    idle.push_back({{"recording", rel}, {"measured_mean_power_w", meas}, {"model_idle_w", model.idle_w()},
                    {"error_pct", 100.0 * (model.idle_w() - meas) / meas}});
  }
  Json regimes = Json::object();
  for (const auto& [r, e] : by_regime) regimes[r] = abs_distribution(e);
  return {{"model", model.name()}, {"folder", folder}, {"loops", loops}, {"idle", idle},
          {"summary", {{"native_energy_abs_error", abs_distribution(native)}, {"native_within_8_pct", native_ok},
                       {"recorded_clocks_energy_abs_error", abs_distribution(recorded)}, {"recorded_within_5_pct", recorded_ok},
                       {"native_by_regime", regimes}}}};
}

Json sibling_workload_checks(const Json& split_doc, const std::string& split_path, const char* block_name, const Json& home_rows,
                             const std::function<Json(const std::string&, const GpuModel&)>& price) {
  if (!split_doc.is_object() || !split_doc.contains(block_name)) return nullptr;
  const JsonReader block(split_doc[block_name], split_path, block_name);
  if (!block.has("folder")) return nullptr;  // not recorded yet
  const GpuModel model = load_gpu_model(block.string("model"), split_path);
  const std::string folder = block.string("folder");
  Json rows = Json::array();
  std::vector<double> native, recorded, withheld;
  std::size_t within[3] = {0, 0, 0};
  for (const std::string& n : block.string_list("workloads", "names")) {
    // a bare name lies in the block's folder; a path (a later set recorded on the same kind of card) in the data dir
    const std::string rel = n.find('/') == std::string::npos ? folder + "/" + n : n;
    require_recording(block, "workloads", data_dir() + "/" + rel);
    Json row = price(rel, model);
    // the same script's row on the parent model's own card, where exactly one row has its name
    const std::string name = rel.substr(rel.rfind('/') + 1);
    Json home = nullptr;
    std::size_t same_name = 0;
    for (const Json& h : home_rows) {
      const std::string r = h["recording"].get<std::string>();
      if (r.substr(r.rfind('/') + 1) == name && ++same_name == 1) home = h["total_energy_error_pct"];
    }
    row["home_total_energy_error_pct"] = same_name == 1 ? home : Json(nullptr);
    native.push_back(row["total_energy_error_pct"].get<double>());
    recorded.push_back(row["recorded_clocks_total_energy_error_pct"].get<double>());
    withheld.push_back(row["shapes_withheld_total_energy_error_pct"].get<double>());
    within[0] += std::fabs(native.back()) <= 8.0;
    within[1] += std::fabs(recorded.back()) <= 8.0;
    within[2] += std::fabs(withheld.back()) <= 8.0;
    rows.push_back(std::move(row));
  }
  return {{"model", model.name()}, {"folder", folder}, {"workloads", rows},
          {"summary", {{"native_energy_abs_error", abs_distribution(native)}, {"native_within_8_pct", within[0]},
                       {"recorded_clocks_energy_abs_error", abs_distribution(recorded)}, {"recorded_within_8_pct", within[1]},
                       {"shapes_withheld_energy_abs_error", abs_distribution(withheld)}, {"shapes_withheld_within_8_pct", within[2]}}}};
}

void format_sibling_workloads(std::ostream& os, const Json& c) {
  if (!c.is_object()) return;
  const std::ios::fmtflags flags = os.flags();
  const std::streamsize precision = os.precision();
  std::vector<std::string> dirs{c["folder"].get<std::string>()};  // a later set listed by path has a folder of its own
  for (const Json& w : c["workloads"]) {
    const std::string p = w["recording"].get<std::string>();
    const std::string dir = p.substr(0, p.rfind('/'));
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  std::string folders = dirs[0];
  for (std::size_t i = 1; i < dirs.size(); ++i) folders += ", " + dirs[i];
  os << std::fixed << "\nWhole workloads recorded on another card (" << folders
     << "; split h100_whole_workloads), all held out for the shipped\n" << c["model"].get<std::string>()
     << " model: total energy over the profiled window, native governor (recorded clocks), shapes withheld, and the same\n"
        "script's native error on its H200 recording under the h200 model\n"
        "recording                     window  measured W  native W  energy err (recorded clocks)  shapes withheld   on the H200\n";
  for (const Json& w : c["workloads"]) {
    const std::string p = w["recording"].get<std::string>();
    os << std::left << std::setw(28) << p.substr(p.rfind('/') + 1) << std::right << std::setprecision(2) << std::setw(7)
       << w["measured_window_s"].get<double>() << " s" << std::setprecision(1) << std::setw(10) << w["measured_mean_power_w"].get<double>()
       << std::setw(10) << w["simulated_mean_power_w"].get<double>() << std::setprecision(2) << std::showpos << std::setw(11)
       << w["total_energy_error_pct"].get<double>() << " % (" << std::setw(6) << w["recorded_clocks_total_energy_error_pct"].get<double>()
       << " %)" << std::setw(14) << w["shapes_withheld_total_energy_error_pct"].get<double>() << " %";
    if (w["home_total_energy_error_pct"].is_number()) os << std::setw(11) << w["home_total_energy_error_pct"].get<double>() << " %";
    os << std::noshowpos << "\n";
  }
  const Json& s = c["summary"];
  auto line = [&](const char* what, const char* dist, const char* within) {
    os << what << s[dist]["mean_pct"].get<double>() << " %, max " << s[dist]["max_pct"].get<double>() << " % ("
       << s[within].get<std::size_t>() << " of " << s[dist]["count"].get<std::size_t>() << " within 8 %)";
  };
  os << std::setprecision(2);
  line("  |total energy error| native mean ", "native_energy_abs_error", "native_within_8_pct");
  line("; recorded clocks ", "recorded_clocks_energy_abs_error", "recorded_within_8_pct");
  line("; shapes withheld ", "shapes_withheld_energy_abs_error", "shapes_withheld_within_8_pct");
  os << "\n";
  os.flags(flags);
  os.precision(precision);
}

void format_sibling_loops(std::ostream& os, const Json& c) {
  if (!c.is_object()) return;
  const std::ios::fmtflags flags = os.flags();
  const std::streamsize precision = os.precision();
  os << std::fixed << std::setprecision(1) << "\nThe H200 suite's held-out kernel loops recorded on another card (" << c["folder"].get<std::string>()
     << "; split h100_held_out_loops), all held out for\nthe shipped " << c["model"].get<std::string>()
     << " model (never fit on that card's data): energy of one step at the native governor and at the recorded clocks\n"
        "loop                             regime                     measured W  native W  energy err  recorded energy err\n";
  for (const Json& l : c["loops"])
    os << std::left << std::setw(33) << l["loop"].get<std::string>() << std::setw(27) << l["regime"].get<std::string>() << std::right
       << std::setw(10) << l["measured_mean_power_w"].get<double>() << std::setw(10) << l["native"]["mean_power_w"].get<double>()
       << std::showpos << std::setw(10) << l["native"]["energy_error_pct"].get<double>() << " %" << std::setw(12)
       << l["recorded"]["energy_error_pct"].get<double>() << " %" << std::noshowpos << "\n";
  for (const Json& i : c["idle"])
    os << "  idle (" << i["recording"].get<std::string>() << "): measured " << i["measured_mean_power_w"].get<double>() << " W, model "
       << i["model_idle_w"].get<double>() << " W (" << std::showpos << i["error_pct"].get<double>() << std::noshowpos << " %)\n";
  const Json& s = c["summary"];
  const Json &n = s["native_energy_abs_error"], &r = s["recorded_clocks_energy_abs_error"];
  os << std::setprecision(2) << "  " << n["count"].get<std::size_t>() << " loops: |energy error| native mean " << n["mean_pct"].get<double>()
     << " %, median " << n["median_pct"].get<double>() << " %, max " << n["max_pct"].get<double>() << " % ("
     << s["native_within_8_pct"].get<std::size_t>() << " within 8 %); recorded clocks mean " << r["mean_pct"].get<double>() << " %, max "
     << r["max_pct"].get<double>() << " % (" << s["recorded_within_5_pct"].get<std::size_t>() << " within 5 %)\n";
  for (const auto& [regime, d] : s["native_by_regime"].items())
    os << "  native mean |energy error|, " << regime << " (" << d["count"].get<std::size_t>() << "): " << d["mean_pct"].get<double>()
       << " %, max " << d["max_pct"].get<double>() << " %\n";
  os.flags(flags);
  os.precision(precision);
}

}  // namespace dvfs
