"""A stand-in for NVML (nvidia-ml-py) on machines without an NVIDIA GPU, for the recorder's tests.

It reports one H200-like GPU at 1980/3201 MHz drawing 500 W, with an energy counter that advances every
100 ms (as on the real card) and agrees between processes (it is a function of the wall clock).
FAKE_NVML_GPUS sets the GPU count. Any setter (nvmlDeviceSet*, nvmlDeviceReset*, ...) is recorded in
the file FAKE_NVML_SETTER_LOG and raises: the recorder must never call one.
"""
import os
import time
from types import SimpleNamespace

NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2
NVML_TEMPERATURE_GPU = 0
_T0_NS = 1_700_000_000 * 10**9
_WATTS = 500


class NVMLError(Exception):
    pass


def nvmlInit():
    pass


def nvmlShutdown():
    pass


def nvmlDeviceGetCount():
    return int(os.environ.get("FAKE_NVML_GPUS", "1"))


def nvmlDeviceGetHandleByIndex(i):
    if not 0 <= i < nvmlDeviceGetCount():
        raise NVMLError("Invalid Argument")
    return ("gpu", i)


def nvmlDeviceGetTotalEnergyConsumption(h):
    t = time.time_ns() // 100_000_000 * 100_000_000  # updates every 100 ms
    return (t - _T0_NS) * _WATTS // 1_000_000        # mJ


def nvmlDeviceGetPowerUsage(h):
    return _WATTS * 1000


def nvmlDeviceGetClockInfo(h, which):
    return 1980 if which == NVML_CLOCK_SM else 3201


def nvmlDeviceGetUtilizationRates(h):
    return SimpleNamespace(gpu=100, memory=40)


def nvmlDeviceGetTemperature(h, sensor):
    return 45


def nvmlDeviceGetCurrentClocksEventReasons(h):
    return 0


def nvmlDeviceGetName(h):
    return b"NVIDIA H200 (fake)"


def nvmlDeviceGetUUID(h):
    return "GPU-00000000-fake-0000-0000-000000000000"


def nvmlDeviceGetSerial(h):
    return b"1650000000000"


def nvmlDeviceGetVbiosVersion(h):
    raise NVMLError("Not Supported")


def nvmlSystemGetDriverVersion():
    return "0.0-fake"


def nvmlDeviceGetPowerManagementLimit(h):
    return 700000


def nvmlDeviceGetPowerManagementDefaultLimit(h):
    return 700000


def nvmlDeviceGetPowerManagementLimitConstraints(h):
    return (200000, 700000)


def nvmlDeviceGetMaxClockInfo(h, which):
    return nvmlDeviceGetClockInfo(h, which)


def nvmlDeviceGetApplicationsClock(h, which):
    return nvmlDeviceGetClockInfo(h, which)


def nvmlDeviceGetDefaultApplicationsClock(h, which):
    return nvmlDeviceGetClockInfo(h, which)


def nvmlDeviceGetSupportedMemoryClocks(h):
    return [3201, 2201]


def nvmlDeviceGetSupportedGraphicsClocks(h, mem):
    return list(range(1980, 344, -15))


def nvmlDeviceGetMemoryInfo(h):
    return SimpleNamespace(total=141 * 2**30, used=0, free=141 * 2**30)


_SETTERS = ("nvmlDeviceSet", "nvmlDeviceReset", "nvmlDeviceClear", "nvmlSet", "nvmlDeviceModify")


def __getattr__(name):
    if name.startswith(_SETTERS):
        log = os.environ.get("FAKE_NVML_SETTER_LOG")
        if log:
            with open(log, "a") as f:
                f.write(name + "\n")
        raise AssertionError(f"the recorder called the NVML setter {name}")
    raise AttributeError(name)
