"""Scenarios as plain dicts: read a file with its relative paths resolved, change keys by dotted name.

    base = dvfs_sim.load_scenario("scenarios/default.json")    # paths now absolute
    point = dvfs_sim.with_changes(base, {"policy.budget_pct": 1, "switch_latency.sm.mean_s": 1e-3})
"""
import copy
import json
import os

from ._native import InputError, core, InputTypeError

# Scenario keys holding a path, relative to the scenario file (see README, "Scenarios").
_PATH_KEYS = ("trace", "gpu", "trace_gpu")


def _is_model_path(value):
    return isinstance(value, str) and ("/" in value or value.endswith(".json"))


def default_scenario_path():
    return core().default_scenario_path()


def load_scenario(path=None):
    """Reads a scenario file (None: the default scenario) into a dict whose relative paths (trace, model
    files, output.dir) are made absolute against the file's directory, so the dict runs from anywhere."""
    text, path, base_dir = as_scenario(os.fspath(path) if path is not None else None)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: malformed JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object (a scenario), got {type(doc).__name__}")
    return resolve_paths(doc, base_dir)


def resolve_paths(doc, base_dir):
    """A copy of a scenario dict with its relative paths made absolute against base_dir."""
    doc = copy.deepcopy(doc)
    for key in _PATH_KEYS:
        v = doc.get(key)
        if isinstance(v, str) and v and (key == "trace" or _is_model_path(v)) and not os.path.isabs(v):
            doc[key] = os.path.normpath(os.path.join(base_dir, v))
    out = doc.get("output")
    if isinstance(out, dict) and isinstance(out.get("dir"), str) and not os.path.isabs(out["dir"]):
        out["dir"] = os.path.normpath(os.path.join(base_dir, out["dir"]))
    return doc


def set_key(doc, dotted, value):
    """Sets `a.b.c` in a scenario dict in place, creating objects on the way. A policy given by name
    becomes {"name": ...} when a policy key is set; None removes the key (the default applies)."""
    if not isinstance(doc, dict):
        raise InputTypeError(f"set_key: doc must be a scenario dict, not {type(doc).__name__}")
    if not isinstance(dotted, str):
        raise InputTypeError(f"set_key: the key must be a dotted string such as 'policy.budget_pct', not {type(dotted).__name__}")
    parts = dotted.split(".")
    if any(p == "" for p in parts):
        raise InputError(f"{dotted!r}: expected a dotted key such as 'policy.budget_pct' (no empty part)")
    node = doc
    for i, part in enumerate(parts[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif isinstance(child, str) and part == "policy" and i == 0:
            child = node[part] = {"name": child}
        elif not isinstance(child, dict):
            raise InputError(f"{dotted}: cannot set a key inside {'.'.join(parts[:i + 1])}, which is "
                             f"{type(child).__name__} {child!r}, not an object")
        node = child
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value
    return doc


def with_changes(base, changes):
    """A copy of `base` (a scenario dict, or a path read with load_scenario) with every dotted key of `changes` set
    (see set_key)."""
    if base is None or isinstance(base, (str, os.PathLike)):
        base = load_scenario(base)
    if not isinstance(base, dict):
        raise InputTypeError(f"with_changes: base must be a scenario dict, a path or None, not {type(base).__name__}")
    if not hasattr(changes, "items"):
        raise InputTypeError(f"with_changes: changes must be a dict of dotted keys, not {type(changes).__name__}")
    doc = copy.deepcopy(base)
    for k, v in changes.items():
        set_key(doc, k, v)
    return doc


def as_scenario(scenario):
    """(JSON text, name for errors, base directory for relative paths) of a dict, a path or None."""
    if scenario is None:
        scenario = default_scenario_path()
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        if os.path.isfile(path) or os.path.isdir(path):  # a trace, a recording folder, a binary file: named (the CLI's check)
            core().check_scenario_file(os.fsencode(path))  # bytes: a file name that is not UTF-8 passes as it is
        try:
            with open(path) as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot open scenario file ({e.strerror})") from None
        return text, path, os.path.dirname(os.path.abspath(path))
    if isinstance(scenario, dict):
        return json.dumps(scenario), "<scenario dict>", os.getcwd()
    raise InputTypeError(f"scenario must be a dict, a path or None, not {type(scenario).__name__}")
