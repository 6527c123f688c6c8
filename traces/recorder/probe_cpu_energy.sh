#!/bin/bash
# Issue 20: which CPU energy sources does this machine expose? Read-only: lists and reads sysfs / devfs counters
# (RAPL powercap, perf's power PMU, hwmon power and energy channels, ACPI power meter, IPMI, MSR) twice, 1 s apart,
# and prints the rate each implies. Nothing is written, loaded or changed.
echo "== $(date -u +%FT%TZ) $(hostname)"
echo "virt: $(systemd-detect-virt 2>&1) hypervisor-flag: $(grep -c hypervisor /proc/cpuinfo) cpus: $(nproc)"
echo "dmi: $(cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name 2>&1 | tr '\n' ' ')"
grep -m1 "model name" /proc/cpuinfo
echo "id: $(id)"
nvidia-smi --query-gpu=name,power.draw,power.limit --format=csv,noheader 2>&1
read_all() {  # prints path=value for every counter file given
  for f in "$@"; do [ -r "$f" ] && echo "$f=$(cat "$f" 2>&1)" || echo "$f unreadable"; done
}
counters() {
  ls /sys/class/powercap/*/energy_uj 2>/dev/null
  ls /sys/class/hwmon/*/energy*_input /sys/class/hwmon/*/power*_input /sys/class/hwmon/*/power*_average 2>/dev/null
  ls /sys/class/hwmon/*/device/energy*_input /sys/class/hwmon/*/device/power*_average 2>/dev/null
}
echo "== powercap"; ls -la /sys/class/powercap/ 2>&1
for z in /sys/class/powercap/*; do [ -e "$z/name" ] && echo "$z name=$(cat $z/name)"; done
echo "== perf power PMU"; ls /sys/bus/event_source/devices/ 2>&1 | tr '\n' ' '; echo
ls /sys/bus/event_source/devices/power/events/ 2>&1
echo "perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>&1)"
command -v perf && timeout 5 perf stat -a -e power/energy-pkg/,power/energy-ram/ sleep 1 2>&1 | tail -8
echo "== hwmon"; for h in /sys/class/hwmon/hwmon*; do echo "$h name=$(cat $h/name 2>&1): $(ls $h | tr '\n' ' ')"; done
echo "== acpi power meter"; ls /sys/bus/acpi/drivers/power_meter/ 2>&1
echo "== ipmi / msr devices"; ls -la /dev/ipmi* /dev/ipmi/ /dev/cpu/0/msr 2>&1
command -v ipmitool && timeout 5 ipmitool dcmi power reading 2>&1 | head
if [ -r /dev/cpu/0/msr ]; then
  python3 - <<'PY'
import os, struct, time
def rd(reg):
    fd = os.open("/dev/cpu/0/msr", os.O_RDONLY)
    try: return struct.unpack("<Q", os.pread(fd, 8, reg))[0]
    finally: os.close(fd)
try:
    unit = rd(0x606); e0 = rd(0x611); time.sleep(1); e1 = rd(0x611)
    eu = 0.5 ** ((unit >> 8) & 0x1f)
    print(f"MSR_PKG_ENERGY_STATUS: {((e1 - e0) & 0xffffffff) * eu:.2f} W over 1 s (unit {eu:g} J)")
except OSError as e: print("MSR read failed:", e)
PY
fi
echo "== counters read twice, 1 s apart"
files=$(counters); read_all $files > /tmp/c0; sleep 1; read_all $files > /tmp/c1
paste -d' ' /tmp/c0 /tmp/c1 | head -40
echo "== lsmod power/rapl/msr"; (lsmod 2>/dev/null || cat /proc/modules) | grep -i -E "rapl|msr|power|ipmi|hwmon|energy" | head
