"""The host counter sampler process (started by host.HostSampler; see host.py). Reads /proc and sysfs only."""
import sys

from dvfs_sim.record.host import main

if __name__ == "__main__":
    main(sys.argv[1:])
