#pragma once
// Small inline-SVG charts for the HTML report (sim/results/html_report.hpp): lines over a numeric x axis,
// grouped bars, and points. Self-contained text (no script, no external resource); deterministic.
#include <string>
#include <vector>

namespace dvfs {

struct Series {
  std::string name;
  std::vector<double> x, y;
  std::string color;     // "" = from the palette
  bool points = false;   // markers instead of a line
  bool step = false;     // a step line (each y holds until the next x), as telemetry and timelines are
};

struct ChartLabels {
  std::string title, x, y;
};

// Lines (or points) over x; long series are thinned to at most ~1,500 vertices per series, keeping each
// bucket's minimum and maximum so peaks stay visible.
std::string line_chart(const ChartLabels& labels, const std::vector<Series>& series);

struct BarGroup {
  std::string name;            // a series of bars (a legend entry)
  std::vector<double> values;  // one per category
};
// Vertical bars: one cluster per category, one bar per group.
std::string bar_chart(const ChartLabels& labels, const std::vector<std::string>& categories, const std::vector<BarGroup>& groups);

// "Nice" axis ticks covering [lo, hi] (about `n` of them).
std::vector<double> nice_ticks(double lo, double hi, int n);
// Text safe inside HTML / SVG.
std::string html_escape(const std::string& s);

}  // namespace dvfs
