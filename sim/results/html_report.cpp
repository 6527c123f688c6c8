#include "sim/results/html_report.hpp"

#include "sim/core/csv.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/results/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace dvfs {

namespace {

namespace fs = std::filesystem;

// A CSV file with a header line, as named columns of numbers (non-numbers read as NaN).
struct Table {
  std::map<std::string, std::vector<double>> cols;
  const std::vector<double>& col(const std::string& name) const {
    static const std::vector<double> none;
    auto it = cols.find(name);
    return it == cols.end() ? none : it->second;
  }
};

constexpr double kMaxReportValue = 1e15;  // seconds, watts, MHz, joules of one run: far below

Table read_csv(const std::string& path, const std::vector<std::string>& required) {
  require_regular_file(path, "a CSV file");
  std::ifstream f(path);
  if (!f) throw InputError(path, "", "cannot read the file");
  std::string line;
  std::getline(f, line);
  strip_bom(line);
  const std::vector<std::string> header = split_csv_line(line);
  for (const std::string& r : required)
    if (std::find(header.begin(), header.end(), r) == header.end())
      throw InputError(path, r, "missing column: expected a header with " + r);
  Table t;
  // Rows of another width and non-numbers, nan or 1e308 in the plotted columns went into the figures (an axis to 2.5e307).
  for (long row = 2; std::getline(f, line); ++row) {
    if (blank_line(line)) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != header.size())
      throw InputError(path, "line " + std::to_string(row), "expected " + std::to_string(header.size()) + " cells (the header's), got " +
                                                              std::to_string(cells.size()));
    for (std::size_t i = 0; i < header.size(); ++i) {
      char* end = nullptr;
      const double v = std::strtod(cells[i].c_str(), &end);
      const bool number = end != cells[i].c_str() && *end == '\0';
      const bool plotted = std::find(required.begin(), required.end(), header[i]) != required.end();
      if (plotted && !(number && std::fabs(v) <= kMaxReportValue))
        throw InputError(path, "line " + std::to_string(row) + "." + header[i],
                         "expected a finite number (|x| <= 1e15), got \"" + cells[i] + "\"");
      t.cols[header[i]].push_back(number ? v : std::nan(""));
    }
  }
  return t;
}

