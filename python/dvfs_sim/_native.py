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
