#include "sim/validate/repeat_recordings.hpp"

#include "models/src/model_registry.hpp"
#include "sim/validate/loop_check.hpp"
#include "traces/src/kernel_loop.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

namespace dvfs {

std::string loop_regime(const std::string& loop) {
  auto starts = [&](const char* p) { return loop.rfind(p, 0) == 0; };
  if (starts("gemm-") || starts("attn-")) return "tensor";
  if (starts("conv-")) return "convolution";
  if (starts("duty-") || starts("tiny-")) return "duty_and_launch_bound";
  if (starts("memset-") || starts("copy-") || starts("fill-") || starts("convert-")) return "stores_and_copies";
  return "streaming_and_reductions";
}

namespace {

// One recording of a loop: its steady mean power and the model's native energy error (idle: no kernel to replay,
// the model's idle power against the measured one, as the loop table does).
Json price_recording(const std::string& loop, const std::string& dir, const std::string& shown, const GpuModel& model) {
  if (loop == "idle") {
    const double meas = measured_steady_power_w(dir);
    return {{"folder", shown}, {"measured_mean_power_w", meas}, {"native_energy_error_pct", 100.0 * (model.idle_w() - meas) / meas}};
  }
  const Json v = validate_kernel_loop(load_kernel_loop(dir), model);
  return {{"folder", shown}, {"measured_mean_power_w", v["measured_mean_power_w"]},
          {"native_energy_error_pct", v["native"]["energy_error_pct"]}};
}

std::vector<std::string> repeat_folders(const Json& split_doc, const std::string& split_path) {
  if (!split_doc.is_object() || !split_doc.contains("repeat_held_out")) return {};
  const JsonReader block(split_doc["repeat_held_out"], split_path, "repeat_held_out");
  const std::vector<std::string> folders = block.string_list("folders", "recording folders");
  for (std::size_t i = 0; i < folders.size(); ++i)
    if (!std::filesystem::is_directory(data_dir() + "/" + folders[i]))
      block.fail("folders", "no recording folder at " + data_dir() + "/" + folders[i] + " (element " + std::to_string(i) + ")");
  return folders;
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// Per repeat folder (a recording set: another call, day or card), its held-out loops alone: the native error on them
// and how far their steady power sits from the shipped recording's.
Json by_repeat_folder(const Json& rows) {
  struct Set {
    std::vector<double> errors, shifts;
  };
  std::map<std::string, Set> sets;
  for (const Json& r : rows) {
    const Json& recs = r["recordings"];
    if (r["kind"] != "held-out" || recs.size() < 2) continue;
    const double shipped_w = recs[0]["measured_mean_power_w"].get<double>();
    for (std::size_t i = 1; i < recs.size(); ++i) {
      const std::string f = recs[i]["folder"].get<std::string>();
      Set& s = sets[f.substr(0, f.rfind('/'))];
      s.errors.push_back(recs[i]["native_energy_error_pct"].get<double>());
      s.shifts.push_back(100.0 * (recs[i]["measured_mean_power_w"].get<double>() - shipped_w) / shipped_w);
    }
  }
  Json out = Json::array();
  for (const auto& [folder, s] : sets) {
    double abs_sum = 0;
    std::size_t within_8 = 0, within_3 = 0;
    for (double e : s.errors) abs_sum += std::fabs(e), within_8 += std::fabs(e) <= 8.0;
    for (double x : s.shifts) within_3 += std::fabs(x) <= 3.0;
    out.push_back({{"folder", folder},
                   {"held_out_loops", s.errors.size()},
                   {"native_energy_abs_error_mean_pct", abs_sum / static_cast<double>(s.errors.size())},
                   {"native_within_8_pct", within_8},
                   {"steady_power_shift_median_pct", median(s.shifts)},
                   {"steady_power_within_3_pct_of_shipped", within_3}});
  }
  return out;
}

}  // namespace

Json repeated_loop_rows(const Json& split_doc, const std::string& split_path, const Json& loops, const GpuModel& model) {
  const std::vector<std::string> folders = repeat_folders(split_doc, split_path);
  Json rows = Json::array();
  for (const Json& l : loops) {
    const std::string n = l["loop"].get<std::string>();
    Json recs = Json::array();
    std::string shipped = l.value("recording", std::string("the measurement of record"));
    if (shipped.rfind(data_dir() + "/", 0) == 0) shipped.erase(0, data_dir().size() + 1);
    recs.push_back({{"folder", shipped}, {"measured_mean_power_w", l["measured_mean_power_w"]},
                    {"native_energy_error_pct", l["native"]["energy_error_pct"]}});
    for (const std::string& f : folders) {
      const std::string dir = data_dir() + "/" + f + "/" + n;
      if (std::filesystem::exists(dir + "/run.json")) recs.push_back(price_recording(n, dir, f + "/" + n, model));
    }
    if (recs.size() < 2) continue;
    double lo = 1e300, hi = -1e300, sum_w = 0, sum_e = 0;
    for (const Json& r : recs) {
      const double w = r["measured_mean_power_w"].get<double>();
      lo = std::min(lo, w);
      hi = std::max(hi, w);
      sum_w += w;
      sum_e += r["native_energy_error_pct"].get<double>();
    }
    const double k = static_cast<double>(recs.size());
    rows.push_back({{"loop", n}, {"kind", l["kind"]}, {"regime", loop_regime(n)}, {"recordings", recs},
                    {"spread_pct", 100.0 * (hi - lo) / (sum_w / k)}, {"mean_native_energy_error_pct", sum_e / k}});
  }
  return rows;
}

Json repeated_loop_summary(const Json& loops, const Json& rows) {
  std::map<std::string, const Json*> repeated;
  for (const Json& r : rows) repeated[r["loop"].get<std::string>()] = &r;
  double of_record = 0, all = 0;
  std::size_t n = 0, within_record = 0, within_all = 0;
  std::map<std::string, std::vector<double>> spreads;
  for (const Json& l : loops) {
    if (l["kind"] != "held-out") continue;
    const std::string name = l["loop"].get<std::string>();
    const double e = l["native"]["energy_error_pct"].get<double>();
    const auto it = repeated.find(name);
    const double m = it == repeated.end() ? e : (*it->second)["mean_native_energy_error_pct"].get<double>();
    if (it != repeated.end()) spreads[loop_regime(name)].push_back((*it->second)["spread_pct"].get<double>());
    ++n;
    of_record += std::fabs(e);
    all += std::fabs(m);
    within_record += std::fabs(e) <= 8.0;
    within_all += std::fabs(m) <= 8.0;
  }
  Json regimes = Json::object();
  std::size_t repeated_held_out = 0;
  for (const auto& [regime, s] : spreads) {
    repeated_held_out += s.size();
    regimes[regime] = {{"loops", s.size()}, {"median_spread_pct", median(s)}, {"max_spread_pct", *std::max_element(s.begin(), s.end())}};
  }
  const double d = n ? static_cast<double>(n) : 1.0;
  return {{"held_out_loops", n},
          {"by_repeat_folder", by_repeat_folder(rows)},
          {"repeated_held_out_loops", repeated_held_out},
          {"of_record", {{"native_energy_abs_error_mean_pct", of_record / d}, {"native_within_8_pct", within_record}}},
          {"against_all_recordings", {{"native_energy_abs_error_mean_pct", all / d}, {"native_within_8_pct", within_all}}},
          {"spread_by_regime", regimes}};
}

void format_repeated_loops(std::ostream& os, const Json& rows, const Json& summary) {
  if (!rows.is_array() || rows.empty()) return;
  const std::ios::fmtflags flags = os.flags();
  const std::streamsize precision = os.precision();
  os << std::fixed << std::setprecision(1)
     << "\nKernel loops recorded more than once (split repeat_loops, repeat_held_out; diagnostic: nothing is fit on the\n"
        "repeats and the figures of record above keep each loop's shipped recording): steady mean power of each recording\n"
        "(shipped first), its spread (max - min over the mean), the native energy error on each (each replayed from its own\n"
        "trace) and their mean\n"
        "loop                             kind       measured W (each recording)          spread   native energy error (each) -> mean\n";
  for (const Json& r : rows) {
    std::ostringstream w, e;
    w << std::fixed << std::setprecision(1);
    e << std::fixed << std::setprecision(1) << std::showpos;
    for (const Json& x : r["recordings"]) {
      w << (w.tellp() > 0 ? " / " : "") << x["measured_mean_power_w"].get<double>();
      e << (e.tellp() > 0 ? " " : "") << x["native_energy_error_pct"].get<double>();
    }
    os << std::left << std::setw(33) << r["loop"].get<std::string>() << std::setw(11) << r["kind"].get<std::string>() << std::setw(37)
       << w.str() << std::right << std::setw(5) << r["spread_pct"].get<double>() << " %   " << e.str() << " -> " << std::showpos
       << r["mean_native_energy_error_pct"].get<double>() << " %" << std::noshowpos << "\n";
  }
  const Json &rec = summary["of_record"], &all = summary["against_all_recordings"];
  os << std::setprecision(2) << "  held out (" << summary["held_out_loops"].get<std::size_t>() << " loops, "
     << summary["repeated_held_out_loops"].get<std::size_t>() << " recorded more than once): |native energy error| mean "
     << rec["native_energy_abs_error_mean_pct"].get<double>() << " % (" << rec["native_within_8_pct"].get<std::size_t>()
     << " within 8 %) against the recordings of record; " << all["native_energy_abs_error_mean_pct"].get<double>() << " % ("
     << all["native_within_8_pct"].get<std::size_t>() << " within 8 %) against the mean over each loop's recordings\n";
  for (const Json& f : summary["by_repeat_folder"])
    os << std::setprecision(2) << "  " << f["folder"].get<std::string>() << " alone (" << f["held_out_loops"].get<std::size_t>()
       << (f["held_out_loops"].get<std::size_t>() == 1 ? " held-out loop" : " held-out loops") << "): |native energy error| mean " << f["native_energy_abs_error_mean_pct"].get<double>() << " % ("
       << f["native_within_8_pct"].get<std::size_t>() << " within 8 %); steady power against the shipped recording: median "
       << std::showpos << std::setprecision(1) << f["steady_power_shift_median_pct"].get<double>() << std::noshowpos << " %, "
       << f["steady_power_within_3_pct_of_shipped"].get<std::size_t>() << " within 3 %\n";
  for (const auto& [regime, s] : summary["spread_by_regime"].items())
    os << std::setprecision(1) << "  spread of the steady power, " << regime << " (" << s["loops"].get<std::size_t>()
       << (s["loops"].get<std::size_t>() == 1 ? " held-out loop" : " held-out loops") << "): median " << s["median_spread_pct"].get<double>() << " %, largest " << s["max_spread_pct"].get<double>()
       << " %\n";
  os.flags(flags);
  os.precision(precision);
}

Json repeated_workload_rows(const Json& split_doc, const std::string& split_path, const Json& workload_rows,
                            const std::function<Json(const std::string&)>& price) {
  Json rows = Json::array();
  if (!split_doc.is_object() || !split_doc.contains("repeat_missed_workloads")) return rows;
  const JsonReader block(split_doc["repeat_missed_workloads"], split_path, "repeat_missed_workloads");
  if (!block.has("folder")) return rows;  // not recorded yet
  const std::string folder = block.string("folder");
  const Json& names = block.raw("workloads");
  if (!names.is_array()) block.fail("workloads", "expected a list of recordings (set/name)");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string n = names[i].is_string() ? names[i].get<std::string>() : "";
    const std::size_t slash = n.rfind('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == n.size())
      block.fail("workloads", "expected \"set/name\" (element " + std::to_string(i) + ")");
    const std::string shipped = "traces/recordings/" + n, again = folder + "/" + n.substr(slash + 1);
    const auto it = std::find_if(workload_rows.begin(), workload_rows.end(), [&](const Json& w) { return w["recording"] == shipped; });
    if (it == workload_rows.end()) block.fail("workloads", n + " is not a held-out whole workload validate --models prices");
    if (!std::filesystem::is_directory(data_dir() + "/" + again))
      block.fail("folder", "no repeat of " + n + " at " + data_dir() + "/" + again);
    Json rep = price(again);
    const double w0 = (*it)["measured_mean_power_w"].get<double>(), w1 = rep["measured_mean_power_w"].get<double>();
    rows.push_back({{"recording", shipped}, {"shipped", *it}, {"repeat", std::move(rep)}, {"shift_pct", 100.0 * (w1 - w0) / w0}});
  }
  return rows;
}

void format_repeated_workloads(std::ostream& os, const Json& rows) {
  if (!rows.is_array() || rows.empty()) return;
  const std::ios::fmtflags flags = os.flags();
  const std::streamsize precision = os.precision();
  os << std::fixed
     << "\nHeld-out whole workloads recorded again (split repeat_missed_workloads; diagnostic: the figures of record above\n"
        "keep the shipped recordings): measured mean power over the profiled window, shipped -> repeat, and the native\n"
        "total energy error on each\n"
        "recording                                     window s          measured W          shift   native energy error\n";
  for (const Json& r : rows) {
    const Json &a = r["shipped"], &b = r["repeat"];
    const std::string p = r["recording"].get<std::string>();
    os << std::left << std::setw(46) << p.substr(p.find("recordings/") + 11) << std::right << std::setprecision(2) << std::setw(5)
       << a["measured_window_s"].get<double>() << " -> " << std::setw(5) << b["measured_window_s"].get<double>() << std::setprecision(1)
       << std::setw(9) << a["measured_mean_power_w"].get<double>() << " -> " << std::setw(5) << b["measured_mean_power_w"].get<double>()
       << std::showpos << std::setw(8) << r["shift_pct"].get<double>() << " %" << std::setw(9) << a["total_energy_error_pct"].get<double>()
       << " % -> " << std::setw(6) << b["total_energy_error_pct"].get<double>() << " %" << std::noshowpos << "\n";
  }
  os.flags(flags);
  os.precision(precision);
}

}  // namespace dvfs