std::string num(double v, const char* format = "%.3g") {
  char b[48];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

struct Page {
  std::string dir;
  std::string body;
  std::vector<std::string> sources;
  int figures = 0;
  void section(const std::string& title, const std::string& note) {
    body += "<h2>" + html_escape(title) + "</h2>\n<p class=\"note\">" + html_escape(note) + "</p>\n";
  }
  void figure(const std::string& svg) {
    body += "<div class=\"fig\">" + svg + "</div>\n";
    ++figures;
  }
  std::string path(const std::string& name) const { return join_path(dir, name); }
  bool has(const std::string& name) const { return file_exists(path(name)); }
  Json json(const std::string& name) {
    sources.push_back(path(name));
    return read_json_file(path(name));
  }
  Table csv(const std::string& name, const std::vector<std::string>& required) {
    if (std::find(sources.begin(), sources.end(), path(name)) == sources.end()) sources.push_back(path(name));
    return read_csv(path(name), required);
  }
};

// Per GPU of a timeline.csv: (t, column) series, at most `max_gpus` of them.
std::vector<Series> timeline_series(const Table& t, const std::string& column, const std::string& prefix, std::size_t max_gpus) {
  std::map<int, Series> by_gpu;
  const auto& gpu = t.col("gpu");
  const auto& ts = t.col("t_s");
  const auto& v = t.col(column);
  for (std::size_t i = 0; i < ts.size() && i < v.size(); ++i) {
    const int g = i < gpu.size() ? static_cast<int>(gpu[i]) : 0;
    if (!by_gpu.count(g) && by_gpu.size() >= max_gpus) continue;
    Series& s = by_gpu[g];
    s.name = prefix + "GPU " + std::to_string(g);
    s.step = true;
    s.x.push_back(ts[i]);
    s.y.push_back(v[i]);
  }
  std::vector<Series> out;
  for (auto& [g, s] : by_gpu) out.push_back(std::move(s));
  return out;
}

void named_bars(Page& p, const Json& obj, const ChartLabels& labels) {
  std::vector<std::string> cats;
  BarGroup g{labels.y, {}};
  for (const auto& [k, v] : obj.items())
    if (v.is_number()) cats.push_back(k), g.values.push_back(v.get<double>());
  if (!cats.empty()) p.figure(bar_chart(labels, cats, {g}));
}

// A field as text: a string as it is, an object by its "name" (or "source"), anything else as JSON.
std::string text_of(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "?";
  if (it->is_string()) return it->get<std::string>();
  for (const char* k : {"name", "source"})
    if (it->is_object() && it->contains(k) && (*it)[k].is_string()) return (*it)[k].get<std::string>();
  return it->dump();
}

void replay_section(Page& p, const Json& s) {
  const Json& t = s["totals"];
  p.section("Simulated run: " + text_of(s, "scenario"),
            "Model output (summary.json): GPU model " + text_of(s, "gpu") + ", policy " + text_of(s, "policy") + ", trace " + text_of(s, "trace") + ".");
  p.body += "<table><tr><th>time (s)</th><th>energy (J)</th><th>mean power (W)</th><th>mean SM clock (MHz)</th><th>clock switches</th></tr><tr><td>" +
            num(t.value("time_s", 0.0), "%.4f") + "</td><td>" + num(t.value("energy_j", 0.0), "%.1f") + "</td><td>" + num(t.value("mean_power_w", 0.0), "%.1f") +
            "</td><td>" + num(t.value("mean_sm_mhz", 0.0), "%.0f") + "</td><td>" + t.value("clock_switches", Json(0)).dump() + "</td></tr></table>\n";
  if (p.has("timeline.csv")) {
    const Table tl = p.csv("timeline.csv", {"gpu", "t_s", "power_w", "sm_mhz"});
    p.figure(line_chart({"Simulated power over time (timeline.csv)", "time (s)", "power (W)"}, timeline_series(tl, "power_w", "", 8)));
    p.figure(line_chart({"Simulated SM clock over time (timeline.csv)", "time (s)", "SM clock (MHz)"}, timeline_series(tl, "sm_mhz", "", 8)));
  }
  if (s.contains("energy_by_phase_j")) named_bars(p, s["energy_by_phase_j"], {"Simulated energy by phase", "phase", "energy (J)"});
  if (s.contains("energy_by_class_j")) named_bars(p, s["energy_by_class_j"], {"Simulated energy by kernel class", "kernel class", "energy (J)"});
}

void synthetic_section(Page& p, const Json& s) {
  p.section("Synthesised iteration: " + text_of(s, "model") + " on " + text_of(s, "gpus") + " GPUs",
            "Model output (summary.json): iteration " + num(s.value("iteration_s", 0.0), "%.3f") + " s, energy " +
                num(s.value("energy_j", 0.0) / 1e6, "%.3f") + " MJ, policy " + text_of(s, "policy") + ".");
  std::vector<std::string> cats;
  BarGroup e{"energy per GPU (kJ)", {}}, w{"mean pipeline wait (s)", {}};
  for (const Json& st : s["stages"]) {
    cats.push_back("stage " + st["stage"].dump());
    e.values.push_back(st.value("energy_per_gpu_j", 0.0) / 1e3);
    w.values.push_back(st.value("pipeline_wait_mean_s", 0.0));
  }
  p.figure(bar_chart({"Simulated energy per GPU by pipeline stage", "stage", "energy (kJ)"}, cats, {e}));
  p.figure(bar_chart({"Simulated pipeline wait by stage (bubbles and imbalance)", "stage", "wait (s)"}, cats, {w}));
}

void validate_section(Page& p) {
  const Json v = p.json("validate.json");
  p.section("Validation: " + text_of(v, "recording") + " on " + text_of(v, "gpu"),
            "Measured: " + text_of(v, "measured_from") + ". Simulated: the replay under the native governor model and at "
            "the recorded clocks (model outputs).");
  if (p.has("measured.csv")) {
    const Table m = p.csv("measured.csv", {"t_s", "power_w", "sm_mhz"});
    for (const auto& [col, label] : {std::pair<std::string, std::string>{"power_w", "power (W)"}, {"sm_mhz", "SM clock (MHz)"}}) {
      std::vector<Series> series{{"measured (NVML, measured.csv)", m.col("t_s"), m.col(col), "#000000", false, true}};
      for (const char* src : {"native", "recorded"}) {
        const std::string file = std::string(src) + ".timeline.csv";
        if (!p.has(file)) continue;
        std::vector<Series> sim = timeline_series(p.csv(file, {"gpu", "t_s", col}), col, std::string("simulated ") + src + " ", 1);
        if (!sim.empty()) series.push_back(std::move(sim.front()));
      }
      p.figure(line_chart({"Simulated vs measured " + label, "time (s)", label}, series));
    }
  }
  for (const Json& src : v["clock_sources"]) {
    std::vector<std::string> cats;
    BarGroup meas{"measured", {}}, sim{"simulated", {}};
    for (const Json& r : src["steps"]) {
      cats.push_back(r["step"].dump());
      meas.values.push_back(r.value("measured_energy_j", 0.0));
      sim.values.push_back(r.value("simulated_energy_j", 0.0));
    }
    p.figure(bar_chart({"Step energy, measured vs simulated (clocks: " + text_of(src, "clock_source") + ")", "step", "energy (J)"},
                       cats, {meas, sim}));
    p.body += "<p>MAPE over steps (" + html_escape(text_of(src, "clock_source")) + "): time " +
              num(src["mape"].value("time_pct", 0.0), "%.2f") + " %, energy " + num(src["mape"].value("energy_pct", 0.0), "%.2f") + " %.</p>\n";
  }
}

void compare_section(Page& p, const std::string& file) {
  const Json c = p.json(file);
  p.section("Policies compared: " + text_of(c, "scenario") + " on " + text_of(c, "gpu"),
            "Model outputs (" + file + "): each policy's replay against native, budget " + num(c.value("budget_pct", 0.0), "%.3g") + " %.");
  std::vector<std::string> cats;
  BarGroup saved{"energy saved vs native (%)", {}}, slow{"slowdown vs native (%)", {}};
  std::string rows;
  for (const Json& r : c["rows"]) {
    cats.push_back(text_of(r, "policy"));
    saved.values.push_back(r.value("energy_saved_pct", 0.0));
    slow.values.push_back(r.value("slowdown_pct", 0.0));
    rows += "<tr><td>" + html_escape(cats.back()) + "</td><td>" + num(r.value("energy_j", 0.0), "%.1f") + "</td><td>" + num(r.value("time_s", 0.0), "%.4f") +
            "</td><td>" + num(saved.values.back(), "%.2f") + "</td><td>" + num(slow.values.back(), "%.2f") + "</td></tr>";
  }
  p.figure(bar_chart({"Energy saved and slowdown vs native", "policy", "%"}, cats, {saved, slow}));
  p.body += "<table><tr><th>policy</th><th>energy (J)</th><th>time (s)</th><th>saved %</th><th>slowdown %</th></tr>" + rows + "</table>\n";
}

// The first "frontier" object with relaxed points, anywhere in the document.
const Json* find_frontier(const Json& j) {
  if (j.is_object()) {
    auto it = j.find("frontier");
    if (it != j.end() && it->is_object() && it->contains("relaxed_points")) return &*it;
    for (const auto& [k, v] : j.items())
      if (const Json* f = find_frontier(v)) return f;
  } else if (j.is_array()) {
    for (const Json& v : j)
      if (const Json* f = find_frontier(v)) return f;
  }
  return nullptr;
}

void frontier_section(Page& p, const std::string& file, const Json& f) {
  p.section("Time-energy frontier (" + file + ")",
            "Model outputs: the critical-path frontier, and Perseus's own plans (points) at the time and energy this model predicts for them.");
  Series ours{"frontier (ours)", {}, {}, "#1f77b4", false, false}, perseus{"Perseus plans", {}, {}, "#d62728", true, false};
  for (const Json& pt : f["relaxed_points"]) ours.x.push_back(pt[0].get<double>()), ours.y.push_back(pt[1].get<double>());
  if (f.contains("vs_perseus"))
    for (const Json& r : f["vs_perseus"]) perseus.x.push_back(r.value("perseus_iteration_s", 0.0)), perseus.y.push_back(r.value("perseus_energy_j", 0.0));
  std::vector<Series> s{ours};
  if (!perseus.x.empty()) s.push_back(perseus);
  p.figure(line_chart({"Iteration time vs energy", "iteration time (s)", "energy (J)"}, s));
}

const char* kStyle =
    "body{font-family:sans-serif;margin:24px;max-width:820px;color:#222;background:#fff}h1{font-size:22px}h2{font-size:18px;"
    "margin-top:28px;border-bottom:1px solid #ccc}.note{color:#555;font-size:13px}table{border-collapse:collapse;margin:8px 0}"
    "td,th{border:1px solid #bbb;padding:3px 8px;font-size:13px;text-align:right}.fig{margin:10px 0}";

}  // namespace

