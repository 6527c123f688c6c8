#pragma once
// `dvfs-sim validate --models`: every calibrated model against data its fit did not see.
//  - held-out stage profiles: a100-sxm4 and a40 are fit on the GPT-3 175B profile; predict BLOOM 176B
//    (and report the in-sample GPT-3 figure beside it);
//  - retargeting: the A40 profiles predicted from the A100 model, the A100 measurements and the A40's
//    datasheet model (models/calibration/a40.base.json) only;
//  - the H200 GPT-3 XL recording replayed with the calibrated h200 model and the native governor.
// Data come from the repository (traces/profiles/perseus, traces/recordings) under data_dir().
#include "sim/core/json_util.hpp"

#include <string>
#include <vector>

namespace dvfs {

// The report's sections, in the order `validate --models` prints them.
const std::vector<std::string>& model_check_sections();
// Every section; or only those named (a caller that needs the stage profiles need not replay every H200 recording).
// An unknown name is an InputError naming the sections there are.
Json validate_models();
Json validate_models(const std::vector<std::string>& sections);
std::string format_model_checks(const Json& report);

}  // namespace dvfs
