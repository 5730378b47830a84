#!/usr/bin/env bash
# The one test command: formatting, lints, the whole test suite, and the loom models
# (once as written, once with the deliberately broken protocol, which they must catch).
#
#   scripts/test.sh           everything (what CI runs)
#   scripts/test.sh --quick   the edit-test loop: fmt, clippy, the library's unit tests and the
#                             fast test files (a short fuzz run included); no loom, no long corpus
#                             or stress tests
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *)
    echo "usage: scripts/test.sh [--quick]" >&2
    exit 2
    ;;
esac

# The property tests draw their random cases from a fixed seed here, so that the test command
# gives the same result on every run (CI included); run `cargo test --release --test NAME`
# directly, or set PROPTEST_RNG_SEED to another number, to explore other cases.
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261126}"

step() { printf '\n==> %s\n' "$*" >&2; }

# The test files of the quick subset: each runs in about a second (release build); left out:
# csp_semantics, lts_corpus, refine_linearizability (corpus oracles, 3-7 s each) and the
# proptest files (*_props).
QUICK_TESTS=(check_cli csp_cases csp_corpus csp_errors csp_eval csp_libcspm csp_precedence errors_cli examples explore_threads lts_cli properties_corpus refine_cli refine_corpus refine_examples refine_replay state_index sync_protocol term_library)

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

if [ "$quick" -eq 1 ]; then
  step "cargo test --release --lib and the quick test files (a 300-mutant fuzz run)"
  args=(--lib)
  for t in "${QUICK_TESTS[@]}"; do args+=(--test "$t"); done
  WEFT_FUZZ_RUNS="${WEFT_FUZZ_RUNS:-300}" cargo test --release "${args[@]}" --test fuzz_mutants
  step "quick tests passed (run scripts/test.sh without --quick for the whole suite)"
  exit 0
fi

step "cargo test --workspace (release: the stress and corpus tests do real work)"
cargo test --workspace --release

if [ -d loom-tests/tests ] && ls loom-tests/tests/*.rs >/dev/null 2>&1; then
  # Loom explores every interleaving up to the preemption bound; 2 keeps the 3-thread models
  # within minutes on 2 cores while still covering the store/load races of the handshake.
  export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
  loom_target="target/loom"
  step "loom models (LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS)"
  RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$loom_target" \
    cargo test -p loom-tests --release --tests

  step "loom models against the mutant protocol (every exclusion, term-table and state-index model must fail)"
  RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR="$loom_target" \
    cargo test -p loom-tests --release --features mutant --no-fail-fast \
    --test protocol --test term_table --test state_index -- exclusion collection address index_ \
    >target/loom-mutant.log 2>&1 || true
  failed=$(grep -cE '^test .* \.\.\. FAILED$' target/loom-mutant.log || true)
  survived=$(grep -E '^test .* \.\.\. ok$' target/loom-mutant.log || true)
  if [ -n "$survived" ] || [ "$failed" -eq 0 ]; then
    echo "error: these loom models did not catch the mutant protocol:" >&2
    echo "${survived:-(no model failed; see target/loom-mutant.log)}" >&2
    exit 1
  fi
  echo "ok: the mutant protocol was caught by all $failed models run against it" >&2
fi

step "all tests passed"
