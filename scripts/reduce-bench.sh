#!/usr/bin/env bash
# `weft reduce` on the corpus's largest systems: whole command (read, reduce, write the quotient
# with -o), N runs each, best and median wall seconds, peak memory from /usr/bin/time -v.
#
# Usage: scripts/reduce-bench.sh [--runs N] [--equivalences strong,branching] [--threads 1,2]
#                                [--before PATH] [--systems A.aut,B.aut.gz] [--cascade K]
#                                [--algorithm auto|signatures|constellations|...]
# Prints CSV: system,equivalence,threads,best_seconds,median_seconds,median_cpu_seconds,
# peak_rss_mb,states_before,states_after (peak_rss_mb of the fastest run; cpu = user + system,
# steadier than wall time on a busy machine); with --before PATH (another build of weft, run
# alternately with this one in the same loop) also before_best_seconds,before_median_seconds,
# before_median_cpu_seconds,before_peak_rss_mb.
# --systems replaces the list of systems; --cascade K adds two generated worst cases for the
# new bottom states of branching bisimulation (bottom_cascade_K, bottom_cascade_chained_K: K
# bottom states b_i -a-> b_{i-1} with t_i -tau-> b_i, b_{i-1} above them, the chained one with
# t_i -tau-> t_{i-1} too); --algorithm passes --branching-algorithm.
# WEFT=PATH benchmarks another build of weft.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=5
equivalences="strong,branching"
thread_counts="1,2"
before=""
systems_list=""
cascade=""
algorithm="auto"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
    --equivalences) equivalences="${2:?--equivalences needs a list}"; shift 2 ;;
    --threads) thread_counts="${2:?--threads needs a list}"; shift 2 ;;
    --before) before="${2:?--before needs a path}"; shift 2 ;;
    --systems) systems_list="${2:?--systems needs a list}"; shift 2 ;;
    --cascade) cascade="${2:?--cascade needs a number}"; shift 2 ;;
    --algorithm) algorithm="${2:?--algorithm needs a name}"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reduce-bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
weft="${WEFT:-$root/target/release/weft}"
[ -x "$weft" ] || (cd "$root" && cargo build --release >&2)
gen="$root/tests/corpus/aut/generated"
systems=(
  "$root/tests/corpus/aut/vlts_from_eqfiddle_csv/vasy_40_60.aut"
  "$gen/mcrl2_examples/1394-fin.aut.gz"
  "$gen/mcrl2_examples/dining_10.aut.gz"
  "$gen/linearizability/treiberStack_impl.aut.gz"
)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ -n "$systems_list" ]; then
  IFS=',' read -r -a systems <<<"$systems_list"
fi
if [ -n "$cascade" ]; then
  for chained in 0 1; do
    name="bottom_cascade_$cascade"; [ "$chained" = 1 ] && name="bottom_cascade_chained_$cascade"
    awk -v k="$cascade" -v chained="$chained" 'BEGIN {
      m = 3 * k + (chained ? k - 1 : 0)
      printf "des (%d,%d,%d)\n", 2 * k, m, 2 * k + 1
      for (i = 1; i <= k; i++) {
        printf "(%d,\"a\",%d)\n(%d,\"tau\",%d)\n(%d,\"tau\",%d)\n", i, i - 1, k + i, i, k + i, i - 1
        if (chained && i > 1) printf "(%d,\"tau\",%d)\n", k + i, k + i - 1
      }
    }' >"$tmp/$name.aut"
    systems+=("$tmp/$name.aut")
  done
fi
# One timed run of binary $1 on system $2, equivalence $3, threads $4: prints
# "seconds rss_mb cpu_seconds".
# (Wall time from the clock around it: /usr/bin/time's own has centiseconds only.)
run_once() {
  local start end
  start="$(date +%s%N)"
  /usr/bin/time -v "$1" reduce "$2" --equivalence "$3" --threads "$4" -o "$tmp/out.aut" --json \
    --branching-algorithm "$algorithm" \
    >"$tmp/out.json" 2>"$tmp/time.txt"
  end="$(date +%s%N)"
  awk -F': ' -v ns="$((end - start))" '/Maximum resident set size/ {rss = $2 / 1024}
              /User time \(seconds\)/ {cpu += $2} /System time \(seconds\)/ {cpu += $2}
              END {printf "%.4f %.1f %.2f\n", ns / 1e9, rss, cpu}' "$tmp/time.txt"
}
# Best and median of the numbers on stdin: prints "best median".
best_median() {
  sort -g | awk '{a[NR] = $1} END {printf "%.4f %.4f\n", a[1], (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
header="system,equivalence,threads,best_seconds,median_seconds,median_cpu_seconds,peak_rss_mb,states_before,states_after"
[ -n "$before" ] && header="$header,before_best_seconds,before_median_seconds,before_median_cpu_seconds,before_peak_rss_mb"
echo "$header"
for system in "${systems[@]}"; do
  name="$(basename "$system")"; name="${name%%.*}"
  for eq in ${equivalences//,/ }; do
  for threads in ${thread_counts//,/ }; do
    : >"$tmp/times"; : >"$tmp/before_times"; : >"$tmp/cpu"; : >"$tmp/before_cpu"
    best=""; best_rss=""; before_best=""; before_rss=""
    for _ in $(seq "$runs"); do
      if [ -n "$before" ]; then
        read -r bsecs brss bcpu < <(run_once "$before" "$system" "$eq" "$threads")
        echo "$bsecs" >>"$tmp/before_times"; echo "$bcpu" >>"$tmp/before_cpu"
        if [ -z "$before_best" ] || awk "BEGIN {exit !($bsecs < $before_best)}"; then
          before_best="$bsecs"; before_rss="$brss"
        fi
      fi
      read -r secs rss cpu < <(run_once "$weft" "$system" "$eq" "$threads")
      echo "$secs" >>"$tmp/times"; echo "$cpu" >>"$tmp/cpu"
      if [ -z "$best" ] || awk "BEGIN {exit !($secs < $best)}"; then best="$secs"; best_rss="$rss"; fi
    done
    read -r b m < <(best_median <"$tmp/times")
    read -r _ mc < <(best_median <"$tmp/cpu")
    states="$(python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(d["states_before"], d["states_after"], sep=",")' "$tmp/out.json")"
    line="$name,$eq,$threads,$b,$m,$mc,$best_rss,$states"
    if [ -n "$before" ]; then
      read -r bb bm < <(best_median <"$tmp/before_times")
      read -r _ bmc < <(best_median <"$tmp/before_cpu")
      line="$line,$bb,$bm,$bmc,$before_rss"
    fi
    echo "$line"
  done
  done
done
