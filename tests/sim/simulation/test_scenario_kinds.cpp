// The scenario-kind registry (sim/simulation/scenario_kinds.hpp): kinds with their own top-level key register
// once from their folders; the document's key picks one; run_scenario runs, reports and writes through it, and no
// code outside the kind's folder names it.
#include "sim/core/errors.hpp"
#include "sim/simulation/scenario_kinds.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace dvfs;

TEST_CASE("the power-budget and lifecycle kinds are registered once each, under their keys", "[registry]") {
  const ScenarioKindRegistry& r = scenario_kind_registry();
  REQUIRE(r.specs().size() == 3);
  for (const char* key : {"control", "fleet", "lifecycle"}) {
    INFO(key);
    const Json doc = {{key, Json::object()}, {"name", "x"}};
    const ScenarioKindSpec* s = r.for_document(doc);
    REQUIRE(s != nullptr);
    CHECK(s->key == key);
    CHECK(r.find(key) == s);
    CHECK(registered_kind(doc) == s);
    CHECK(static_cast<bool>(s->run));
    CHECK(static_cast<bool>(s->check));
    CHECK(static_cast<bool>(s->report));
    CHECK(scenario_kind(doc) == ScenarioKind::registered);
  }
  CHECK(r.for_document(Json{{"trace", "x"}}) == nullptr);  // trace replays and synthetic runs are run_scenario's own
  CHECK(r.for_document(Json::array()) == nullptr);
  CHECK_FALSE(static_cast<bool>(r.find("control")->outputs));  // studies print their result
  CHECK(static_cast<bool>(r.find("lifecycle")->outputs));     // summary.json
}

TEST_CASE("a registered kind's check reads the document as its run does and names the file and field", "[registry]") {
  const ScenarioKindRegistry& r = scenario_kind_registry();
  CHECK_THROWS_WITH(r.find("lifecycle")->check(Json{{"name", "x"}, {"lifecycle", Json::object()}, {"colour", 1}}, "l.json", "."),
                    Catch::Contains("l.json: colour"));
  CHECK_THROWS_AS(r.find("fleet")->check(Json{{"fleet", Json::object()}}, "f.json", "."), InputError);
  CHECK_THROWS_AS(r.find("control")->check(Json{{"control", 3}}, "c.json", "."), InputError);
}

TEST_CASE("a kind registers with its key, run, report and outputs; a second one for a key is refused", "[registry]") {
  ScenarioKindRegistry r;
  ScenarioKindSpec toy;
  toy.key = "toy";
  toy.run = [](const Json& doc, const std::string&, const std::string&) {
    ScenarioRun run;
    run.name = doc.value("name", "");
    run.summary = {{"steps", doc["toy"].value("steps", 0) * 2}};
    return run;
  };
  toy.report = [](const Json& s) { return "toy " + s["steps"].dump(); };
  ScenarioKindSpec unchecked = toy;
  CHECK_THROWS_AS(r.add(unchecked), std::logic_error);  // no check: the fuzzer could not read its documents
  toy.check = [](const Json& doc, const std::string& file, const std::string&) {
    if (!doc["toy"].is_object()) throw InputError(file, "toy", "expected an object");
  };
  r.add(toy);
  const Json doc = {{"name", "t"}, {"toy", {{"steps", 4}}}};
  const ScenarioKindSpec* s = r.for_document(doc);
  REQUIRE(s != nullptr);
  ScenarioRun run = s->run(doc, "t.json", ".");
  CHECK(run.summary["steps"] == 8);
  CHECK(s->report(run.summary) == "toy 8");
  run.kind = ScenarioKind::registered;
  run.registered = s;
  CHECK(run.is_study());  // no outputs: it prints its result
  CHECK(run.report() == "toy 8");
  CHECK(write_scenario_outputs(run, "unused-dir").empty());
  CHECK_THROWS_AS(r.add(toy), std::logic_error);
}

TEST_CASE("a registered kind has no single replay to export", "[registry]") {
  ScenarioOptions opts;
  opts.trace_out = "x.json";
  CHECK_THROWS_WITH(run_scenario(Json{{"fleet", Json::object()}}, "f.json", ".", opts),
                    Catch::Contains("--trace-out: expected a trace replay or synthetic scenario: a fleet study"));
}
