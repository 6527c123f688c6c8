"""Issue 20: read the perf "power" PMU's energy counters (RAPL through perf_event_open, read-only) where the
kernel exposes them but no powercap sysfs: each event read over an idle second and over a second of all-core
load. Prints joules and watts; changes nothing (perf_event_open only counts)."""
import ctypes, os, struct, sys, time, multiprocessing

PMU = "/sys/bus/event_source/devices/power"
libc = ctypes.CDLL(None, use_errno=True)
NR_PERF_EVENT_OPEN = 298  # x86_64


def events():
    out = []
    d = os.path.join(PMU, "events")
    for name in sorted(os.listdir(d)):
        if "." in name:
            continue
        cfg = open(os.path.join(d, name)).read().strip()
        config = int(cfg.split("event=")[1].split(",")[0], 0)
        scale = float(open(os.path.join(d, name + ".scale")).read()) if os.path.exists(os.path.join(d, name + ".scale")) else 1.0
        out.append((name, config, scale))
    return out


def open_counter(pmu_type, config, cpu=0):
    attr = bytearray(128)
    struct.pack_into("IIQ", attr, 0, pmu_type, 128, config)
    buf = ctypes.create_string_buffer(bytes(attr), 128)
    fd = libc.syscall(NR_PERF_EVENT_OPEN, buf, -1, cpu, -1, 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return fd


def read(fd):
    return struct.unpack("Q", os.read(fd, 8))[0]


def burn(t_end):
    x = 0
    while time.time() < t_end:
        x += 1


def main():
    pmu_type = int(open(os.path.join(PMU, "type")).read())
    print("power PMU type", pmu_type, "cpumask", open(os.path.join(PMU, "cpumask")).read().strip() if os.path.exists(os.path.join(PMU, "cpumask")) else "?")
    fds = []
    for name, config, scale in events():
        try:
            fds.append((name, scale, open_counter(pmu_type, config)))
        except OSError as e:
            print(f"{name}: perf_event_open failed: {e}")
    if not fds:
        return
    for label, load in (("idle", False), ("all-core load", True), ("idle again", False)):
        v0 = [read(fd) for _, _, fd in fds]
        t0 = time.time()
        if load:
            ps = [multiprocessing.Process(target=burn, args=(t0 + 2.0,)) for _ in range(os.cpu_count())]
            [p.start() for p in ps]
            [p.join() for p in ps]
        else:
            time.sleep(2.0)
        dt = time.time() - t0
        v1 = [read(fd) for _, _, fd in fds]
        for (name, scale, _), a, b in zip(fds, v0, v1):
            print(f"{label:14s} {name}: raw {b - a} -> {(b - a) * scale:.3f} J over {dt:.2f} s = {(b - a) * scale / dt:.1f} W")


if __name__ == "__main__":
    main()
