#include "sim/core/text_format.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace dvfs;

TEST_CASE("printf_text keeps the whole text however long it is", "[core][format]") {
  CHECK(printf_text("%d GPUs, %.1f kJ", 1024, 19.54) == "1024 GPUs, 19.5 kJ");
  CHECK(printf_text("%s", "").empty());
  const std::string long_label(5000, 'x');  // beyond any fixed buffer the formatting used to go through
  const std::string text = printf_text("setting %s, frontiers in %.1f s\n", long_label.c_str(), 12.3);
  CHECK(text.size() == 8 + 5000 + 22);
  CHECK(text.substr(text.size() - 22) == ", frontiers in 12.3 s\n");
}
