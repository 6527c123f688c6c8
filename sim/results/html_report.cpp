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

// The files a report reads were written by other commands, but a corrupted or hand-edited one is an InputError naming
// the file and the field (a wrong type was a crash: SIGSEGV, or exit 3 on nlohmann's type_error); a key that is
// missing draws as before (0, "?").
JsonReader object_in(const JsonReader& r, const char* key) {
  const Json& j = r.raw(key);
  if (!j.is_object()) r.fail(key, "expected an object, got " + json_type_name(j));
  return JsonReader(j, r.file(), r.field(key));
}

// The elements of the list at `key` (none when the key is missing), each an object.
std::vector<JsonReader> objects_in(const JsonReader& r, const char* key) {
  std::vector<JsonReader> out;
  if (!r.has(key)) return out;
  const Json& list = r.raw(key);
  if (!list.is_array()) r.fail(key, "expected a list of objects, got " + json_type_name(list));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string field = r.field(key) + "[" + std::to_string(i) + "]";
    if (!list[i].is_object()) throw InputError(r.file(), field, "expected an object, got " + json_type_name(list[i]));
    out.emplace_back(list[i], r.file(), field);
  }
  return out;
}

// A number drawn or printed: finite and |x| <= 1e15, as in the CSV files; `fallback` when the key is missing.
double number_of(const JsonReader& r, const char* key, double fallback = 0.0) {
  if (!r.has(key)) return fallback;
  const double v = r.number(key);
  if (!(std::fabs(v) <= kMaxReportValue)) r.fail(key, "expected a finite number (|x| <= 1e15), got " + num(v));
  return v;
}

// A whole output file: a JSON object.
JsonReader document(const Json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file, "(top level)", "expected an object, got " + json_type_name(j));
  return JsonReader(j, file, "");
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

// An object of numbers as bars, one per key.
void named_bars(Page& p, const JsonReader& r, const char* key, const ChartLabels& labels) {
  if (!r.has(key)) return;
  const JsonReader obj = object_in(r, key);
  std::vector<std::string> cats;
  BarGroup g{labels.y, {}};
  for (const auto& kv : obj.node().items()) {
    cats.push_back(kv.key());
    g.values.push_back(number_of(obj, kv.key().c_str()));
  }
  if (!cats.empty()) p.figure(bar_chart(labels, cats, {g}));
}

// A field as text: a string as it is, an object by its "name" (or "source"), anything else as JSON.
std::string text_of(const JsonReader& r, const char* key) {
  const Json& j = r.node();
  auto it = j.find(key);
  if (it == j.end()) return "?";
  if (it->is_string()) return it->get<std::string>();
  for (const char* k : {"name", "source"})
    if (it->is_object() && it->contains(k) && (*it)[k].is_string()) return (*it)[k].get<std::string>();
  return it->dump();
}

void replay_section(Page& p, const JsonReader& s) {
  const JsonReader t = object_in(s, "totals");
  p.section("Simulated run: " + text_of(s, "scenario"),
            "Model output (summary.json): GPU model " + text_of(s, "gpu") + ", policy " + text_of(s, "policy") + ", trace " + text_of(s, "trace") + ".");
  p.body += "<table><tr><th>time (s)</th><th>energy (J)</th><th>mean power (W)</th><th>mean SM clock (MHz)</th><th>clock switches</th></tr><tr><td>" +
            num(number_of(t, "time_s"), "%.4f") + "</td><td>" + num(number_of(t, "energy_j"), "%.1f") + "</td><td>" + num(number_of(t, "mean_power_w"), "%.1f") +
            "</td><td>" + num(number_of(t, "mean_sm_mhz"), "%.0f") + "</td><td>" + std::to_string(t.integer_in_or("clock_switches", 0, 1000000000000000L, 0)) +
            "</td></tr></table>\n";
  if (p.has("timeline.csv")) {
    const Table tl = p.csv("timeline.csv", {"gpu", "t_s", "power_w", "sm_mhz"});
    p.figure(line_chart({"Simulated power over time (timeline.csv)", "time (s)", "power (W)"}, timeline_series(tl, "power_w", "", 8)));
    p.figure(line_chart({"Simulated SM clock over time (timeline.csv)", "time (s)", "SM clock (MHz)"}, timeline_series(tl, "sm_mhz", "", 8)));
  }
  named_bars(p, s, "energy_by_phase_j", {"Simulated energy by phase", "phase", "energy (J)"});
  named_bars(p, s, "energy_by_class_j", {"Simulated energy by kernel class", "kernel class", "energy (J)"});
}

