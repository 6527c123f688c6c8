"""The NVML sampler process (started by nvml.Sampler; see nvml.py). Read-only NVML calls only."""
import sys

from dvfs_sim.record._child_process import stop_on_input
from dvfs_sim.record.nvml import NvmlUnavailable, load_nvml, open_device, sample_rows, write_telemetry


def main(argv):
    path, index, period_s = argv[0], int(argv[1]), float(argv[2])
    nv = load_nvml(argv[3] if len(argv) > 3 else "pynvml")
    h = open_device(nv, index)
    stop = stop_on_input()
    print("ready", flush=True)
    rows = sample_rows(nv, h, period_s, stop)
    write_telemetry(path, rows)
    nv.nvmlShutdown()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except NvmlUnavailable as e:
        print(f"not ready: {e}", flush=True)
        sys.exit(2)
