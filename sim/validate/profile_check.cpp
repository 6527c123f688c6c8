#include "sim/validate/profile_check.hpp"

#include "models/src/stage_model.hpp"
#include "sim/core/errors.hpp"

#include <algorithm>
#include <cmath>

namespace dvfs {

namespace {

const ClassCoefficients& computation_of(const GpuModel& m, const std::string& instruction, const std::string& profile) {
  const ClassCoefficients* cc = m.computation(instruction);
  if (!cc)
    throw InputError(m.source_file(), "computations." + instruction,
                     "model " + m.name() + " has no computation \"" + instruction + "\" needed by " + profile);
  return *cc;
}

void add_point(SeriesError& s, double pt, double mt, double pe, double me) {
  const double et = std::fabs(pt / mt - 1.0), ee = std::fabs(pe / me - 1.0);
  s.time_mape += et;
  s.time_bias += pt / mt - 1.0;
  s.energy_mape += ee;
  s.time_max_ape = std::max(s.time_max_ape, et);
  s.energy_max_ape = std::max(s.energy_max_ape, ee);
  ++s.points;
}

void finish(ProfileError& e) {
  double st = 0, se = 0;
  for (auto& s : e.series) {
    st += s.time_mape;
    se += s.energy_mape;
    e.points += s.points;
    e.time_max_ape = std::max(e.time_max_ape, s.time_max_ape);
    e.energy_max_ape = std::max(e.energy_max_ape, s.energy_max_ape);
    if (s.points) {
      s.time_mape /= static_cast<double>(s.points);
      s.time_bias /= static_cast<double>(s.points);
      s.energy_mape /= static_cast<double>(s.points);
    }
  }
  if (e.points) {
    e.time_mape = st / static_cast<double>(e.points);
    e.energy_mape = se / static_cast<double>(e.points);
  }
}

}  // namespace

Json ProfileError::to_json() const {
  Json series_j = Json::array();
  for (const auto& s : series)
    series_j.push_back({{"stage", s.stage}, {"instruction", s.instruction}, {"points", s.points},
                        {"time_mape_pct", 100 * s.time_mape}, {"time_bias_pct", 100 * s.time_bias},
                        {"energy_mape_pct", 100 * s.energy_mape},
                        {"time_max_ape_pct", 100 * s.time_max_ape}, {"energy_max_ape_pct", 100 * s.energy_max_ape}});
  return {{"profile", profile}, {"model", model}, {"points", points},
          {"time_mape_pct", 100 * time_mape}, {"energy_mape_pct", 100 * energy_mape},
          {"time_max_ape_pct", 100 * time_max_ape}, {"energy_max_ape_pct", 100 * energy_max_ape},
          {"series", series_j}};
}

ProfileError check_profile(const GpuModel& model, const StageProfile& profile) {
  ProfileError e;
  e.profile = profile.file;
  e.model = model.name();
  const double mem = model.max_mem_mhz();
  for (const auto& s : profile.series) {
    if (s.duplicate_of >= 0) continue;  // an exact copy of an earlier series: counted once
    const ClassCoefficients& cc = computation_of(model, s.instruction, profile.file);
    const ProfilePoint* ref = s.at(profile.max_sm_mhz);
    StageMeasurement anchor{ref->time_s, ref->energy_j, {ref->sm_mhz, mem}};
    SeriesError se;
    se.stage = s.stage;
    se.instruction = s.instruction;
    for (const auto& p : s.points) {
      if (&p == ref) continue;
      StagePrediction pr = predict_computation(model, cc, anchor, {p.sm_mhz, mem});
      add_point(se, pr.time_s, p.time_s, pr.energy_j, p.energy_j);
    }
    e.series.push_back(se);
  }
  finish(e);
  return e;
}

namespace {

const ProfileSeries& source_series(const StageProfile& source, const ProfileSeries& s, const std::string& target) {
  for (const auto& c : source.series)
    if (c.stage == s.stage && c.instruction == s.instruction) return c;
  throw InputError(source.file, "stage " + std::to_string(s.stage) + " " + s.instruction, "no series to retarget to " + target);
}

const TransformerStage& stage_of(const StageWorkload& w, int stage, const std::string& profile) {
  const auto it = w.find(stage);
  if (it == w.end())
    throw InputError(profile, "stage " + std::to_string(stage), "the stage workload does not describe this stage");
  return it->second;
}

// Every distinct series of `target` predicted at every clock from the retargeted measurement `move`
// makes of the source series (no target measurement is used).
template <typename Move>
ProfileError retarget_each(const GpuModel& from, const StageProfile& source, const GpuModel& to, const StageProfile& target,
                           Move move) {
  ProfileError e;
  e.profile = target.file;
  e.model = from.name() + " -> " + to.name();
  for (const auto& s : target.series) {
    if (s.duplicate_of >= 0) continue;
    const ProfileSeries& src = source_series(source, s, target.file);
    const ClassCoefficients& cc = computation_of(from, s.instruction, source.file);
    const ProfilePoint* ref = src.at(source.max_sm_mhz);
    const Retargeted r = move(cc, StageMeasurement{ref->time_s, ref->energy_j, {ref->sm_mhz, from.max_mem_mhz()}}, s);
    SeriesError se;
    se.stage = s.stage;
    se.instruction = s.instruction;
    for (const auto& p : s.points) {  // every clock counts: no target measurement was used
      StagePrediction pr = predict_computation(to, r.coefficients, r.anchor, {p.sm_mhz, to.max_mem_mhz()});
      add_point(se, pr.time_s, p.time_s, pr.energy_j, p.energy_j);
    }
    e.series.push_back(se);
  }
  finish(e);
  return e;
}

}  // namespace

ProfileError check_retarget(const GpuModel& from, const StageProfile& source, const GpuModel& to,
                            const StageProfile& target) {
  return retarget_each(from, source, to, target, [&](const ClassCoefficients& cc, const StageMeasurement& a, const ProfileSeries&) {
    return retarget_computation(from, cc, a, to);
  });
}

ProfileError check_retarget_by_work(const GpuModel& from, const StageProfile& source, const StageWorkload& workload,
                                    double memory_efficiency, const GpuModel& to, const StageProfile& target) {
  return retarget_each(from, source, to, target, [&](const ClassCoefficients& cc, const StageMeasurement& a, const ProfileSeries& s) {
    const double bytes = computation_work(stage_of(workload, s.stage, source.file), s.instruction).bytes;
    return retarget_computation_by_work(from, cc, a, bytes, memory_efficiency, to);
  });
}

double fit_retarget_memory_efficiency(const GpuModel& from, const std::vector<SourceProfile>& sources) {
  std::vector<MemoryTimeSample> samples;
  for (const auto& src : sources)
    for (const auto& s : src.profile->series) {
      if (s.duplicate_of >= 0) continue;
      const ClassCoefficients& cc = computation_of(from, s.instruction, src.profile->file);
      const ProfilePoint* ref = s.at(src.profile->max_sm_mhz);
      const StageMeasurement a{ref->time_s, ref->energy_j, {ref->sm_mhz, from.max_mem_mhz()}};
      samples.push_back({a.time_s - sm_bound_time_s(from, cc, a),
                         computation_work(stage_of(*src.workload, s.stage, src.profile->file), s.instruction).bytes,
                         from.specs().mem_bandwidth_gbs});
    }
  return fit_memory_efficiency(samples);
}

}  // namespace dvfs
