#!/usr/bin/env bash
# Time and memory of exploration and of trace refinement checks per thread count.
#
# Usage: scripts/check-speedup.sh [MODEL] [--threads 1,2,...] [--process P] [--out DIR]
#   MODEL      a CSPm script (default: examples/scaling_philosophers.csp, the bundled
#              scaling model: 8 dining philosophers, 6,627,583 states)
#   --threads  the thread counts, comma-separated (default: 1,2)
#   --process  the process checked (default: SYSTEM)
#   --out      where the CSV and the scripts checked go (default: target/check-speedup)
#
# Builds weft in release first if target/release/weft is missing, then, per thread count,
# runs three commands once each, timed by /usr/bin/time (wall seconds, peak RSS):
#   explore        weft explore MODEL --process P --json --threads N
#   stop_traces    weft check on a copy of MODEL with `assert STOP [T= P` as its only assertion
#   runall_traces  the same with `RUNALL = [] e : Events @ e -> RUNALL` and
#                  `assert RUNALL [T= P`
# (the copies leave out MODEL's own `assert` lines). CSV on stdout, also written to
# DIR/check-speedup.csv:
#     threads,command,seconds,peak_rss_mb,pairs_or_states
# pairs_or_states: the explorer's `states`; for a check, the assertion's `pairs` when the JSON
# has that field, else its `states`. Progress goes to stderr. Exits non-zero if a command
# fails (a check's exit code 1, the assertion failing, is not a failure) or if a command
# reports different pairs_or_states at different thread counts.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

model=""
threads_list="1,2"
process="SYSTEM"
out="$root/target/check-speedup"
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads_list="${2:?--threads needs a list}"; shift 2 ;;
    --threads=*) threads_list="${1#--threads=}"; shift ;;
    --process) process="${2:?--process needs a name}"; shift 2 ;;
    --process=*) process="${1#--process=}"; shift ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-speedup.sh: unknown option $1" >&2; exit 2 ;;
    *)
      if [ -n "$model" ]; then echo "check-speedup.sh: one MODEL only" >&2; exit 2; fi
      model="$1"; shift ;;
  esac
done
model="${model:-$root/examples/scaling_philosophers.csp}"
if [ ! -f "$model" ]; then echo "check-speedup.sh: no such model: $model" >&2; exit 2; fi
case "$process" in
  ''|*$'\n'*) echo "check-speedup.sh: bad process name '$process'" >&2; exit 2 ;;
esac
IFS=',' read -r -a thread_counts <<<"$threads_list"
if [ "${#thread_counts[@]}" -eq 0 ]; then echo "check-speedup.sh: no thread counts" >&2; exit 2; fi
for t in "${thread_counts[@]}"; do
  case "$t" in ''|*[!0-9]*|0) echo "check-speedup.sh: bad thread count '$t'" >&2; exit 2 ;; esac
done
if [ ! -x /usr/bin/time ]; then
  echo "check-speedup.sh: /usr/bin/time (GNU time) is needed for the peak RSS" >&2
  exit 2
fi

weft="$root/target/release/weft"
if [ ! -x "$weft" ]; then
  echo "building weft (release)" >&2
  (cd "$root" && cargo build --release --quiet)
fi
mkdir -p "$out"
csv="$out/check-speedup.csv"

# The model without its own assertions, then the lines given.
with_assertion() {
  local file="$1"; shift
  grep -v '^[[:space:]]*assert[[:space:]]' "$model" >"$file"
  printf '\n' >>"$file"
  printf '%s\n' "$@" >>"$file"
}
stop_script="$out/stop_traces.csp"
runall_script="$out/runall_traces.csp"
with_assertion "$stop_script" "assert STOP [T= $process"
with_assertion "$runall_script" "RUNALL = [] e : Events @ e -> RUNALL" "assert RUNALL [T= $process"

# The first value of the integer field named $1 in the JSON text $2 (empty if absent).
field() { grep -o "\"$1\":[0-9]*" <<<"$2" | head -n 1 | cut -d: -f2 || true; }

# Runs the command after $1 (a name) under /usr/bin/time; sets `json`, `seconds`, `rss_mb`.
timed() {
  local name="$1"; shift
  local times="$out/$name.time" log="$out/$name.stderr" code=0
  json=$(/usr/bin/time -f '%e %M' -o "$times" "$@" 2>"$log") || code=$?
  if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
    echo "check-speedup.sh: \`$*\` exited $code:" >&2
    cat "$log" >&2
    exit 1
  fi
  read -r seconds rss_kb < <(tail -n 1 "$times")
  rss_mb=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
}

declare -A seen
echo "threads,command,seconds,peak_rss_mb,pairs_or_states" | tee "$csv"
for t in "${thread_counts[@]}"; do
  for command in explore stop_traces runall_traces; do
    case "$command" in
      explore)
        timed "$command" "$weft" explore "$model" --process "$process" --json --threads "$t"
        count=$(field states "$json") ;;
      stop_traces|runall_traces)
        script="$stop_script"
        if [ "$command" = runall_traces ]; then script="$runall_script"; fi
        timed "$command" "$weft" check "$script" --json --threads "$t"
        count=$(field pairs "$json")
        if [ -z "$count" ]; then count=$(field states "$json"); fi ;;
    esac
    echo "threads $t $command: $seconds s, $rss_mb MB, $count pairs or states" >&2
    if [ -n "${seen[$command]:-}" ] && [ "${seen[$command]}" != "$count" ]; then
      echo "check-speedup.sh: $command gave $count pairs or states at $t threads," \
        "not ${seen[$command]}" >&2
      exit 1
    fi
    seen[$command]="$count"
    echo "$t,$command,$seconds,$rss_mb,$count" | tee -a "$csv"
  done
done
