"""GPU models from Python: the C++ model objects with their clock tables and pure time/power
functions (models/src/gpu_model.hpp). Nothing is re-implemented here; this only adapts arguments.

    h200 = dvfs_sim.model("h200")
    h200.kernel_time_s("gemm", 1410, 3201)          # a kernel taking 1 s at the default clocks
    h200.kernel_time_s({"class": "gemm", "duration_s": 2e-3, "recorded_sm_mhz": 1755}, 1410, 3201)
    h200.kernel_power_w("attention", 1410, 3201)
"""
import functools
import json
import os

from ._native import InputError, core, InputTypeError
from .scenario import _is_model_path

_KERNEL_KEYS = ("class", "duration_s", "recorded_sm_mhz", "recorded_mem_mhz", "sm_fill", "name")


def available_models():
    return core().available_models()


def kernel_classes():
    return core().kernel_classes()


def _kernel_fields(kernel, who):
    """A kernel class name or a dict of _KERNEL_KEYS -> (class, duration_s, rec_sm, rec_mem, sm_fill, name)."""
    if isinstance(kernel, str):
        return kernel, 1.0, 0.0, 0.0, 1.0, ""
    if not isinstance(kernel, dict):
        raise InputError(f"{who}: kernel: expected a kernel class name or a dict with keys {', '.join(_KERNEL_KEYS)}, "
                         f"got {type(kernel).__name__}")
    unknown = sorted(set(kernel) - set(_KERNEL_KEYS))
    if unknown:
        raise InputError(f"{who}: kernel.{unknown[0]}: unknown key (expected any of {', '.join(_KERNEL_KEYS)})")
    if "class" not in kernel:
        raise InputError(f"{who}: kernel.class: missing required key (a kernel class, one of {', '.join(kernel_classes())})")
    return (kernel["class"], float(kernel.get("duration_s", 1.0)), float(kernel.get("recorded_sm_mhz") or 0.0),
            float(kernel.get("recorded_mem_mhz") or 0.0), float(kernel.get("sm_fill", 1.0)), kernel.get("name") or "")


class GpuModel:
    """A GPU model file. A kernel is a class name (a kernel of that class taking 1 s at the model's default
    clocks, every SM busy) or a dict {class, duration_s (recorded duration, default 1), recorded_sm_mhz and
    recorded_mem_mhz (the clocks it was recorded at; default: the model's default clocks), sm_fill (share of
    the SMs it occupies, (0, 1], default 1), name (a kernel name: uses its fitted time share when the model
    has one)}. Unsupported clocks raise InputError naming the argument."""

    def __init__(self, native):
        self._m = native

    name = property(lambda self: self._m.name)
    display_name = property(lambda self: self._m.display_name)
    status = property(lambda self: self._m.status)
    source_file = property(lambda self: self._m.source_file)
    derived_from = property(lambda self: self._m.derived_from)
    sm_count = property(lambda self: self._m.sm_count)
    sm_clocks_mhz = property(lambda self: self._m.sm_clocks_mhz, doc="supported SM clocks, ascending")
    mem_clocks_mhz = property(lambda self: self._m.mem_clocks_mhz, doc="supported memory clocks, ascending")
    power_cap_w = property(lambda self: self._m.power_cap_w)
    idle_w = property(lambda self: self._m.idle_w, doc="power at idle (W); the P_blocking of effective-energy accounting")
    max_clocks = property(lambda self: self._m.max_clocks, doc="(sm_mhz, mem_mhz)")
    default_clocks = property(lambda self: self._m.default_clocks, doc="(sm_mhz, mem_mhz)")

    @functools.cached_property
    def provenance(self):
        """Where each number of the model comes from (measurement, fit, datasheet, estimate)."""
        return json.loads(self._m.provenance_json)

    @functools.cached_property
    def switch_latency(self):
        return json.loads(self._m.switch_latency_json)

    def coefficients(self, kernel_class):
        """The class's time shares (time_sm, time_mem), dynamic power and SM-clock power share."""
        return self._m.coefficients(kernel_class)

    def idle_power_w(self, sm_mhz=None):
        """Idle power at an SM clock (default: the highest)."""
        return self._m.idle_power_w(self.max_clocks[0] if sm_mhz is None else sm_mhz)

    def kernel_time_s(self, kernel, sm_mhz, mem_mhz=None):
        """Modelled duration (s) of `kernel` at (sm_mhz, mem_mhz); mem_mhz defaults to the highest."""
        cls, d, rs, rm, _, name = _kernel_fields(kernel, f'model("{self.name}").kernel_time_s')
        return self._m.kernel_time_s(cls, d, rs, rm, name, sm_mhz, self.max_clocks[1] if mem_mhz is None else mem_mhz)

    def kernel_power_w(self, kernel, sm_mhz, mem_mhz=None):
        """Modelled power (W, idle included) while `kernel` runs at (sm_mhz, mem_mhz)."""
        cls, _, _, _, fill, _ = _kernel_fields(kernel, f'model("{self.name}").kernel_power_w')
        return self._m.kernel_power_w(cls, fill, sm_mhz, self.max_clocks[1] if mem_mhz is None else mem_mhz)

    @property
    def computations(self):
        """Names of the whole computations fitted from stage profiles (e.g. forward, backward)."""
        return self._m.computations

    def predict_computation(self, computation, anchor, sm_mhz, mem_mhz=None):
        """Time and energy of a whole computation (a pipeline stage's forward or backward pass) at (sm_mhz,
        mem_mhz), from one measurement `anchor` = {time_s, energy_j, sm_mhz, mem_mhz (default: highest)}:
        how stage profiles are predicted (models/src/stage_model.hpp). Returns {time_s, energy_j, power_w,
        effective_sm_mhz (after the power cap)}."""
        mem = self.max_clocks[1] if mem_mhz is None else mem_mhz
        return self._m.predict_computation(computation, float(anchor["time_s"]), float(anchor["energy_j"]),
                                           float(anchor["sm_mhz"]), float(anchor.get("mem_mhz") or self.max_clocks[1]),
                                           sm_mhz, mem)

    def kernel_energy_j(self, kernel, sm_mhz, mem_mhz=None):
        return self.kernel_time_s(kernel, sm_mhz, mem_mhz) * self.kernel_power_w(kernel, sm_mhz, mem_mhz)

    def __repr__(self):
        return f"<GpuModel {self.name} ({self.display_name}, {self.status})>"


def model(name_or_path):
    """A GPU model by name (`dvfs-sim models` lists them) or model file path."""
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise InputTypeError(f"model() takes a model name or file path, not {type(name_or_path).__name__}")
    p = os.fspath(name_or_path)
    if _is_model_path(p):
        p = os.path.abspath(p)
    return GpuModel(core().load_model(p))
