#include "sim/results/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dvfs {

namespace {

constexpr double kW = 760, kH = 300, kLeft = 70, kRight = 20, kTop = 34, kBottom = 62;
const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"};

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string tick_label(double v, double step) {
  char b[32];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-4)) {
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
  }
  int decimals = 0;  // as many as the step needs (0.25 -> 2), so that ticks read exactly
  for (double scaled = step; decimals < 6 && std::fabs(scaled - std::round(scaled)) > 1e-6 * std::max(1.0, scaled); scaled *= 10) ++decimals;
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

struct Frame {
  double x0, x1, y0, y1;
  double px(double x) const { return kLeft + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (kW - kLeft - kRight); }
  double py(double y) const { return kH - kBottom - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (kH - kTop - kBottom); }
};

std::string open_svg(const ChartLabels& l) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 " + fmt(kW) + " " + fmt(kH) +
                  "\" width=\"" + fmt(kW) + "\" height=\"" + fmt(kH) + "\" font-family=\"sans-serif\" font-size=\"12\">";
  s += "<rect x=\"0\" y=\"0\" width=\"" + fmt(kW) + "\" height=\"" + fmt(kH) + "\" fill=\"#ffffff\"/>";
  s += "<text x=\"" + fmt(kW / 2) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" + html_escape(l.title) + "</text>";
  s += "<text x=\"" + fmt((kLeft + kW - kRight) / 2) + "\" y=\"" + fmt(kH - 8) + "\" text-anchor=\"middle\">" + html_escape(l.x) + "</text>";
  s += "<text transform=\"translate(16," + fmt((kTop + kH - kBottom) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" + html_escape(l.y) + "</text>";
  return s;
}

// Grid lines and tick labels of the y axis (and of x when `x_ticks`).
std::string axes(const Frame& f, bool x_ticks) {
  std::string s;
  const std::vector<double> yt = nice_ticks(f.y0, f.y1, 5);
  const double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double y : yt) {
    s += "<line x1=\"" + fmt(kLeft) + "\" x2=\"" + fmt(kW - kRight) + "\" y1=\"" + fmt(f.py(y)) + "\" y2=\"" + fmt(f.py(y)) +
         "\" stroke=\"#e0e0e0\"/>";
    s += "<text x=\"" + fmt(kLeft - 6) + "\" y=\"" + fmt(f.py(y) + 4) + "\" text-anchor=\"end\">" + tick_label(y, ystep) + "</text>";
  }
  if (x_ticks) {
    const std::vector<double> xt = nice_ticks(f.x0, f.x1, 8);
    const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;
    for (double x : xt)
      s += "<text x=\"" + fmt(f.px(x)) + "\" y=\"" + fmt(kH - kBottom + 16) + "\" text-anchor=\"middle\">" + tick_label(x, xstep) + "</text>";
  }
  s += "<rect x=\"" + fmt(kLeft) + "\" y=\"" + fmt(kTop) + "\" width=\"" + fmt(kW - kLeft - kRight) + "\" height=\"" +
       fmt(kH - kTop - kBottom) + "\" fill=\"none\" stroke=\"#444\"/>";
  return s;
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string s;
  double x = kLeft + 8;
  for (const auto& [name, color] : entries) {
    s += "<rect x=\"" + fmt(x) + "\" y=\"" + fmt(kTop + 6) + "\" width=\"12\" height=\"12\" fill=\"" + color + "\"/>";
    s += "<text x=\"" + fmt(x + 16) + "\" y=\"" + fmt(kTop + 16) + "\">" + html_escape(name) + "</text>";
    x += 28 + 7.0 * static_cast<double>(name.size());
  }
  return s;
}

// At most ~2 x `buckets` points: each bucket's first, minimum and maximum, in x order.
std::vector<std::size_t> thin(const Series& s, std::size_t buckets) {
  std::vector<std::size_t> keep;
  const std::size_t n = std::min(s.x.size(), s.y.size());
  if (n <= 2 * buckets) {
    for (std::size_t i = 0; i < n; ++i) keep.push_back(i);
    return keep;
  }
  const std::size_t per = (n + buckets - 1) / buckets;
  for (std::size_t b = 0; b < n; b += per) {
    std::size_t lo = b, hi = b;
    for (std::size_t i = b; i < std::min(n, b + per); ++i) {
      if (s.y[i] < s.y[lo]) lo = i;
      if (s.y[i] > s.y[hi]) hi = i;
    }
    keep.push_back(std::min(lo, hi));
    if (lo != hi) keep.push_back(std::max(lo, hi));
  }
  keep.push_back(n - 1);
  return keep;
}

