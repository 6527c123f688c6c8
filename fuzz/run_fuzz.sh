#!/usr/bin/env bash
# Fuzzes every reader of fuzz/ for N seconds each and prints, per target, the executions, the coverage
# and the findings. Anyone can rerun it:
#   fuzz/run_fuzz.sh [seconds-per-target, default 600] [target ...]
# Needs clang with libFuzzer (Debian clang-14 + libclang-rt-14-dev). It configures and builds the fuzz
# build directory (FUZZ_BUILD_DIR, default build-fuzz: ASan + UBSan, -DDVFS_FUZZ=ON), runs FUZZ_JOBS
# targets at a time (default: the number of cores), each in libFuzzer's fork mode so that a finding is
# recorded and fuzzing goes on. The working corpus and the inputs of the findings are kept under
# $FUZZ_BUILD_DIR/fuzz-work/<target>/ (corpus/, artifacts/, log).
#
# A finding is anything but the expected InputError: an uncaught other exception ("FINDING" line), a
# sanitizer report, a crash, an allocation over 1 GB (-malloc_limit_mb), an RSS over 1 GB
# (-rss_limit_mb) or an input taking over 10 s (-timeout). Findings whose signature is listed in
# fuzz/findings/KNOWN (tracked elsewhere, each with its reproducer in fuzz/findings/) are printed as
# known; the script exits 1 when there is any other finding.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET=${1:-600}
shift || true
ALL_TARGETS=(kineto_importer scenario_file telemetry plan_file chakra_importer)
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=("${ALL_TARGETS[@]}")
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
JOBS=${FUZZ_JOBS:-$(nproc)}
WORK="$BUILD/fuzz-work"

if [[ -z "${FUZZ_NO_BUILD:-}" ]]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DDVFS_FUZZ=ON \
        -DDVFS_BUILD_PYTHON=OFF "${launcher[@]}" >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]/#/fuzz_}" >/dev/null
fi

# SimGrid and the other Debian libraries are not instrumented; the targets never start a SimGrid engine.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}"

run_target() {
  local t=$1 w="$WORK/$1"
  mkdir -p "$w/corpus" "$w/artifacts"
  "$BUILD/fuzz/fuzz_$t" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=1024 \
    -dict=fuzz/dvfs.dict -artifact_prefix="$w/artifacts/" -print_final_stats=1 \
    "$w/corpus" "fuzz/corpus/$t" >"$w/log" 2>&1 || true
}

start=$(date +%s)
running=0
for t in "${TARGETS[@]}"; do
  rm -rf "$WORK/$t/artifacts" "$WORK/$t/log"
  run_target "$t" &
  running=$((running + 1))
  if ((running >= JOBS)); then wait -n; running=$((running - 1)); fi
done
wait

# Signature of a finding: its input is replayed alone and the first FINDING line, sanitizer SUMMARY line
# or libFuzzer out-of-memory / timeout line is kept, with numbers and quoted values blanked so that
# repeats count once.
signature() {
  local t=$1 input=$2
  timeout 60 "$BUILD/fuzz/fuzz_$t" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=1024 "$input" 2>&1 |
    grep -aE '^FINDING |^SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer|ERROR: libFuzzer: (out-of-memory|timeout)|^SUMMARY: libFuzzer: (out-of-memory|timeout)' |
    grep -avE '^SUMMARY: libFuzzer: deadly signal' | head -1 |
    sed -E "s/==[0-9]+==//; s/'[^']*'/'…'/g; s/0x[0-9a-f]+/ADDR/g; s/[0-9]+/N/g; s/ +/ /g" || true
}
signatures() {
  local t=$1 f sig
  for f in "$WORK/$t/artifacts"/*; do
    [[ -f "$f" ]] || continue
    sig=$(signature "$t" "$f")
    echo "${sig:-no report on replay ($(basename "$f" | cut -d- -f1))}"
  done | sort | uniq -c | sort -rn
}

known_file=fuzz/findings/KNOWN
status=0
printf '%-16s %8s %12s %9s %9s %7s %9s %7s\n' target seconds executions exec/s coverage features corpus findings
report=""
for t in "${TARGETS[@]}"; do
  w="$WORK/$t"
  stats=$(grep -aE '^#[0-9]+: cov: ' "$w/log" | tail -1 || true)
  execs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$stats")
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$stats")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$stats")
  corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<<"$stats")
  eps=$(( ${execs:-0} / (SECONDS_PER_TARGET > 0 ? SECONDS_PER_TARGET : 1) ))
  sigs=$(signatures "$t")
  n_art=$(find "$w/artifacts" -type f 2>/dev/null | wc -l)
  n_unique=0; n_new=0
  while read -r count sig; do
    [[ -z "${sig:-}" ]] && continue
    n_unique=$((n_unique + 1))
    if [[ -f "$known_file" ]] && grep -qF -f <(grep -vE '^(#|$)' "$known_file") <<<"$sig"; then
      tag="known"
    else
      tag="NEW"
      n_new=$((n_new + 1))
    fi
    report+="  $t [$tag] x$count $sig"$'\n'
  done <<<"$sigs"
  printf '%-16s %8s %12s %9s %9s %7s %9s %7s\n' "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "$eps" "${cov:-?}" "${ft:-?}" \
         "${corp:-?}" "$n_unique ($n_new new)"
  ((n_new == 0)) || status=1
  ((n_art == 0)) || report+="  $t: $n_art input(s) kept in $w/artifacts/"$'\n'
done
echo "wall time: $(( $(date +%s) - start )) s for ${#TARGETS[@]} target(s), $JOBS at a time"
[[ -n "$report" ]] && printf 'findings (count, signature):\n%s' "$report"
exit $status
