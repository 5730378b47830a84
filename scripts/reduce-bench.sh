#!/usr/bin/env bash
# `weft reduce` on the corpus's largest systems: whole command, best of N runs, peak memory
# from /usr/bin/time -v.
#
# Usage: scripts/reduce-bench.sh [--runs N] [--equivalences strong,branching] [--threads 1,2]
# Prints CSV: system,equivalence,threads,seconds,peak_rss_mb,states_before,states_after
# (seconds and peak_rss_mb of the fastest run). WEFT=PATH benchmarks another build of weft.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs=3
equivalences="strong,branching"
thread_counts="1,2"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
    --equivalences) equivalences="${2:?--equivalences needs a list}"; shift 2 ;;
    --threads) thread_counts="${2:?--threads needs a list}"; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
echo "system,equivalence,threads,seconds,peak_rss_mb,states_before,states_after"
for system in "${systems[@]}"; do
  name="$(basename "$system")"; name="${name%%.*}"
  for eq in ${equivalences//,/ }; do
  for threads in ${thread_counts//,/ }; do
    best=""; best_rss=""
    for _ in $(seq "$runs"); do
      /usr/bin/time -v "$weft" reduce "$system" --equivalence "$eq" --threads "$threads" --json \
        >"$tmp/out.json" 2>"$tmp/time.txt"
      secs="$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$tmp/time.txt")"
      rss="$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 / 1024}' "$tmp/time.txt")"
      if [ -z "$best" ] || awk "BEGIN {exit !($secs < $best)}"; then best="$secs"; best_rss="$rss"; fi
    done
    before="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["states_before"])' "$tmp/out.json")"
    after="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["states_after"])' "$tmp/out.json")"
    echo "$name,$eq,$threads,$best,$best_rss,$before,$after"
  done
  done
done
