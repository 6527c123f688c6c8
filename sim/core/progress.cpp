#include "sim/core/progress.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <unistd.h>

namespace dvfs {

namespace {

std::ostream* terminal_stderr() {
  const char* env = std::getenv("DVFS_SIM_PROGRESS");
  if (env && std::strcmp(env, "0") == 0) return nullptr;
  return ::isatty(STDERR_FILENO) ? &std::cerr : nullptr;
}

}  // namespace

Progress::Progress(std::string label, std::size_t total) : Progress(std::move(label), total, Options{}) {}

Progress::Progress(std::string label, std::size_t total, const Options& opts)
    : label_(std::move(label)),
      total_(total),
      out_(opts.out ? opts.out : terminal_stderr()),
      delay_s_(opts.delay_s),
      interval_s_(opts.interval_s),
      start_(std::chrono::steady_clock::now()) {
  // Tests of the terminal output set the delay so that they do not depend on the machine's speed.
  if (const char* d = std::getenv("DVFS_SIM_PROGRESS_DELAY_S"); d && !opts.out) delay_s_ = std::atof(d);
}

Progress::~Progress() { finish(); }

double Progress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::advance(std::size_t n, const std::string& what) {
  done_ += n;
  if (!what.empty()) what_ = what;
  if (!out_ || finished_) return;
  const double t = elapsed_s();
  if (t < delay_s_ || (last_draw_s_ >= 0 && t - last_draw_s_ < interval_s_)) return;
  last_draw_s_ = t;
  draw(false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (out_ && drawn_) draw(true);
}

void Progress::draw(bool final_line) {
  char buf[96];
  if (total_ > 0)
    std::snprintf(buf, sizeof buf, "%zu/%zu (%.0f %%)", done_, total_, 100.0 * static_cast<double>(done_) / static_cast<double>(total_));
  else
    std::snprintf(buf, sizeof buf, "%zu", done_);
  char when[48];
  std::snprintf(when, sizeof when, "%.1f s", elapsed_s());
  // \r and "erase to end of line" redraw in place; the final line keeps the count and the time only.
  *out_ << "\r" << label_ << ": " << buf << (final_line ? ", done in " : "  ") << when;
  if (!final_line && !what_.empty()) *out_ << "  " << what_;
  *out_ << "\033[K" << (final_line ? "\n" : "") << std::flush;
  drawn_ = true;
}

}  // namespace dvfs
