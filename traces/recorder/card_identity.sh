# Sourced by the device-call recorders: identity prints the card's name, serial, UUID, bus, VBIOS, driver, power
# limit, top clocks, temperature and power draw with the UTC time (nvidia-smi queries only: nothing is changed).
identity() {
  echo "== $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,serial,uuid,pci.bus_id,vbios_version,driver_version,power.limit,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv 2>&1
}
