// The policy registry (sim/policies/registry.hpp): every entry parses from a scenario and replays a small
// fixture through the one scenario entry point; the families' own lookups agree with the catalog; and the
// entry point tells the scenario kinds apart by their keys.
#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/critical_path/pipeline_plans.hpp"
#include "sim/planning/planned_policies.hpp"
#include "sim/policies/policy_factory.hpp"
#include "sim/simulation/policy_catalog.hpp"
#include "sim/simulation/run_scenario.hpp"
#include "sim/simulation/scenario_kinds.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace dvfs;

namespace {

Json policy_object(const PolicyEntry& e) {
  Json p = {{"name", e.name}};
  for (const std::string& k : e.keys) {
    if (k == "sm_mhz") p[k] = 1410;
    else if (k == "mem_mhz") p[k] = 3201;
    else if (k == "power_cap_w") p[k] = 600;
    else if (k == "budget_pct") p[k] = 1;
    else FAIL("no test value for key " << k << " of " << e.name);
  }
  return p;
}

Json scenario_for(const PolicyEntry& e) {
  Json doc = {{"gpu", "h200"}, {"policy", policy_object(e)}};
  if (e.kind == PolicyKind::pipeline) doc["synthetic"] = {{"model", "gpt3-xl"}, {"pp", 2}, {"microbatches", 2}};
  // the recorded policy needs recorded clocks: a small kernel-loop recording (trace beside its telemetry)
  else if (e.name == "recorded") doc["trace"] = data_dir() + "/traces/recordings/h200-power/add-bf16";
  else doc["trace"] = data_dir() + "/tests/fixtures/kineto_current.json";
  return doc;
}

}  // namespace

TEST_CASE("every registered policy parses from a scenario and has what its kind needs", "[registry]") {
  const PolicyRegistry& reg = policy_registry();
  REQUIRE(reg.entries().size() >= 11);
  std::set<std::string> names;
  for (const PolicyEntry& e : reg.entries()) {
    INFO(e.name);
    CHECK(names.insert(e.name).second);
    CHECK(!e.summary.empty());
    const Scenario sc = parse_scenario(scenario_for(e), "s.json", ".");
    CHECK(sc.policy.name == e.name);
    switch (e.kind) {
      case PolicyKind::online: CHECK(e.make); break;
      case PolicyKind::planned: CHECK(e.plan); CHECK(is_planned_policy(e.name)); break;
      case PolicyKind::pipeline: CHECK(e.plan_pipeline); break;  // critical-path, critical-path+per-kernel, kareus
    }
    if (e.kind != PolicyKind::planned) CHECK_FALSE(is_planned_policy(e.name));
    if (e.kind != PolicyKind::pipeline) CHECK_FALSE(is_critical_path_policy(e.name));
  }
  CHECK(policy_names() == join_names(reg.names()));
  CHECK_THROWS_WITH(parse_scenario(Json{{"trace", data_dir() + "/tests/fixtures/kineto_current.json"}, {"gpu", "h200"}, {"policy", "turbo"}},
                                   "s.json", "."),
                    "s.json: policy: unknown policy \"turbo\" (expected one of: " + policy_names() + ")");
  CHECK_THROWS_WITH(make_policy_factory(PolicySpec{"per-kernel", {}, 0, 0}, load_gpu_model("h200"), "s.json"),
                    Catch::Contains("not a replay-time policy (expected one of: max, static, native, recorded)"));
}

TEST_CASE("every registered online and planned policy replays a small trace through the scenario entry point", "[registry]") {
  for (const PolicyEntry& e : policy_registry().entries()) {
    if (e.kind == PolicyKind::pipeline) continue;  // a synthetic pipeline each: tests/python/test_policy_registry.py
    INFO(e.name);
    const ScenarioRun run = run_scenario(scenario_for(e), "s.json", ".");
    CHECK(run.kind == ScenarioKind::replay);
    CHECK(run.summary["totals"]["energy_j"].get<double>() > 0);
    CHECK(!run.outcomes.empty());
  }
}

TEST_CASE("the scenario entry point tells the kinds apart by their keys", "[registry]") {
  CHECK(scenario_kind(Json{{"trace", "x"}}) == ScenarioKind::replay);
  CHECK(scenario_kind(Json{{"trace", {"a", "b"}}}) == ScenarioKind::multi_rank);
  CHECK(scenario_kind(Json{{"synthetic", Json::object()}}) == ScenarioKind::synthetic);
  CHECK(scenario_kind(Json{{"control", Json::object()}}) == ScenarioKind::registered);
  CHECK(registered_kind(Json{{"fleet", Json::object()}})->key == "fleet");
  CHECK(registered_kind(Json{{"trace", "x"}}) == nullptr);
  CHECK(scenario_kind(Json::array()) == ScenarioKind::replay);
}
