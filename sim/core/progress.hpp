#pragma once
// Progress of a long command (compare, calibrate, ...) for someone watching a terminal: one line on
// stderr, redrawn at most every `interval_s`, first drawn only once the work has taken `delay_s` (short
// commands print nothing), ended with a newline. When stderr is not a terminal (pipes, CI, tests, files)
// or DVFS_SIM_PROGRESS=0, it prints nothing, so logs and machine-read output stay clean.
// DVFS_SIM_PROGRESS_DELAY_S overrides the delay (tests).
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace dvfs {

class Progress {
 public:
  struct Options {
    std::ostream* out = nullptr;  // nullptr: std::cerr, only when stderr is a terminal
    double delay_s = 0.3;
    double interval_s = 0.2;
  };

  // `total` 0 means unknown (the line shows the count only).
  Progress(std::string label, std::size_t total);
  Progress(std::string label, std::size_t total, const Options& opts);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `n` more units done; `what` names the unit in progress next (e.g. the policy being replayed).
  void advance(std::size_t n = 1, const std::string& what = "");
  // Says what is being worked on without counting anything done.
  void note(const std::string& what) { advance(0, what); }
  // Draws the final line (if anything was drawn) and stops; the destructor calls it.
  void finish();
  bool enabled() const { return out_ != nullptr; }
  std::size_t done() const { return done_; }

 private:
  void draw(bool final_line);
  double elapsed_s() const;

  std::string label_, what_;
  std::size_t total_ = 0, done_ = 0;
  std::ostream* out_ = nullptr;
  double delay_s_ = 0, interval_s_ = 0, last_draw_s_ = -1;
  bool drawn_ = false, finished_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dvfs
