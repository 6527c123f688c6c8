#include "sim/validate/stage_workloads.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/json_util.hpp"

namespace dvfs {

StageWorkload load_stage_workload(const std::string& file, const std::string& workload, int recompute_override) {
  const Json doc = read_json_file(file);
  const JsonReader root(doc, file, "");
  root.only_keys({"what", "provenance", "workloads"});
  const JsonReader all = root.child("workloads");
  if (!all.has(workload.c_str())) all.fail(workload.c_str(), "no workload \"" + workload + "\"");
  const JsonReader w = all.child(workload.c_str());
  w.only_keys({"hidden", "heads", "seq", "micro_batch", "tp", "vocab", "recompute", "fp32_grad_accumulation", "stages"});
  TransformerStage base;
  base.hidden = w.positive("hidden");
  base.heads = w.positive("heads");
  base.seq = w.positive("seq");
  base.micro_batch = w.positive("micro_batch");
  base.tp = w.positive("tp");
  base.vocab = w.positive("vocab");
  base.recompute = recompute_override < 0 ? w.boolean_or("recompute", false) : recompute_override == 1;
  base.fp32_grad_accumulation = w.boolean_or("fp32_grad_accumulation", false);
  const Json& groups = w.raw("stages");
  if (!groups.is_array() || groups.empty()) w.fail("stages", "expected a non-empty array of stage groups");
  StageWorkload out;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const JsonReader g(groups[i], file, w.field("stages") + "[" + std::to_string(i) + "]");
    g.only_keys({"stages", "layers", "lm_head"});
    TransformerStage s = base;
    s.layers = g.non_negative("layers");
    s.lm_head = g.boolean_or("lm_head", false);
    const Json& ids = g.raw("stages");
    if (!ids.is_array() || ids.empty()) g.fail("stages", "expected a non-empty array of stage indices");
    for (std::size_t k = 0; k < ids.size(); ++k) {
      if (!ids[k].is_number_integer() || ids[k].get<long>() < 0)
        g.fail("stages", "expected stage indices >= 0");
      if (!out.emplace(ids[k].get<int>(), s).second)
        g.fail("stages", "stage " + std::to_string(ids[k].get<int>()) + " listed twice");
    }
  }
  return out;
}

}  // namespace dvfs
