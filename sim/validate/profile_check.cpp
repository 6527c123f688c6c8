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
                        {"time_mape_pct", 100 * s.time_mape}, {"energy_mape_pct", 100 * s.energy_mape},
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

ProfileError check_retarget(const GpuModel& from, const StageProfile& source, const GpuModel& to,
                            const StageProfile& target) {
  ProfileError e;
  e.profile = target.file;
  e.model = from.name() + " -> " + to.name();
  for (const auto& s : target.series) {
    if (s.duplicate_of >= 0) continue;
    const ProfileSeries* src = nullptr;
    for (const auto& c : source.series)
      if (c.stage == s.stage && c.instruction == s.instruction) src = &c;
    if (!src)
      throw InputError(source.file, "stage " + std::to_string(s.stage) + " " + s.instruction,
                       "no series to retarget to " + target.file);
    const ClassCoefficients& cc = computation_of(from, s.instruction, source.file);
    const ProfilePoint* ref = src->at(source.max_sm_mhz);
    Retargeted r = retarget_computation(from, cc, {ref->time_s, ref->energy_j, {ref->sm_mhz, from.max_mem_mhz()}}, to);
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

}  // namespace dvfs