void synthetic_section(Page& p, const JsonReader& s) {
  const std::vector<JsonReader> stages = objects_in(s, "stages");
  if (stages.empty()) s.fail("stages", "expected a non-empty list of pipeline stages (what a synthetic run writes)");
  p.section("Synthesised iteration: " + text_of(s, "model") + " on " + text_of(s, "gpus") + " GPUs",
            "Model output (summary.json): iteration " + num(number_of(s, "iteration_s"), "%.3f") + " s, energy " +
                num(number_of(s, "energy_j") / 1e6, "%.3f") + " MJ, policy " + text_of(s, "policy") + ".");
  std::vector<std::string> cats;
  BarGroup e{"energy per GPU (kJ)", {}}, w{"mean pipeline wait (s)", {}};
  for (const JsonReader& st : stages) {
    cats.push_back("stage " + std::to_string(st.integer_in("stage", 0, 1000000000L)));
    e.values.push_back(number_of(st, "energy_per_gpu_j") / 1e3);
    w.values.push_back(number_of(st, "pipeline_wait_mean_s"));
  }
  p.figure(bar_chart({"Simulated energy per GPU by pipeline stage", "stage", "energy (kJ)"}, cats, {e}));
  p.figure(bar_chart({"Simulated pipeline wait by stage (bubbles and imbalance)", "stage", "wait (s)"}, cats, {w}));
}

void validate_section(Page& p) {
  const Json doc = p.json("validate.json");
  const JsonReader v = document(doc, p.path("validate.json"));
  const std::vector<JsonReader> sources = objects_in(v, "clock_sources");
  if (sources.empty()) v.fail("clock_sources", "expected a non-empty list of clock sources (what validate --trace-out writes)");
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
  for (const JsonReader& src : sources) {
    std::vector<std::string> cats;
    BarGroup meas{"measured", {}}, sim{"simulated", {}};
    for (const JsonReader& r : objects_in(src, "steps")) {
      cats.push_back(text_of(r, "step"));
      meas.values.push_back(number_of(r, "measured_energy_j"));
      sim.values.push_back(number_of(r, "simulated_energy_j"));
    }
    p.figure(bar_chart({"Step energy, measured vs simulated (clocks: " + text_of(src, "clock_source") + ")", "step", "energy (J)"},
                       cats, {meas, sim}));
    double time_pct = 0.0, energy_pct = 0.0;
    if (src.has("mape")) {
      const JsonReader mape = object_in(src, "mape");
      time_pct = number_of(mape, "time_pct"), energy_pct = number_of(mape, "energy_pct");
    }
    p.body += "<p>MAPE over steps (" + html_escape(text_of(src, "clock_source")) + "): time " + num(time_pct, "%.2f") + " %, energy " +
              num(energy_pct, "%.2f") + " %.</p>\n";
  }
}

void compare_section(Page& p, const std::string& file) {
  const Json doc = p.json(file);
  const JsonReader c = document(doc, p.path(file));
  const std::vector<JsonReader> rows_in = objects_in(c, "rows");
  if (rows_in.empty()) c.fail("rows", "expected a non-empty list of policy rows (what compare writes)");
  p.section("Policies compared: " + text_of(c, "scenario") + " on " + text_of(c, "gpu"),
            "Model outputs (" + file + "): each policy's replay against native, budget " + num(number_of(c, "budget_pct"), "%.3g") + " %.");
  std::vector<std::string> cats;
  BarGroup saved{"energy saved vs native (%)", {}}, slow{"slowdown vs native (%)", {}};
  std::string rows;
  for (const JsonReader& r : rows_in) {
    cats.push_back(text_of(r, "policy"));
    saved.values.push_back(number_of(r, "energy_saved_pct"));
    slow.values.push_back(number_of(r, "slowdown_pct"));
    rows += "<tr><td>" + html_escape(cats.back()) + "</td><td>" + num(number_of(r, "energy_j"), "%.1f") + "</td><td>" + num(number_of(r, "time_s"), "%.4f") +
            "</td><td>" + num(saved.values.back(), "%.2f") + "</td><td>" + num(slow.values.back(), "%.2f") + "</td></tr>";
  }
  p.figure(bar_chart({"Energy saved and slowdown vs native", "policy", "%"}, cats, {saved, slow}));
  p.body += "<table><tr><th>policy</th><th>energy (J)</th><th>time (s)</th><th>saved %</th><th>slowdown %</th></tr>" + rows + "</table>\n";
}

