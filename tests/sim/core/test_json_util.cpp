// The one checked JSON reader (sim/core/json_util.hpp): numbers beyond a double, nesting beyond the limit,
// integers beyond their target type, each an InputError naming the file and the JSON path.
#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"
#include "sim/core/limits.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <string>

using namespace dvfs;

namespace {

// The InputError `f` throws: its field and problem.
template <class F>
InputError error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("expected an InputError");
  return InputError("", "", "");
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST_CASE("a number beyond a double's range names its JSON path", "[json]") {
  const InputError e = error_of([] { parse_json_text(R"({"a": [1, {"b": 1e400}]})", "f.json"); });
  CHECK(e.file() == "f.json");
  CHECK(e.field() == "a[1].b");
  CHECK(e.problem().find("1e400") != std::string::npos);
  CHECK(error_of([] { parse_json_text("[0, -1e999]", "f.json"); }).field() == "[1]");
  CHECK(error_of([] { parse_json_text("1e400", "f.json"); }).field() == "(top level)");
}

TEST_CASE("nesting is refused past the limit and read up to it", "[json]") {
  CHECK_NOTHROW(parse_json_text(nested(kMaxJsonDepth), "f.json"));
  const InputError e = error_of([] { parse_json_text(R"({"x": )" + nested(100000) + "}", "f.json"); });
  CHECK(e.field().rfind("x[0][0]", 0) == 0);
  CHECK(e.problem().find("nested deeper than " + std::to_string(kMaxJsonDepth)) != std::string::npos);
}

TEST_CASE("malformed JSON stays one error naming the file", "[json]") {
  const InputError e = error_of([] { parse_json_text(R"({"a": [1, 2)", "f.json"); });
  CHECK(e.field().empty());
  CHECK(e.problem().rfind("malformed JSON", 0) == 0);
}

TEST_CASE("checked_integer keeps a value in range and refuses the rest before any conversion", "[json]") {
  CHECK(checked_integer(Json(7), "f", "k", 0, 10) == 7);
  CHECK(checked_integer(Json(3.0), "f", "k", 0, 10) == 3);
  CHECK(checked_integer(Json("stream 7"), "f", "k", 0, 10, true) == 7);
  CHECK(error_of([] { checked_integer(Json(1e25), "f", "args.stream", 0, 10); }).field() == "args.stream");
  CHECK_THROWS_AS(checked_integer(Json(-1e20), "f", "k", 0, 0xffffffffL), InputError);
  CHECK_THROWS_AS(checked_integer(Json(2.5), "f", "k", 0, 10), InputError);
  CHECK_THROWS_AS(checked_integer(Json(std::numeric_limits<std::uint64_t>::max()), "f", "k", 0, std::numeric_limits<long>::max()), InputError);
  CHECK_THROWS_AS(checked_integer(Json("stream 99999999999999999999999"), "f", "k", 0, std::numeric_limits<long>::max(), true), InputError);
  CHECK_THROWS_AS(checked_integer(Json("no digits"), "f", "k", 0, 10, true), InputError);
}

TEST_CASE("JsonReader integers are range-checked and a non-object is refused where keys are read", "[json]") {
  const Json doc = parse_json_text(R"({"repeat": 4294967297, "big": 18446744073709551615})", "s.json");
  JsonReader r(doc, "s.json", "");
  CHECK(r.integer("repeat") == 4294967297L);
  CHECK(error_of([&] { r.integer_in("repeat", 1, 1000000); }).field() == "repeat");
  CHECK(error_of([&] { r.integer("big"); }).field() == "big");
  const Json arr = parse_json_text("[1, 2]", "s.json");
  const InputError e = error_of([&] { JsonReader(arr, "s.json", "").only_keys({"a"}); });
  CHECK(e.field() == "(top level)");
  CHECK(e.problem() == "expected an object, got array");
}

TEST_CASE("a key given twice in one object is refused naming it; a recorded trace keeps the last, as its writers' readers do",
          "[json]") {
  // "policy": "native", "policy": "max" ran max; a model's cap_w 700 then 300 ran at 300 W, without a word.
  const InputError e = error_of([] { parse_json_text(R"({"gpu": "h200", "policy": {"name": "native", "name": "max"}})", "s.json"); });
  CHECK(e.field() == "policy.name");
  CHECK_THAT(std::string(e.what()), Catch::Contains("s.json: policy.name: duplicate key"));
  CHECK(parse_json_text(R"({"a": [{"b": 1}, {"b": 2}]})", "s.json")["a"][1]["b"] == 2);  // the same key in two objects
  CHECK(parse_json_text(R"({"ts": 1, "ts": 2})", "trace.json", DuplicateKeys::last_wins)["ts"] == 2);
}
