#!/usr/bin/env bash
# Reading throughput of the .aut reader: generates an LTS of 10 million transitions in mCRL2's
# layout (2 million states, 5 transitions each, 100 quoted visible labels like "send(12, 3)" plus
# "tau", listed by source state) and times `weft info` on it.
#
# Usage: scripts/aut-throughput.sh [RUNS] [TRANSITIONS]   (defaults: 3 runs, 10000000)
# Prints, per run, the reader's own time (from `weft info --json`) and the whole command's
# wall-clock time (read + analysis + start-up), each as transitions per second.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-3}"
transitions="${2:-10000000}"
per_state=5
states=$(( transitions / per_state ))
dir="target/aut-throughput"
file="$dir/generated-$transitions.aut"

cargo build --release --quiet
mkdir -p "$dir"
if [ ! -s "$file" ]; then
  echo "generating $file ..." >&2
  awk -v n="$states" -v k="$per_state" 'BEGIN {
    printf "des (0,%d,%d)\n", n * k, n
    for (i = 0; i < 100; i++) label[i] = sprintf("\"send(%d, %d)\"", i, (i * 7) % 13)
    for (i = 100; i < 110; i++) label[i] = "\"tau\""
    for (s = 0; s < n; s++)
      for (j = 0; j < k; j++)
        printf "(%d,%s,%d)\n", s, label[(s * 31 + j * 17) % 110], (s * 7 + j * 104729 + 1) % n
  }' > "$file.tmp"
  mv "$file.tmp" "$file"
fi
bytes=$(stat -c %s "$file")
echo "file: $file ($transitions transitions, $states states, $bytes bytes)"
# Warm the page cache so that the disk is not measured.
cat "$file" > /dev/null

for run in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  json=$(target/release/weft info --json "$file")
  end=$(date +%s.%N)
  read_seconds=$(sed -E 's/.*"read_seconds":([0-9.eE+-]+).*/\1/' <<<"$json")
  awk -v run="$run" -v t="$transitions" -v r="$read_seconds" -v w="$(echo "$end - $start" | bc -l)" 'BEGIN {
    printf "run %d: read %.3f s = %.2f million transitions/s; whole `weft info` %.3f s = %.2f million transitions/s\n",
      run, r, t / r / 1e6, w, t / w / 1e6
  }'
done
