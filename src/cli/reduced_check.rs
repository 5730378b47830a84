//! `weft refines --reduce`: the check on both systems reduced modulo divergence-preserving
//! branching bisimulation, with the counterexample carried back to the original systems.

use anyhow::Result;

use super::refines::verdict_or_limit;
use weft::explore::StopSignal;
use weft::lts::Lts;
use weft::reduce::{reduce, Equivalence};
use weft::refine::{check_until, replay::replay, CheckOptions, CheckResult, Violation};

/// How many original states of the counterexample's class are tried before falling back to
/// a check of the original systems.
const CANDIDATES: usize = 256;

/// Checks `implementation` against `spec` after reducing both modulo divergence-preserving
/// branching bisimulation (which preserves T, F and FD, so the verdict is the same). A
/// counterexample's trace and violation hold for the original systems too; its state is
/// mapped back to an original state of the quotient state's class that shows the violation,
/// confirmed by replaying it on the original systems. If no such state is found among the
/// first candidates, the original systems are checked instead.
pub fn check_reduced(
    spec: &Lts,
    implementation: &Lts,
    opts: &CheckOptions,
    stop: &StopSignal,
) -> Result<CheckResult> {
    let equivalence = Equivalence::DivergencePreservingBranching;
    // The two reductions at once, on two threads unless one is asked for, each on one
    // thread (measured on two cores: a pool of workers per reduction costs more CPU time
    // than it saves).
    let (small_spec, small_impl) = both(
        opts.threads.get() > 1,
        || reduce(spec, equivalence),
        || reduce(implementation, equivalence),
    );
    let mut result = verdict_or_limit(check_until(
        &small_spec.quotient,
        &small_impl.quotient,
        opts,
        stop,
    ))?;
    eprintln!(
        "reduced modulo {equivalence}: specification {} -> {} states, implementation {} -> {} \
         states",
        spec.num_states(),
        small_spec.quotient.num_states(),
        implementation.num_states(),
        small_impl.quotient.num_states()
    );
    let Some(cex) = &mut result.counterexample else {
        return Ok(result);
    };
    let class = cex.impl_state;
    let wants_stable = matches!(cex.violation, Violation::Refusal { .. });
    let mut candidates: Vec<u32> = (0..small_impl.state_map.len() as u32)
        .filter(|&s| small_impl.state_map[s as usize] == class)
        .collect();
    // Stable states first for a refusal, unstable ones for a divergence.
    candidates.sort_by_key(|&s| implementation.is_stable(s) != wants_stable);
    for &s in candidates.iter().take(CANDIDATES) {
        cex.impl_state = s;
        if replay(spec, implementation, opts.model, cex).is_ok() {
            return Ok(result);
        }
    }
    // No state of the class confirmed the counterexample: check the originals.
    verdict_or_limit(check_until(spec, implementation, opts, stop))
}

/// `(a(), b())`, with `b` on a thread of its own when `parallel` (a panic in it goes on
/// here).
pub(super) fn both<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let other = s.spawn(b);
        let first = a();
        let second = other
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (first, second)
    })
}
