# Sourced by the bench scripts that time whole dvfs-sim processes with GNU time -f "%e %M %U %S" (one line per run:
# wall s, max RSS KiB, user s, system s). timing_summary FILE prints "median-wall median-cpu largest-rss-kib".
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
timing_summary() {
  echo "$(awk '{ print $1 }' "$1" | median) $(awk '{ print $3 + $4 }' "$1" | median) $(awk '$2 > m { m = $2 } END { print m }' "$1")"
}
