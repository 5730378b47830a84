#!/usr/bin/env bash
# The term-library micro-benchmarks of Figure 5.4 (thesis ch. 5), run outside criterion.
# Prints CSV on stdout: workload,variant,threads,seconds,ns_per_op (median of 3 runs).
#   --quick            small sizes (finishes in under a minute on 2 cores)
#   --threads 1,2,4    thread counts (default: 1, 2, 4, ... up to the number of cores)
#   --runs N           runs per configuration (default 3)
#   --workloads a,b    subset of the workloads
#   --variants a,b     subset of bf, rwlock-pl, rwlock-std, sequential
# Build output goes to stderr; only the CSV goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --quiet --bench terms_csv --no-run >&2
exec cargo bench --quiet --bench terms_csv -- "$@"
