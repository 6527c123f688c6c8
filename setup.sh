#!/usr/bin/env bash
# README command 1: install what is missing (Debian packages only), build, and run the default
# scenario. `setup.sh --build-only` stops after the build (the test command uses that).
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(cmake g++ make pkg-config zlib1g-dev libsqlite3-dev libsimgrid-dev libboost-dev libboost-graph-dev
          nlohmann-json3-dev libsimdjson-dev libisal-dev libcli11-dev pybind11-dev catch2 python3 python3-dev python3-numpy python3-pandas python3-pytest
          python3-matplotlib jupyter-nbconvert python3-ipykernel python3-tqdm python3-distributed python3-torch
          libprotobuf-dev protobuf-compiler python3-protobuf  # Chakra traces (traces/src/chakra/; the test fixture writer)
          chromium  # chromium: the report test renders the HTML page headless (tests/cli/test_report.py)
          clang libclang-rt-14-dev)  # clang + libFuzzer/ASan runtimes: the sanitizer and fuzz step (fuzz/ci.sh)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

WERROR=OFF
[ "${CI:-}" = "true" ] && WERROR=ON
# CI builds from scratch: a unity build (batches of files per translation unit) halves that on two cores. Local
# builds stay file by file (an edit recompiles one file, not its batch); DVFS_UNITY_BUILD=ON|OFF overrides.
UNITY=OFF
[ "${CI:-}" = "true" ] && UNITY=ON
UNITY=${DVFS_UNITY_BUILD:-$UNITY}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDVFS_WERROR="$WERROR" -DCMAKE_UNITY_BUILD="$UNITY" \
      -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build build -j"$(nproc)"

[ "${1:-}" = "--build-only" ] && exit 0
./build/dvfs-sim run
