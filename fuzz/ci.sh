#!/usr/bin/env bash
# The sanitizer and fuzz step of the test suite (./test.sh runs it in CI, or when DVFS_SANITIZERS=1):
#  1. a clang build with ASan + UBSan of the unit tests (dvfs_tests) and the fuzz targets, in build-fuzz/;
#  2. the unit tests under CTest (label "unit") and every fuzz target over its committed seeds (label
#     "fuzz"), in that build;
#  3. a short fuzz run per target (FUZZ_CI_SECONDS, default 20 s each: five targets two at a time, ~60 s), failing on any finding not in
#     fuzz/findings/KNOWN.
# SimGrid (Debian's prebuilt library) is not instrumented: ASan sees only our code. Its actors run on
# SimGrid's own stacks, which ASan does not know about (see fuzz/README.md). LeakSanitizer stays on: the
# sanitized unit tests report no leak, SimGrid's included (set ASAN_OPTIONS=detect_leaks=0 if one appears
# in an uninstrumented library).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
start=$(date +%s)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# A unity build (CMake batches of source files into one translation unit each): about half the compile time of the
# file-by-file build on two cores (617 -> ~310 s); CMakeLists.txt lists the files that must compile alone.
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DDVFS_FUZZ=ON \
      -DDVFS_BUILD_PYTHON=OFF -DCMAKE_UNITY_BUILD=ON "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target dvfs_tests fuzz_kineto_importer fuzz_scenario_file fuzz_telemetry fuzz_plan_file fuzz_chakra_importer
built=$(date +%s)
# The slowest unit tests are left out (fuzz/sanitizer_skip.txt: name prefixes, regex-escaped here).
skip=$(grep -vE '^(#|$)' fuzz/sanitizer_skip.txt | sed -E 's/[][\\.^$*+?(){}|]/\\&/g; s/^/^/' | paste -sd'|')
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --test-dir "$BUILD" -L 'unit|fuzz' -E "$skip" --output-on-failure -j"$(nproc)"
tested=$(date +%s)
FUZZ_NO_BUILD=1 FUZZ_BUILD_DIR="$BUILD" fuzz/run_fuzz.sh "${FUZZ_CI_SECONDS:-20}"
echo "sanitizers + fuzz: build $((built - start)) s, unit tests under ASan+UBSan $((tested - built)) s, fuzzing $(($(date +%s) - tested)) s"
