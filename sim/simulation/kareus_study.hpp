#pragma once
// Perseus vs Kareus vs both off on one synthesised job (issue 19's study): the frontier of per-partition clocks
// alone (Perseus, sim/critical_path), the envelope with Kareus's knobs (sim/kareus), and every computation at the
// top clock without overlap (both off). Energy at iso-time (the fastest iteration, which both-off runs at) and time
// at iso-energy (the energy Perseus needs for that iteration), and the largest gaps along Perseus's frontier.
// Model outputs, all of them: energies per pipeline GPU set (one replica, each TP group folded into one actor).
#include "sim/core/json_util.hpp"
#include "sim/synthetic_run.hpp"

namespace dvfs {

Json kareus_study(const SyntheticRun& req);
std::string format_kareus_study(const Json& study);

}  // namespace dvfs
