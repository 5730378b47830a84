#!/usr/bin/env bash
# Refinement check time per thread count on the corpus's linearizability pairs and on
# L(n,k) against itself (thesis Example 2.3.4).
#
# Usage: scripts/refine-speedup.sh [--threads 1,2,...] [--runs N]
#   --threads  the thread counts, comma-separated (default: 1,2)
#   --runs     runs per point; the median of the check's own `stats.seconds` is printed
#              (default: 7)
#
# Builds weft in release first if target/release/weft is missing. Per pair, model and thread
# count it runs `weft refines SPEC IMPL --model M --json --threads N` and prints CSV:
#     case,model,threads,holds,pairs,median_seconds
# The pairs are tests/corpus/aut/generated/linearizability/*_{spec,impl}.aut[.gz] in the three
# models, and L(500,500) (written to target/refine-speedup/l500.aut) in traces and failures.
# Exits non-zero if the verdict or the pair count differs between thread counts.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

threads_list="1,2"
runs=7
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads_list="${2:?--threads needs a list}"; shift 2 ;;
    --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "refine-speedup.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

weft="$root/target/release/weft"
[ -x "$weft" ] || (cd "$root" && cargo build --release >&2)
out="$root/target/refine-speedup"
mkdir -p "$out"

# L(n,k): states s_1..s_n (s_i is id i-1), s_i --e_j--> s_{i-1} for j = 1..k, initial s_n.
python3 - "$out/l500.aut" <<'EOF'
import sys
n, k = 500, 500
lines = [f'({i - 1},"e{j}",{i - 2})' for i in range(2, n + 1) for j in range(1, k + 1)]
with open(sys.argv[1], "w") as f:
    f.write(f"des ({n - 1},{len(lines)},{n})\n" + "\n".join(lines) + "\n")
EOF

point() { # case model spec impl
  local name="$1" model="$2" spec="$3" impl="$4" seen=""
  for t in ${threads_list//,/ }; do
    local result
    result=$(for _ in $(seq "$runs"); do
      "$weft" refines "$spec" "$impl" --model "$model" --json --threads "$t" || true
    done | python3 -c '
import json, sys
runs = [json.loads(line) for line in sys.stdin if line.strip()]
seconds = sorted(r["stats"]["seconds"] for r in runs)
r = runs[0]
print("%s,%d,%.4f" % (str(r["holds"]).lower(), r["stats"]["pairs_discovered"], seconds[len(seconds) // 2]))')
    local verdict="${result%,*}"
    if [ -n "$seen" ] && [ "$seen" != "$verdict" ]; then
      echo "refine-speedup.sh: $name $model: $verdict at $t threads, $seen before" >&2
      exit 1
    fi
    seen="$verdict"
    echo "$name,$model,$t,$result"
  done
}

echo "case,model,threads,holds,pairs,median_seconds"
dir="$root/tests/corpus/aut/generated/linearizability"
for spec in "$dir"/*_spec.aut; do
  name="$(basename "$spec" _spec.aut)"
  impl="$(ls "$dir/${name}_impl.aut"* | head -1)"
  for model in traces failures failures-divergences; do
    point "$name" "$model" "$spec" "$impl"
  done
done
for model in traces failures; do
  point "L(500,500)" "$model" "$out/l500.aut" "$out/l500.aut"
done
