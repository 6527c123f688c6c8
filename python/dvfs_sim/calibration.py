"""Fitting GPU models (as `dvfs-sim calibrate`)."""
import datetime
import json
import os

from ._native import core


def calibrate(base, profile=None, recording=None, date=None, output=None):
    """Fit a GPU model from a stage-profile CSV or a recording directory (exactly one), starting from
    `base` (a model name or file). Returns {"model": model dict, "report": fit report}; writes the model
    to `output` when given. Same code as `dvfs-sim calibrate`."""
    if (profile is None) == (recording is None):
        raise TypeError("calibrate needs exactly one of profile= or recording=")
    date = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    from_profile = profile is not None
    path = os.fspath(profile if from_profile else recording)
    res = json.loads(core().calibrate_json(from_profile, path, os.fspath(base), date))
    if output is not None:
        with open(output, "w") as f:
            f.write(json.dumps(res["model"], indent=2) + "\n")
    return res
