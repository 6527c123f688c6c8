# Sourced by the device-call recorders: identity prints the card's name, serial, UUID, bus, VBIOS, driver, power
# limit, top clocks, temperature and power draw with the UTC time (nvidia-smi queries only: nothing is changed).
identity() {
  echo "== $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,serial,uuid,pci.bus_id,vbios_version,driver_version,power.limit,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw --format=csv 2>&1
}

# start_recording SUFFIX OUT_DIR (S: the recorder folder): CARD (h100, or h200 when the card is one), NAME
# (<card>-<suffix>), R (a fresh folder named NAME) and R/env.txt (the card, PyTorch, CUDA and NCCL); creates OUT_DIR and
# exports the recorder's Python settings.
start_recording() {
  CARD=h100
  nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && CARD=h200
  NAME=$CARD-$1
  R=$(mktemp -d)/$NAME
  mkdir -p "$R" "$2"
  export PYTHONUNBUFFERED=1 PYTHONPATH=$S/../../python
  { identity; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version())"; } > "$R/env.txt" 2>&1
}
