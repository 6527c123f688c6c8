"""Read-only NVML: the telemetry sampler and the device read-outs of a recording.

Only NVML *get* calls are made (and nvmlInit/nvmlShutdown): no clock, power-limit, application-clock
or any other setting is ever changed, so what is recorded is the GPU as found, its own DVFS under the
power cap included. The sampler runs in its own process (no GIL contention with the training loop):

    python3 -m dvfs_sim.record._sampler_process OUT.csv GPU_INDEX PERIOD_S [NVML_MODULE]

prints "ready" once sampling, samples until its stdin says "stop" (or closes), then writes the CSV.
"""
import csv
import importlib
import os
import time

from dvfs_sim.record._child_process import ChildProcess

TELEMETRY_COLUMNS = ["t_ns", "energy_mj", "power_mw", "power_instant_mw", "sm_mhz", "mem_mhz", "util_gpu",
                     "util_mem", "temp_c", "throttle_reasons"]


class NvmlUnavailable(RuntimeError):
    """No NVML library, no NVIDIA GPU, or no GPU of the requested index."""


def load_nvml(module="pynvml"):
    """Imports the NVML bindings (nvidia-ml-py) and initialises NVML, or raises NvmlUnavailable."""
    try:
        nv = importlib.import_module(module)
    except ImportError:
        raise NvmlUnavailable(f"the NVML bindings ({module}, Debian/PyPI package nvidia-ml-py) are not installed: "
                              "recording needs an NVIDIA GPU and its driver's NVML") from None
    try:
        nv.nvmlInit()
    except Exception as e:  # NVMLError_LibraryNotFound, NVMLError_DriverNotLoaded, ...
        raise NvmlUnavailable(f"NVML cannot start ({e}): no NVIDIA GPU or driver on this machine") from None
    return nv


def open_device(nv, index):
    """The NVML handle of GPU `index`, or NvmlUnavailable naming the GPUs there are."""
    count = nv.nvmlDeviceGetCount()
    if count == 0:
        raise NvmlUnavailable("NVML sees no NVIDIA GPU on this machine")
    if not 0 <= index < count:
        raise NvmlUnavailable(f"--gpu {index}: expected an NVML GPU index in 0..{count - 1}")
    return nv.nvmlDeviceGetHandleByIndex(index)


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


def device_info(nv, h, torch=None, cuda_index=None):
    """The `device` object of run.json (docs/recording-format.md): NVML read-outs, plus the SM count,
    memory and versions from PyTorch when it is there."""
    def safe(fn, *a):
        try:
            return fn(*a)
        except nv.NVMLError:
            return None
    def optional(getter):  # a read-only getter older bindings may lack: which card this is
        fn = getattr(nv, getter, None)
        return safe(fn, h) if fn else None
    mems = safe(nv.nvmlDeviceGetSupportedMemoryClocks, h) or []
    info = {
        "name": _text(nv.nvmlDeviceGetName(h)),
        "uuid": _text(optional("nvmlDeviceGetUUID")),
        "serial": _text(optional("nvmlDeviceGetSerial")),
        "board_part_number": _text(optional("nvmlDeviceGetBoardPartNumber")),
        "vbios": _text(optional("nvmlDeviceGetVbiosVersion")),
        "pci_bus_id": _text(getattr(optional("nvmlDeviceGetPciInfo"), "busId", None)),
        "driver": _text(nv.nvmlSystemGetDriverVersion()),
        "power_limit_mw": safe(nv.nvmlDeviceGetPowerManagementLimit, h),
        "power_limit_default_mw": safe(nv.nvmlDeviceGetPowerManagementDefaultLimit, h),
        "power_limit_constraints_mw": list(safe(nv.nvmlDeviceGetPowerManagementLimitConstraints, h) or []),
        "max_sm_mhz": safe(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM),
        "max_mem_mhz": safe(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM),
        "app_sm_mhz": safe(nv.nvmlDeviceGetApplicationsClock, h, nv.NVML_CLOCK_SM),
        "default_app_sm_mhz": safe(nv.nvmlDeviceGetDefaultApplicationsClock, h, nv.NVML_CLOCK_SM),
        "supported_mem_mhz": list(mems),
        "supported_sm_mhz": {str(m): list(safe(nv.nvmlDeviceGetSupportedGraphicsClocks, h, m) or []) for m in mems},
    }
    if torch is not None and cuda_index is not None:
        props = torch.cuda.get_device_properties(cuda_index)
        info.update({"sm_count": props.multi_processor_count, "total_mem": props.total_memory,
                     "torch": torch.__version__, "cuda": torch.version.cuda})
    else:
        mem = safe(nv.nvmlDeviceGetMemoryInfo, h)
        info["total_mem"] = getattr(mem, "total", None)
    return info


def sample_rows(nv, h, period_s, stop):
    """NVML samples every period_s until `stop` (a threading.Event) is set: a list of tuples in
    TELEMETRY_COLUMNS order."""
    instant_id = getattr(nv, "NVML_FI_DEV_POWER_INSTANT", None)
    throttle = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
    rows = []
    while not stop.is_set():
        t = time.time_ns()
        inst = 0
        if instant_id is not None:
            try:
                fv = nv.nvmlDeviceGetFieldValues(h, [instant_id])[0]
                inst = fv.value.uiVal if fv.nvmlReturn == 0 else 0
            except nv.NVMLError:
                inst = 0
        util = nv.nvmlDeviceGetUtilizationRates(h)
        rows.append((t, nv.nvmlDeviceGetTotalEnergyConsumption(h), nv.nvmlDeviceGetPowerUsage(h), inst,
                     nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM), nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
                     util.gpu, util.memory, nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU), throttle(h)))
        time.sleep(max(0.0, period_s - (time.time_ns() - t) * 1e-9))
    return rows


def write_telemetry(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(TELEMETRY_COLUMNS)
        w.writerows(rows)


class Sampler:
    """The sampler process, driven from the recording process. start() returns once it samples."""

    def __init__(self, path, index, period_s, nvml_module="pynvml"):
        self.path, self.index, self.period_s, self.nvml_module = path, index, period_s, nvml_module
        self.proc = None

    def start(self, timeout_s=60):
        self.proc = ChildProcess("dvfs_sim.record._sampler_process", [self.path, self.index, repr(self.period_s), self.nvml_module])
        line = self.proc.start(timeout_s)
        if line is None or line.strip() != "ready":
            raise NvmlUnavailable(f"the NVML sampler process did not start within {timeout_s} s "
                                  f"(said {line.strip() if line else 'nothing'!r})")

    def stop(self, timeout_s=120):
        if self.proc is None:
            return
        rc = self.proc.stop(timeout_s)
        self.proc = None
        if rc != 0 or not os.path.exists(self.path):
            raise NvmlUnavailable(f"the NVML sampler process failed (exit code {rc}); no {os.path.basename(self.path)} written")