std::string color_of(const Series& s, std::size_t i) { return s.color.empty() ? kPalette[i % 10] : s.color; }

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int n) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, n);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + 1e-9 * step; t += step) out.push_back(std::fabs(t) < 1e-12 * step ? 0.0 : t);
  return out;
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string line_chart(const ChartLabels& labels, const std::vector<Series>& series) {
  Frame f{1e300, -1e300, 1e300, -1e300};
  for (const Series& s : series)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      f.x0 = std::min(f.x0, s.x[i]), f.x1 = std::max(f.x1, s.x[i]);
      f.y0 = std::min(f.y0, s.y[i]), f.y1 = std::max(f.y1, s.y[i]);
    }
  if (f.x0 > f.x1) f = {0, 1, 0, 1};
  const double pad = (f.y1 - f.y0) * 0.08 + (f.y1 == f.y0 ? std::max(1.0, std::fabs(f.y1) * 0.05) : 0);
  f.y0 = f.y0 >= 0 && f.y0 - pad < 0 ? 0 : f.y0 - pad;
  f.y1 += pad * 2.5;  // room for the legend
  std::string s = open_svg(labels) + axes(f, true);
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& se = series[k];
    const std::string color = color_of(se, k);
    entries.emplace_back(se.name, color);
    std::string pts;
    double last_y = 0;
    bool first = true;
    for (std::size_t i : thin(se, 750)) {
      if (!std::isfinite(se.x[i]) || !std::isfinite(se.y[i])) continue;
      if (se.points) {
        s += "<circle cx=\"" + fmt(f.px(se.x[i])) + "\" cy=\"" + fmt(f.py(se.y[i])) + "\" r=\"3.5\" fill=\"" + color + "\"/>";
        continue;
      }
      if (se.step && !first) pts += fmt(f.px(se.x[i])) + "," + fmt(f.py(last_y)) + " ";
      pts += fmt(f.px(se.x[i])) + "," + fmt(f.py(se.y[i])) + " ";
      last_y = se.y[i];
      first = false;
    }
    if (!se.points && !pts.empty())
      s += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>";
  }
  return s + legend(entries) + "</svg>";
}

std::string bar_chart(const ChartLabels& labels, const std::vector<std::string>& categories, const std::vector<BarGroup>& groups) {
  Frame f{0, 1, 0, 0};
  for (const BarGroup& g : groups)
    for (double v : g.values) f.y0 = std::min(f.y0, v), f.y1 = std::max(f.y1, v);
  if (f.y1 == f.y0) f.y1 = f.y0 + 1;
  const double span = f.y1 - f.y0;
  f.y1 += span * (groups.size() > 1 ? 0.25 : 0.08);
  if (f.y0 < 0) f.y0 -= span * 0.05;
  std::string s = open_svg(labels) + axes(f, false);
  const double plot_w = kW - kLeft - kRight, slot = plot_w / static_cast<double>(std::max<std::size_t>(1, categories.size()));
  const double bar = slot * 0.8 / static_cast<double>(std::max<std::size_t>(1, groups.size()));
  for (std::size_t c = 0; c < categories.size(); ++c) {
    const double cx = kLeft + slot * (static_cast<double>(c) + 0.5);
    s += "<text x=\"" + fmt(cx) + "\" y=\"" + fmt(kH - kBottom + 16) + "\" text-anchor=\"middle\">" + html_escape(categories[c]) + "</text>";
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (c >= groups[g].values.size()) continue;
      const double v = groups[g].values[c];
      const double x = kLeft + slot * static_cast<double>(c) + slot * 0.1 + bar * static_cast<double>(g);
      const double y_top = f.py(std::max(0.0, v)), y_bot = f.py(std::min(0.0, v));
      s += "<rect x=\"" + fmt(x) + "\" y=\"" + fmt(y_top) + "\" width=\"" + fmt(bar * 0.92) + "\" height=\"" + fmt(std::max(0.5, y_bot - y_top)) +
           "\" fill=\"" + kPalette[g % 10] + "\"><title>" + html_escape(groups[g].name + " " + categories[c]) + ": " + tick_label(v, 0.01) +
           "</title></rect>";
    }
  }
  if (f.y0 < 0) s += "<line x1=\"" + fmt(kLeft) + "\" x2=\"" + fmt(kW - kRight) + "\" y1=\"" + fmt(f.py(0)) + "\" y2=\"" + fmt(f.py(0)) + "\" stroke=\"#000\"/>";
  std::vector<std::pair<std::string, std::string>> entries;
  if (groups.size() > 1)
    for (std::size_t g = 0; g < groups.size(); ++g) entries.emplace_back(groups[g].name, kPalette[g % 10]);
  return s + legend(entries) + "</svg>";
}

}  // namespace dvfs
