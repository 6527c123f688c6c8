#!/usr/bin/env bash
# README command 2: the whole test suite (C++ Catch2 tests, CLI contract and Python module via pytest),
# through CTest, which ends with its own pass/fail line.
set -euo pipefail
cd "$(dirname "$0")"
./setup.sh --build-only
ctest --test-dir build --output-on-failure -j"$(nproc)"
