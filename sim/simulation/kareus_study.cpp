#include "sim/simulation/kareus_study.hpp"

#include "models/src/model_registry.hpp"
#include "sim/core/errors.hpp"
#include "sim/core/text_format.hpp"
#include "sim/kareus/kareus.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

namespace dvfs {

namespace {
constexpr double kStudySlowdown = 1.2;  // "along the frontier": Perseus's points up to 20 % slower than the fastest
}

Json kareus_study(const SyntheticRun& req) {
  const SynthesizedJob job = synthesize_job(req);
  if (job.T > 1) throw InputError(req.source, "synthetic.unfold_tp", "the Kareus study needs each TP group folded into one actor (unfold_tp off)");
  const KareusKnobs knobs = load_kareus_knobs(default_kareus_knobs_path());
  const ContentionModel m = load_contention_model(data_dir() + "/models/contention/h200-streams.json");
  const KareusFrontier kf = kareus_frontier(job.kp, job.wl.names, job.bound, job.opts, knobs, m);
  const PipelineFrontier& perseus = kf.frontiers.front();
  // Iso-time: the fastest iteration (both off run at it), or Perseus's fastest frontier point where the quantum
  // rounded that up.
  const double t0 = std::max(perseus.fastest_s, perseus.points.empty() ? 0.0 : perseus.points.back().first), e_off = perseus.fastest_j;
  const double e_perseus = energy_at_time(perseus.points, t0), e_kareus = energy_at_time(kf.envelope, t0);
  const double t_kareus = time_at_energy(kf.envelope, e_perseus);
  // Along Perseus's frontier (its Pareto points up to 20 % slower than the fastest): the largest energy saving at its times
  // and time saving at its energies.
  double max_e = 0, max_t = 0;
  // Perseus's Pareto points only: at the frontier's slow end the blocked GPUs' power makes slower points cost more,
  // and a dominated point would count Perseus's own faster points as Kareus's saving.
  std::vector<std::pair<double, double>> pareto = perseus.points;
  std::sort(pareto.begin(), pareto.end());
  double lowest = std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, double>> kept;
  for (const auto& p : pareto)
    if (p.second < lowest) lowest = p.second, kept.push_back(p);
  for (const auto& [t, e] : kept) {
    if (t > kStudySlowdown * t0) continue;  // the frontier's far slow end is flat: iso-energy there says nothing
    max_e = std::max(max_e, 1 - energy_at_time(kf.envelope, t) / e);
    max_t = std::max(max_t, 1 - time_at_energy(kf.envelope, e) / t);
  }
  int chosen = 0;
  for (std::size_t i = 0; i < kf.settings.size(); ++i)
    if (energy_at_time(kf.frontiers[i].points, t0) <= e_kareus) chosen = static_cast<int>(i);
  const ParallelLayout& l = req.layout;
  return {{"model", req.model},
          {"gpu", job.target.name()},
          {"layout", {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"gpus", l.gpus()}}},
          {"microbatches", job.sp.microbatches},
          {"both_off", {{"iteration_s", t0}, {"energy_j", e_off}}},
          {"iso_time", {{"iteration_s", t0},
                        {"perseus_j", e_perseus},
                        {"kareus_j", e_kareus},
                        {"perseus_vs_off_pct", 100 * (e_perseus / e_off - 1)},
                        {"kareus_vs_perseus_pct", 100 * (e_kareus / e_perseus - 1)},
                        {"kareus_setting", kf.settings[static_cast<std::size_t>(chosen)].label()}}},
          {"iso_energy", {{"energy_j", e_perseus}, {"perseus_s", t0}, {"kareus_s", t_kareus}, {"kareus_vs_perseus_pct", 100 * (t_kareus / t0 - 1)}}},
          {"along_perseus_frontier", {{"max_energy_saving_pct", 100 * max_e}, {"max_time_saving_pct", 100 * max_t}, {"up_to_slowdown", kStudySlowdown}}},
          {"frontier_points", {{"perseus", perseus.points.size()}, {"kareus_envelope", kf.envelope.size()}}},
          {"perseus_frontier", perseus.points},
          {"kareus_envelope", kf.envelope},
          {"settings", kf.settings.size()},
          {"frontier_s", kf.seconds}};
}

std::string format_kareus_study(const Json& s) {
  const Json& it = s["iso_time"];
  const Json& ie = s["iso_energy"];
  return printf_text(
                "%s on %d GPUs (TP %d x PP %d x DP %d, %s), model outputs per pipeline GPU set:\n"
                "  both off (top clocks, no overlap): %.3f s, %.1f kJ\n"
                "  iso-time %.3f s: Perseus %.1f kJ (%+.1f %% vs off), Kareus %.1f kJ (%+.1f %% vs Perseus; %s)\n"
                "  iso-energy %.1f kJ: Perseus %.3f s, Kareus %.3f s (%+.1f %%)\n"
                "  along Perseus's frontier (up to 20 %% slower than its fastest): up to %.1f %% less energy at equal time, %.1f %% less time at equal energy\n"
                "  %zu knob settings, frontiers in %.1f s\n",
                s["model"].get<std::string>().c_str(), s["layout"]["gpus"].get<int>(), s["layout"]["tp"].get<int>(), s["layout"]["pp"].get<int>(),
                s["layout"]["dp"].get<int>(), s["gpu"].get<std::string>().c_str(), s["both_off"]["iteration_s"].get<double>(),
                s["both_off"]["energy_j"].get<double>() / 1e3, it["iteration_s"].get<double>(), it["perseus_j"].get<double>() / 1e3,
                it["perseus_vs_off_pct"].get<double>(), it["kareus_j"].get<double>() / 1e3, it["kareus_vs_perseus_pct"].get<double>(),
                it["kareus_setting"].get<std::string>().c_str(), ie["energy_j"].get<double>() / 1e3, ie["perseus_s"].get<double>(),
                ie["kareus_s"].get<double>(), ie["kareus_vs_perseus_pct"].get<double>(),
                s["along_perseus_frontier"]["max_energy_saving_pct"].get<double>(), s["along_perseus_frontier"]["max_time_saving_pct"].get<double>(),
                s["settings"].get<std::size_t>(), s["frontier_s"].get<double>());
}

}  // namespace dvfs
