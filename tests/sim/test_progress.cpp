// The progress line of long commands: drawn in place on a terminal, silent elsewhere.
#include "sim/core/progress.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <unistd.h>

using dvfs::Progress;

TEST_CASE("progress prints nothing when stderr is not a terminal or DVFS_SIM_PROGRESS=0") {
  if (!::isatty(STDERR_FILENO)) {  // under CTest stderr is a pipe
    Progress p("compare h200", 3);
    p.advance();
    CHECK_FALSE(p.enabled());
    CHECK(p.done() == 1);
  }
  ::setenv("DVFS_SIM_PROGRESS", "0", 1);
  Progress off("compare h200", 3);
  ::unsetenv("DVFS_SIM_PROGRESS");
  CHECK_FALSE(off.enabled());
}

TEST_CASE("progress redraws one line in place and ends it with a newline") {
  std::ostringstream os;
  Progress::Options opts;
  opts.out = &os;
  opts.delay_s = 0;
  opts.interval_s = 0;
  {
    Progress p("compare h200", 4, opts);
    p.advance(1, "per-kernel");
    p.advance(3);
  }
  const std::string s = os.str();
  CHECK(s.find("\rcompare h200: 1/4 (25 %)") != std::string::npos);
  CHECK(s.find("per-kernel") != std::string::npos);
  CHECK(s.find("4/4 (100 %), done in ") != std::string::npos);
  CHECK(s.back() == '\n');
  CHECK(s.find('\n') == s.size() - 1);  // one line, redrawn with carriage returns
}

TEST_CASE("progress is rate-limited and skips work shorter than its delay") {
  std::ostringstream os;
  Progress::Options opts;
  opts.out = &os;
  opts.delay_s = 60;  // nothing in this test takes a minute
  {
    Progress p("calibrate", 1000, opts);
    for (int i = 0; i < 1000; ++i) p.advance();
  }
  CHECK(os.str().empty());

  std::ostringstream many;
  opts.out = &many;
  opts.delay_s = 0;
  opts.interval_s = 60;
  {
    Progress p("calibrate", 1000, opts);
    for (int i = 0; i < 1000; ++i) p.advance();
  }
  // The first update is drawn, the rest fall inside the interval; the final line is always drawn.
  const std::string s = many.str();
  CHECK(std::count(s.begin(), s.end(), '\r') == 2);
}
