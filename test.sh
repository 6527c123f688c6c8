#!/usr/bin/env bash
# README command 2: the whole test suite (C++ Catch2 tests, CLI contract and Python module via pytest),
# through CTest, which ends with its own pass/fail line; in CI also the sanitizer and fuzz step.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh --build-only
ctest --test-dir build --output-on-failure -j"$(nproc)"
# In CI (or with DVFS_SANITIZERS=1): the unit tests under ASan + UBSan and a short run of every fuzz
# target (fuzz/ci.sh, fuzz/README.md); needs clang and libclang-rt-14-dev (setup.sh installs them).
if [ "${CI:-}" = "true" ] || [ "${DVFS_SANITIZERS:-0}" = "1" ]; then
  fuzz/ci.sh
fi
