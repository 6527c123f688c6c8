"""The compiled core (`_core`, built by CMake into build/python/dvfs_sim/), loaded once.

The pure-Python parts (the recorder above all) must work where the core was never built, e.g. on a
GPU machine that only records: they import nothing from here. Everything that simulates calls
`core()`, which explains how to build the core when it is missing.
"""
import glob
import os

try:
    from . import _core as _loaded
    _load_error = None
    _loaded_in_pid = os.getpid()  # the process that loaded the core (a sweep worker inherits its fork server's)
except ImportError as e:  # not built, or built for another interpreter
    _loaded = None
    _here = os.path.dirname(os.path.abspath(__file__))
    _load_error = e if glob.glob(os.path.join(_here, "_core*.so")) else f"no _core extension in {_here}"


def core():
    if _loaded is None:
        raise ImportError(f"dvfs_sim's C++ core is not available ({_load_error}): build it with ./setup.sh and put "
                          "build/python on sys.path (Debian's /usr/bin/python3)")
    return _loaded


if _loaded is not None:
    InputError = _loaded.InputError
else:
    class InputError(ValueError):
        """Bad input: the message names the file, the field and what was expected."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type: bad input (an InputError, as every other) and a TypeError, as Python expects."""


def path_arg(name, value):
    """`value` as a path string, or an InputTypeError naming the argument (os.fspath's own error named none)."""
    if isinstance(value, (str, bytes, os.PathLike)):
        p = os.fspath(value)
        return p.decode() if isinstance(p, bytes) else p
    raise InputTypeError(f"{name}: expected a path (str or os.PathLike), got {type(value).__name__}")


def text_arg(name, value):
    if isinstance(value, str):
        return value
    raise InputTypeError(f"{name}: expected a string, got {type(value).__name__}")


def int_arg(name, value, lo, hi):
    """An integer in [lo, hi] (bool refused; a whole float accepted), else an InputError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputTypeError(f"{name}: expected an integer, got {type(value).__name__}")
    if isinstance(value, float) and not value.is_integer():
        raise InputError(f"{name}: expected an integer, got {value}")
    if not lo <= value <= hi:
        raise InputError(f"{name}: expected an integer from {lo} to {hi}, got {value}")
    return int(value)