// The first "frontier" object with relaxed points, anywhere in the document, with its JSON path.
struct FoundFrontier {
  const Json* node = nullptr;
  std::string path;
};
FoundFrontier find_frontier(const Json& j, const std::string& path) {
  if (j.is_object()) {
    auto it = j.find("frontier");
    const std::string here = path.empty() ? "frontier" : path + ".frontier";
    if (it != j.end() && it->is_object() && it->contains("relaxed_points")) return {&*it, here};
    for (const auto& kv : j.items())
      if (FoundFrontier f = find_frontier(kv.value(), path.empty() ? kv.key() : path + "." + kv.key()); f.node) return f;
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      if (FoundFrontier f = find_frontier(j[i], path + "[" + std::to_string(i) + "]"); f.node) return f;
  }
  return {};
}

void frontier_section(Page& p, const std::string& file, const JsonReader& f) {
  Series ours{"frontier (ours)", {}, {}, "#1f77b4", false, false}, perseus{"Perseus plans", {}, {}, "#d62728", true, false};
  const Json& pts = f.raw("relaxed_points");
  if (!pts.is_array() || pts.empty()) f.fail("relaxed_points", "expected a non-empty list of [iteration time (s), energy (J)] pairs, got " + json_type_name(pts));
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Json& pt = pts[i];
    const std::string field = f.field("relaxed_points") + "[" + std::to_string(i) + "]";
    if (!pt.is_array() || pt.size() != 2 || !pt[0].is_number() || !pt[1].is_number() || !(std::fabs(pt[0].get<double>()) <= kMaxReportValue) ||
        !(std::fabs(pt[1].get<double>()) <= kMaxReportValue))
      throw InputError(f.file(), field, "expected a pair of finite numbers [iteration time (s), energy (J)], got " + pt.dump());
    ours.x.push_back(pt[0].get<double>()), ours.y.push_back(pt[1].get<double>());
  }
  for (const JsonReader& r : objects_in(f, "vs_perseus"))
    perseus.x.push_back(number_of(r, "perseus_iteration_s")), perseus.y.push_back(number_of(r, "perseus_energy_j"));
  p.section("Time-energy frontier (" + file + ")",
            "Model outputs: the critical-path frontier, and Perseus's own plans (points) at the time and energy this model predicts for them.");
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
  if (!file_exists(dir)) throw InputError(dir, "", "no such directory (expected an output directory: of run, validate --trace-out or compare)");
  if (!is_directory(dir)) throw InputError(dir, "", "is not a directory (expected an output directory: of run, validate --trace-out or compare)");
  Page p{dir, "", {}, 0};
  if (p.has("summary.json")) {
    const Json doc = p.json("summary.json");
    const JsonReader s = document(doc, p.path("summary.json"));
    if (s.has("totals")) replay_section(p, s);
    else if (s.has("stages")) synthetic_section(p, s);
  }
  if (p.has("validate.json")) validate_section(p);
  for (const char* c : {"compare.json", "compare/compare.json"})
    if (p.has(c)) compare_section(p, c);
  std::vector<std::string> jsons;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".json") jsons.push_back(it->path().filename().string());
  if (ec) throw InputError(dir, "", "cannot list the directory: " + ec.message());
  std::sort(jsons.begin(), jsons.end());
  for (const std::string& name : jsons) {
    if (name == "compare.json") continue;
    const Json j = read_json_file(p.path(name));
    const FoundFrontier f = find_frontier(j, "");
    if (f.node) p.sources.push_back(p.path(name)), frontier_section(p, name, JsonReader(*f.node, p.path(name), f.path));
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
