"""Fitting GPU models (as `dvfs-sim calibrate`)."""
import datetime
import json
import os

from ._native import InputTypeError, core, path_arg, text_arg


def calibrate(base, profile=None, recording=None, date=None, output=None):
    """Fit a GPU model from a stage-profile CSV or a recording directory (exactly one), starting from
    `base` (a model name or file). Returns {"model": model dict, "report": fit report}; writes the model
    to `output` when given. Same code as `dvfs-sim calibrate`."""
    if (profile is None) == (recording is None):
        given = "both" if profile is not None else "neither"
        raise InputTypeError(f"calibrate: expected exactly one of profile= (a stage-profile CSV) or recording= (a recording "
                             f"directory), got {given} (the first argument is the base model)")
    date = text_arg("date", date) if date is not None else datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    from_profile = profile is not None
    path = path_arg("profile" if from_profile else "recording", profile if from_profile else recording)
    if output is not None:
        output = path_arg("output", output)
    res = json.loads(core().calibrate_json(from_profile, path, path_arg("base", base), date))
    if output is not None:
        with open(output, "w") as f:
            f.write(json.dumps(res["model"], indent=2) + "\n")
    return res
