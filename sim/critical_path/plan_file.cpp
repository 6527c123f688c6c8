#include "sim/critical_path/plan_file.hpp"

#include "sim/core/errors.hpp"
#include "traces/src/gzip_file.hpp"

#include <cmath>
#include <fstream>

namespace dvfs {

ClockPlanFile read_clock_plan(const std::string& path) {
  const Json doc = read_json_maybe_gzip(path);
  if (!doc.is_array() || doc.empty())
    throw InputError(path, "", "expected a list with one {\"rank\", \"power_states\"} entry per rank");
  ClockPlanFile plan;
  plan.file = path;
  for (std::size_t r = 0; r < doc.size(); ++r) {
    JsonReader rank(doc[r], path, "[" + std::to_string(r) + "]");
    if (!rank.is_object()) rank.fail("", "expected an object {\"rank\", \"power_states\"}");
    rank.only_keys({"rank", "power_states"});
    RankClockPlan rp;
    rp.rank = static_cast<int>(rank.integer_in("rank", 0, 1 << 30));
    if (rp.rank != static_cast<int>(r)) rank.fail("rank", "expected ranks in order 0, 1, ... (got " + std::to_string(rp.rank) + ")");
    const Json& ps = rank.raw("power_states");
    if (!ps.is_array() || ps.empty()) rank.fail("power_states", "expected a non-empty list of SM clocks in MHz");
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (!ps[i].is_number() || !(ps[i].get<double>() > 0) || !std::isfinite(ps[i].get<double>()))
        rank.fail("power_states", "entry " + std::to_string(i) + ": expected a positive SM clock in MHz");
      rp.power_states_mhz.push_back(ps[i].get<double>());
    }
    plan.ranks.push_back(std::move(rp));
  }
  return plan;
}

Json clock_plan_to_json(const ClockPlanFile& plan) {
  Json out = Json::array();
  for (const RankClockPlan& r : plan.ranks) {
    Json ps = Json::array();
    for (double f : r.power_states_mhz) {
      // Whole clocks as integers, as Perseus writes them; only where a long holds them (a plan read back
      // may carry any positive finite number: converting 1e308 to long is undefined behaviour).
      if (f == std::floor(f) && std::fabs(f) < 9.0e15) ps.push_back(static_cast<long>(f));
      else ps.push_back(f);
    }
    out.push_back({{"rank", r.rank}, {"power_states", ps}});
  }
  return out;
}

void write_clock_plan(const std::string& path, const ClockPlanFile& plan) {
  std::ofstream f(path);
  f << clock_plan_to_json(plan).dump() << "\n";
  if (!f) throw InputError(path, "", "cannot write the clock plan");
}

std::vector<MerakInstruction> merak_instructions(int s, int S, int M) {
  // DeepSpeed-style TrainSchedule: 2 (M + S - 1) steps; even stages compute forwards on even steps,
  // odd stages on odd steps; the other steps are backwards. Invalid micro-batch ids are idle steps.
  auto valid = [M](int m) { return m >= 0 && m < M; };
  std::vector<MerakInstruction> out;
  const int steps = 2 * (M + S - 1);
  int prev = -1;
  for (int k = 0; k < steps; ++k) {
    const bool forward = (k % 2 == 0) == (s % 2 == 0);
    int mb = 0;
    if (forward) mb = (k % 2 == 0 ? k / 2 : (k - 1) / 2) - s / 2;
    else if (k % 2 == 0) mb = k / 2 - S + (s + 1) / 2;
    else mb = (k - 1) / 2 - S + 1 + s / 2;
    if (forward) {
      // Receive the activation (merged with sending the previous gradient), or only send the gradient.
      if (s > 0 && (valid(mb) || valid(prev))) out.push_back(MerakInstruction::p2p);
    } else {
      // Send the previous activation (merged with receiving this gradient), or only receive it.
      if (s < S - 1 && (valid(prev) || valid(mb))) out.push_back(MerakInstruction::p2p);
    }
    if ((s == 0 || s == S - 1) && forward && valid(mb)) out.push_back(MerakInstruction::load);
    if (valid(mb)) out.push_back(forward ? MerakInstruction::forward : MerakInstruction::backward);
    if (k == steps - 1) {
      out.push_back(MerakInstruction::reduce);  // tied gradients
      out.push_back(MerakInstruction::reduce);  // data-parallel gradients
      out.push_back(MerakInstruction::step);
    }
    prev = mb;
  }
  return out;
}

const char* to_string(PlanLayout l) { return l == PlanLayout::merak_1f1b ? "merak-1f1b instructions" : "one clock per computation"; }

std::vector<std::vector<double>> computation_clocks(const ClockPlanFile& plan, int S, int M, int chunks,
                                                    PipelineSchedule schedule, PlanLayout* layout) {
  if (static_cast<int>(plan.ranks.size()) != S)
    throw InputError(plan.file, "", "expected " + std::to_string(S) + " ranks (one per pipeline stage), got " +
                                        std::to_string(plan.ranks.size()));
  std::vector<std::vector<double>> out;
  PlanLayout used = PlanLayout::per_computation;
  for (int s = 0; s < S; ++s) {
    const std::vector<double>& ps = plan.ranks[static_cast<std::size_t>(s)].power_states_mhz;
    const std::size_t computations = static_cast<std::size_t>(2 * M * chunks);
    const std::string field = "[" + std::to_string(s) + "].power_states";
    if (ps.size() == computations) {
      out.push_back(ps);
      continue;
    }
    if (schedule == PipelineSchedule::one_f_one_b && chunks == 1) {
      const std::vector<MerakInstruction> ins = merak_instructions(s, S, M);
      if (ps.size() == ins.size()) {
        std::vector<double> c;
        for (std::size_t i = 0; i < ins.size(); ++i)
          if (ins[i] == MerakInstruction::forward || ins[i] == MerakInstruction::backward) c.push_back(ps[i]);
        out.push_back(std::move(c));
        used = PlanLayout::merak_1f1b;
        continue;
      }
      throw InputError(plan.file, field, "expected " + std::to_string(computations) + " entries (one per computation) or " +
                                             std::to_string(ins.size()) + " (Merak's 1F1B instructions of stage " +
                                             std::to_string(s) + "), got " + std::to_string(ps.size()));
    }
    throw InputError(plan.file, field, "expected " + std::to_string(computations) + " entries (one per computation of the " +
                                           std::string(to_string(schedule)) + " schedule), got " + std::to_string(ps.size()));
  }
  if (layout) *layout = used;
  return out;
}

ClockPlanFile plan_from_computation_clocks(const std::vector<std::vector<double>>& clocks, int S, int M, PlanLayout layout) {
  ClockPlanFile plan;
  for (int s = 0; s < S; ++s) {
    const std::vector<double>& c = clocks[static_cast<std::size_t>(s)];
    RankClockPlan r;
    r.rank = s;
    if (layout == PlanLayout::per_computation || c.empty()) {
      r.power_states_mhz = c;
    } else {
      std::size_t next = 0;
      double cur = c.front();
      for (MerakInstruction i : merak_instructions(s, S, M)) {
        if (i == MerakInstruction::forward || i == MerakInstruction::backward) cur = c.at(next++);
        r.power_states_mhz.push_back(cur);
      }
    }
    plan.ranks.push_back(std::move(r));
  }
  return plan;
}

}  // namespace dvfs
