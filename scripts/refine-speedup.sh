#!/usr/bin/env bash
# Refinement check time per thread count on the corpus's linearizability pairs and on
# L(n,k) against itself (thesis Example 2.3.4).
#
# Usage: scripts/refine-speedup.sh [--threads 1,2,...] [--runs N] [--case NAME]
#   --threads  the thread counts, comma-separated (default: 1,2)
#   --runs     runs per point; the medians of the check's own `stats.seconds` and of the
#              whole command's wall time (reading the files included) are printed (default: 7)
#   --case     only this pair (e.g. treiberStack, or L(500,500)); default: every pair
#
# Builds weft in release first if target/release/weft is missing. Per pair, model and thread
# count it runs `weft refines SPEC IMPL --model M --json --threads N`, the thread counts
# alternating run by run (so that the machine's noise meets them alike), and prints CSV:
#     case,model,threads,holds,pairs,median_seconds,median_wall_seconds
# The pairs are tests/corpus/aut/generated/linearizability/*_{spec,impl}.aut[.gz] in the three
# models, and L(500,500) (written to target/refine-speedup/l500.aut) in traces and failures.
# Exits non-zero if the verdict or the pair count differs between thread counts.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

threads_list="1,2"
runs=7
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads_list="${2:?--threads needs a list}"; shift 2 ;;
    --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
    --case) only="${2:?--case needs a name}"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

point() { # case model spec impl: the thread counts' runs alternate, so noise meets them alike
  if [ -n "$only" ] && [ "$only" != "$1" ]; then return; fi
  python3 - "$weft" "$runs" "$threads_list" "$@" <<'EOF'
import json, subprocess, sys, time
weft, runs, threads, name, model, spec, impl = sys.argv[1:]
threads = [int(t) for t in threads.split(",")]
seen, check, wall = {}, {t: [] for t in threads}, {t: [] for t in threads}
for _ in range(int(runs)):
    for t in threads:
        start = time.perf_counter()
        out = subprocess.run([weft, "refines", spec, impl, "--model", model, "--json",
                              "--threads", str(t)], capture_output=True, text=True)
        wall[t].append(time.perf_counter() - start)
        if out.returncode not in (0, 1):
            sys.exit("refine-speedup.sh: %s %s at %d threads: exit %d: %s"
                     % (name, model, t, out.returncode, out.stderr.strip()))
        r = json.loads(out.stdout)
        check[t].append(r["stats"]["seconds"])
        seen[t] = "%s,%d" % (str(r["holds"]).lower(), r["stats"]["pairs_discovered"])
if len(set(seen.values())) > 1:
    sys.exit("refine-speedup.sh: %s %s: verdicts or pairs differ by threads: %s" % (name, model, seen))
median = lambda v: sorted(v)[len(v) // 2]
for t in threads:
    print("%s,%s,%d,%s,%.4f,%.4f" % (name, model, t, seen[t], median(check[t]), median(wall[t])))
EOF
}

echo "case,model,threads,holds,pairs,median_seconds,median_wall_seconds"
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
