// `dvfs-sim report OUT_DIR`: a self-contained HTML page of an output directory's plots
// (sim/results/html_report.hpp, docs/report.md).
#include "sim/cli/command.hpp"
#include "sim/results/html_report.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace dvfs {

Command report_command() {
  Command c;
  c.name = "report";
  c.summary = "write an output directory's plots as one self-contained HTML page";
  c.description =
      "report OUT_DIR [-o FILE]: reads what the directory holds (a run's summary.json and timeline.csv, validate\n"
      "--trace-out's validate.json, measured.csv and timelines, compare.json, a report with a frontier) and writes\n"
      "OUT_DIR/report.html (-o: elsewhere): inline SVG plots, no script, nothing fetched from the network.";
  c.unknown_option = "unknown option for report: ";
  c.extra_argument = "report takes one output directory";
  c.declare = [](CLI::App& app) -> std::function<int()> {
    auto dir = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    app.add_option("dir", *dir, "output directory (of run, validate --trace-out, compare)");
    app.add_option("-o,--output", *out, "write the page here (default OUT_DIR/report.html)");
    return [dir, out] {
      if (dir->empty()) throw UsageError("report needs an output directory");
      const HtmlReport r = write_html_report(*dir, *out);
      std::cout << "report: " << (out->empty() ? *dir + "/report.html" : *out) << " (" << r.figures << " figures from "
                << r.sources.size() << " files)\n";
      return 0;
    };
  };
  return c;
}

}  // namespace dvfs
