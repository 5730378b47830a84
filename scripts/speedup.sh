#!/usr/bin/env bash
# Speedup of the parallel explorer per thread count.
#
# Usage: scripts/speedup.sh [MODEL] [--threads 1,2,4,...] [--processes 1,2,...] [--runs N]
#                           [--out DIR]
#   MODEL      a model `weft explore` accepts (default: examples/scaling_philosophers.csp, the
#              bundled scaling model: 8 dining philosophers, 6,627,583 states)
#   --threads  the thread counts, comma-separated (default: 1, 2, 4, ... doubling up to the
#              number of cores, and the number of cores itself)
#   --processes  process counts, comma-separated (default 1): each count P runs P weft
#              processes on this host (a host file of free localhost ports), each with
#              `--workers T` for each thread count T; P = 1 is the ordinary threaded run
#   --runs     runs per thread count (default 3; the median of their seconds is reported)
#   --out      where the CSV and the plot go (default: target/speedup)
#
# Builds weft in release first (where cargo is on PATH), then runs `weft explore MODEL --json --threads N` RUNS times
# per thread count (and process count) and prints CSV on stdout:
#     threads,states,transitions,seconds,speedup,processes,bytes_per_state
# seconds = median of the explorer's own `seconds` over the runs (process 0's, in a
# distributed run); speedup = median seconds at the first (processes, threads) pair / median
# seconds at this one; bytes_per_state is empty when `--json` does not report it. The CSV is also written to
# DIR/speedup.csv; a PNG of the speedup curve goes to DIR/speedup.png when gnuplot, or
# python3 with matplotlib, is present (nothing is drawn otherwise). Progress goes to stderr.
# Exits non-zero if a run fails or reports different state/transition counts than the others.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

model=""
threads_list=""
processes_list=1
runs=3
out="$root/target/speedup"
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads_list="${2:?--threads needs a list}"; shift 2 ;;
    --threads=*) threads_list="${1#--threads=}"; shift ;;
    --processes) processes_list="${2:?--processes needs a list}"; shift 2 ;;
    --processes=*) processes_list="${1#--processes=}"; shift ;;
    --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "speedup.sh: unknown option $1" >&2; exit 2 ;;
    *)
      if [ -n "$model" ]; then echo "speedup.sh: one MODEL only" >&2; exit 2; fi
      model="$1"; shift ;;
  esac
done
model="${model:-$root/examples/scaling_philosophers.csp}"
if [ ! -e "$model" ]; then echo "speedup.sh: no such model: $model" >&2; exit 2; fi
case "$runs" in ''|*[!0-9]*|0) echo "speedup.sh: --runs must be a positive number" >&2; exit 2 ;; esac

cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
if [ -z "$threads_list" ]; then
  threads_list=1
  t=2
  while [ "$t" -le "$cores" ]; do threads_list="$threads_list,$t"; t=$(( t * 2 )); done
  last="${threads_list##*,}"
  if [ "$last" -ne "$cores" ]; then threads_list="$threads_list,$cores"; fi
fi
IFS=',' read -r -a thread_counts <<<"$threads_list"
for t in "${thread_counts[@]}"; do
  case "$t" in ''|*[!0-9]*|0) echo "speedup.sh: bad thread count '$t'" >&2; exit 2 ;; esac
done
IFS=',' read -r -a process_counts <<<"$processes_list"
for p in "${process_counts[@]}"; do
  case "$p" in ''|*[!0-9]*|0) echo "speedup.sh: bad process count '$p'" >&2; exit 2 ;; esac
done

weft="$root/target/release/weft"
# On a machine without cargo (a measurement host), the binary already in place is used.
if command -v cargo >/dev/null 2>&1; then
  (cd "$root" && cargo build --release --quiet)
elif [ ! -x "$weft" ]; then
  echo "speedup.sh: no cargo and no $weft" >&2; exit 2
fi
mkdir -p "$out"
csv="$out/speedup.csv"

