#!/usr/bin/env bash
# Reproduces thesis Example 2.3.4 / Figures 2.1-2.2 (seed 000 Example 3): the family L(n,k),
# n states s_1..s_n with s_i --e_j--> s_{i-1} for j = 1..k, initial s_n, checked against
# itself, for n, k in {10, 50, 100, 250, 500}, breadth-first and depth-first.
#
# Prints CSV: n,k,search,seconds,pairs,antichain_hits,antichain_misses
#   seconds: the time of the refinement check alone, as measured inside `weft refines`
#            (its JSON `stats.seconds`): building L(n,k) and reading the .aut files are not
#            timed. Each point is the minimum over REPEAT runs (default 5).
#   pairs:   pairs explored (taken from the working set and expanded).
#
# Usage: scripts/reproduce-lnk.sh [MODEL]   (MODEL: traces (default), failures,
#        failures-divergences). Env: SIZES="10 50 100 250 500", REPEAT=5.
set -euo pipefail
cd "$(dirname "$0")/.."

model="${1:-traces}"
sizes="${SIZES:-10 50 100 250 500}"
repeat="${REPEAT:-5}"

cargo build --release --quiet
weft="target/release/weft"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "n,k,search,seconds,pairs,antichain_hits,antichain_misses"
for n in $sizes; do
  for k in $sizes; do
    aut="$tmp/L_${n}_${k}.aut"
    # State s_i is number i-1; the initial state s_n is n-1.
    awk -v n="$n" -v k="$k" 'BEGIN {
      printf "des (%d, %d, %d)\n", n - 1, k * (n - 1), n;
      for (i = 2; i <= n; i++) for (j = 1; j <= k; j++) printf "(%d, \"e%d\", %d)\n", i - 1, j, i - 2;
    }' >"$aut"
    for search in bfs dfs; do
      best=""
      for _ in $(seq "$repeat"); do
        json="$("$weft" refines --json --model "$model" --search "$search" "$aut" "$aut")" || {
          echo "error: L($n,$k) does not refine itself ($search)" >&2
          exit 1
        }
        line="$(printf '%s' "$json" | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["stats"]
print("%.6f,%d,%d,%d" % (s["seconds"], s["pairs_explored"], s["antichain_hits"], s["antichain_misses"]))
')"
        if [ -z "$best" ] || awk -v a="${line%%,*}" -v b="${best%%,*}" 'BEGIN { exit !(a < b) }'; then
          best="$line"
        fi
      done
      echo "$n,$k,$search,$best"
    done
    rm -f "$aut"
  done
done
