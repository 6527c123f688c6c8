#pragma once
// One `dvfs-sim` command, declared once: its name, a one-line summary, a longer description, and a
// `declare` step that adds its options and arguments to a CLI11 app (their help comes from the same
// declaration) and returns what runs once the command line is parsed. main.cpp holds the table.
//
// Errors: a UsageError (or a CLI11 parse error) is one line on stderr naming `dvfs-sim help CMD`, exit 2;
// an InputError (bad file, field or value) is one line "dvfs-sim: error: FILE: FIELD: problem", exit 2.
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace dvfs {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Command {
  std::string name;
  std::string summary;      // one line, for `dvfs-sim help`
  std::string description;  // what it does, for `dvfs-sim help CMD`
  // An argument the command does not know: the message (the argument is appended for options).
  std::string unknown_option;  // e.g. "unknown option for run: "
  std::string extra_argument;  // e.g. "run takes one scenario file" ("" = same as unknown_option)
  std::function<std::function<int()>(CLI::App&)> declare;
};

// An option taking a value, kept as text so the command converts and checks it with the project's own
// messages (parse_number: "OPT: expected ..., got ..."). given(): it was on the command line.
struct TextOption {
  std::string value;
  CLI::Option* option = nullptr;
  bool given() const;
};
TextOption& add_text_option(CLI::App& app, const std::string& names, TextOption& target, const std::string& help);

Command run_command();
Command models_command();
Command validate_command();
Command calibrate_command();
Command compare_command();
Command synth_command();      // sim/cli/synth_command.cpp
Command control_command();    // sim/cli/control_commands.cpp
Command fleet_command();      // sim/cli/control_commands.cpp
Command bench_command();      // sim/cli/bench.cpp
Command report_command();     // sim/cli/report_command.cpp
Command cache_command();      // sim/cli/cache_command.cpp

}  // namespace dvfs