# The value of a numeric field of a one-line JSON object.
field() { sed -E "s/.*\"$1\":([0-9.eE+-]+).*/\1/" <<<"$2"; }

# The value of a field of a one-line JSON object, empty if absent.
maybe_field() { if grep -q "\"$1\":" <<<"$2"; then field "$1" "$2"; fi; }

# A host file of P free localhost ports.
hostfile() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
for s in socks:
    print("127.0.0.1:%d" % s.getsockname()[1])
EOF
}

# One run with P processes of T threads each; prints (process 0's) JSON.
run_once() {
  local p="$1" t="$2"
  if [ "$p" -eq 1 ]; then
    "$weft" explore "$model" --json --threads "$t"
    return
  fi
  local hosts="$out/hosts.txt" pids=() i
  hostfile "$p" >"$hosts"
  "$weft" explore "$model" --json --workers "$t" --processes "$p" --process-index 0 \
    --hostfile "$hosts" >"$out/process0.json" 2>/dev/null &
  pids+=("$!")
  for i in $(seq 1 $(( p - 1 ))); do
    "$weft" explore "$model" --json --workers "$t" --processes "$p" --process-index "$i" \
      --hostfile "$hosts" >/dev/null 2>&1 &
    pids+=("$!")
  done
  for i in "${pids[@]}"; do wait "$i"; done
  cat "$out/process0.json"
}

echo "threads,states,transitions,seconds,speedup,processes,bytes_per_state" | tee "$csv"
base=""
states_seen=""
for p in "${process_counts[@]}"; do
for t in "${thread_counts[@]}"; do
  seconds=()
  bytes=""
  for run in $(seq 1 "$runs"); do
    json=$(run_once "$p" "$t")
    states=$(field states "$json")
    transitions=$(field transitions "$json")
    seconds+=("$(field seconds "$json")")
    bytes=$(maybe_field bytes_per_state "$json")
    echo "processes $p threads $t run $run: $states states, $transitions transitions, ${seconds[-1]} s" >&2
    if [ -z "$states_seen" ]; then
      states_seen="$states,$transitions"
    elif [ "$states_seen" != "$states,$transitions" ]; then
      echo "speedup.sh: $p process(es) of $t threads gave $states,$transitions states,transitions, not $states_seen" >&2
      exit 1
    fi
  done
  median=$(printf '%s\n' "${seconds[@]}" | sort -g | awk '{ v[NR] = $1 } END {
    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  base="${base:-$median}"
  speedup=$(awk -v b="$base" -v m="$median" 'BEGIN { printf "%.3f", (m > 0 ? b / m : 0) }')
  echo "$t,$states,$transitions,$median,$speedup,$p,$bytes" | tee -a "$csv"
done
done

png="$out/speedup.png"
title="weft explore $(basename "$model"): speedup over ${thread_counts[0]} thread(s)"
if command -v gnuplot >/dev/null 2>&1; then
  gnuplot <<EOF && echo "plot: $png" >&2
set terminal pngcairo size 800,600
set output "$png"
set datafile separator ","
set key left top
set title "$title"
set xlabel "threads"
set ylabel "speedup"
plot "$csv" using 1:5 skip 1 with linespoints title "measured", \
     "$csv" using 1:(\$1 / ${thread_counts[0]}) skip 1 with lines dashtype 2 title "linear"
EOF
elif command -v python3 >/dev/null 2>&1 && python3 -c "import matplotlib" >/dev/null 2>&1; then
  python3 - "$csv" "$png" "$title" <<'EOF' && echo "plot: $png" >&2
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
threads = [int(r["threads"]) for r in rows]
speedup = [float(r["speedup"]) for r in rows]
plt.plot(threads, speedup, "o-", label="measured")
plt.plot(threads, [t / threads[0] for t in threads], "--", label="linear")
plt.xlabel("threads"); plt.ylabel("speedup"); plt.title(sys.argv[3]); plt.legend()
plt.savefig(sys.argv[2], dpi=100)
EOF
fi