HtmlReport build_html_report(const std::string& dir) {
  if (!is_directory(dir)) throw InputError(dir, "", "expected an output directory");
  Page p{dir, "", {}, 0};
  if (p.has("summary.json")) {
    const Json s = p.json("summary.json");
    if (s.contains("totals")) replay_section(p, s);
    else if (s.contains("stages")) synthetic_section(p, s);
  }
  if (p.has("validate.json")) validate_section(p);
  for (const char* c : {"compare.json", "compare/compare.json"})
    if (p.has(c)) compare_section(p, c);
  std::vector<std::string> jsons;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") jsons.push_back(e.path().filename().string());
  std::sort(jsons.begin(), jsons.end());
  for (const std::string& name : jsons) {
    if (name == "compare.json") continue;
    const Json j = read_json_file(p.path(name));
    if (const Json* f = find_frontier(j)) p.sources.push_back(p.path(name)), frontier_section(p, name, *f);
  }
  if (p.figures == 0)
    throw InputError(dir, "", "nothing to report: expected summary.json (+ timeline.csv), validate.json (validate --trace-out), compare.json "
                              "or a JSON file with a frontier");
  HtmlReport r;
  r.html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dvfs-sim report: " + html_escape(dir) + "</title><style>" + kStyle +
           "</style></head><body>\n<h1>dvfs-sim report: " + html_escape(dir) + "</h1>\n" + p.body + "<p class=\"note\">Drawn from: ";
  for (std::size_t i = 0; i < p.sources.size(); ++i) r.html += (i ? ", " : "") + html_escape(p.sources[i]);
  r.html += ".</p>\n</body></html>\n";
  r.sources = p.sources;
  r.figures = p.figures;
  return r;
}

HtmlReport write_html_report(const std::string& dir, const std::string& path) {
  HtmlReport r = build_html_report(dir);
  const std::string out = path.empty() ? join_path(dir, "report.html") : path;
  std::ofstream f(out);
  f << r.html;
  if (!f) throw InputError(out, "", "cannot write the report");
  return r;
}

}  // namespace dvfs
