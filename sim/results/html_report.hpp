#pragma once
// `dvfs-sim report OUT_DIR`: one self-contained HTML page (inline SVG, no script, no network) with the plots
// of what an output directory holds (docs/report.md):
//   summary.json + timeline.csv (a trace replay)   totals, power and SM clock over time, energy by phase and
//                                                   by kernel class
//   summary.json with "stages" (a synthetic run)   energy and waits per pipeline stage
//   validate.json + measured.csv + <source>.timeline.csv (validate RECORDING --trace-out DIR)
//                                                   simulated vs measured power and SM clock over time, step
//                                                   energy and time, measured vs simulated
//   compare.json (here or in compare/)             energy saved and slowdown per policy, as bars
//   any *.json with a "frontier" (validate --perseus -o FILE)   the time-energy frontier and Perseus's plans
// Every figure says whether it is measured (and from which file) or a model output.
#include <string>
#include <vector>

namespace dvfs {

struct HtmlReport {
  std::string html;
  std::vector<std::string> sources;  // the files it drew from
  int figures = 0;
};

// InputError naming the directory when it holds nothing to report.
HtmlReport build_html_report(const std::string& dir);
// Writes build_html_report(dir) to `path` (default DIR/report.html); returns the report.
HtmlReport write_html_report(const std::string& dir, const std::string& path = "");

}  // namespace dvfs
