//! Reductions of explicit LTSs modulo behavioural equivalences, and equivalence checking.
//!
//! [`reduce`] computes the quotient of an [`Lts`] modulo one of the [`Equivalence`]s:
//!
//! - strong bisimulation: partition refinement on the LTS as it is: signature rounds while
//!   they multiply the number of blocks, then Paige–Tarjan splitters with the smaller-half
//!   rule on constellations, O(m log n) (`strong`);
//! - branching bisimulation and divergence-preserving branching bisimulation: the tau-SCCs
//!   are contracted first (their states are branching bisimilar), which leaves the tau graph
//!   acyclic; for the divergence-preserving variant a contracted SCC that contains a tau cycle
//!   is marked divergent. Then partition refinement where a state's signature includes what
//!   it can do after inert taus (taus inside its block): full signature rounds while they move
//!   many states, then incremental rounds with the smaller-half rule (`splitting`), and after
//!   [`refinement::AUTO_INCREMENTAL_ROUNDS`] of those, splitting under constellations after
//!   Groote, Jansen, Keiren and Wijs from the partition reached (`branching_gjkw`);
//! - trace and weak-trace equivalence: subset construction ([`determinise`]; for weak traces
//!   over tau-closures, taus removed), then strong bisimulation minimisation of the
//!   deterministic result (the minimal deterministic LTS, unique up to isomorphism).
//!
//! The quotient ([`quotient`]) has one state per block, transitions between blocks
//! deduplicated, inert taus removed (branching) and a tau self-loop on each divergent block
//! (divergence-preserving branching). Its states are numbered in breadth-first order from the
//! initial block (unreachable blocks last, as mCRL2 keeps them), successors taken in (label,
//! block) order, so the numbering depends only on the input, never on hashing or threads.
//!
//! [`compare`] decides whether two LTSs are equivalent and, when not, explains why with a
//! distinguishing trace. [`compressions`] builds FDR's compression functions on them.

#![forbid(unsafe_code)]

mod blocks;
mod branching_gjkw;
pub mod compare;
pub mod compressions;
pub mod determinise;
pub mod on_the_fly;
pub mod quotient;
pub mod refinement;
mod splitting;
mod strong;

use std::fmt;
use std::str::FromStr;

use crate::lts::Lts;
use crate::threads::Threads;

pub use compare::{compare, disjoint_union, Comparison, Difference};
pub use compressions::Compression;
pub use refinement::BranchingAlgorithm;

/// The equivalences an LTS can be reduced modulo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Equivalence {
    /// Strong bisimulation (tau is an ordinary label).
    Strong,
    /// Branching bisimulation (van Glabbeek–Weijland): ignores inert taus and divergence.
    Branching,
    /// Divergence-preserving branching bisimulation: branching bisimulation that also keeps
    /// apart states that can and cannot diverge inside their class. Preserves the traces,
    /// stable failures and failures-divergences models.
    DivergencePreservingBranching,
    /// Trace equivalence (tau is an ordinary label).
    Trace,
    /// Weak-trace equivalence (traces of visible labels; taus are unobservable).
    WeakTrace,
}

impl Equivalence {
    /// Every equivalence, in the order of the command line's list.
    pub const ALL: [Equivalence; 5] = [
        Equivalence::Strong,
        Equivalence::Branching,
        Equivalence::DivergencePreservingBranching,
        Equivalence::Trace,
        Equivalence::WeakTrace,
    ];

    /// The name on the command line (`strong`, `branching`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Equivalence::Strong => "strong",
            Equivalence::Branching => "branching",
            Equivalence::DivergencePreservingBranching => "divergence-preserving-branching",
            Equivalence::Trace => "trace",
            Equivalence::WeakTrace => "weak-trace",
        }
    }

    /// Whether the equivalence is a bisimulation (its classes partition the states).
    pub fn is_bisimulation(self) -> bool {
        matches!(
            self,
            Equivalence::Strong
                | Equivalence::Branching
                | Equivalence::DivergencePreservingBranching
        )
    }
}

impl fmt::Display for Equivalence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An equivalence name that [`Equivalence::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown equivalence `{0}` (expected strong, branching, divergence-preserving-branching, trace or weak-trace)")]
pub struct UnknownEquivalence(pub String);

impl FromStr for Equivalence {
    type Err = UnknownEquivalence;

    /// Accepts the command-line names and mCRL2's (`bisim`, `branching-bisim`,
    /// `dpbranching-bisim`, `trace`, `weak-trace`).
    fn from_str(s: &str) -> Result<Equivalence, UnknownEquivalence> {
        match s {
            "strong" | "bisim" | "bisimulation" => Ok(Equivalence::Strong),
            "branching" | "branching-bisim" => Ok(Equivalence::Branching),
            "divergence-preserving-branching" | "dpbranching-bisim" => {
                Ok(Equivalence::DivergencePreservingBranching)
            }
            "trace" => Ok(Equivalence::Trace),
            "weak-trace" => Ok(Equivalence::WeakTrace),
            other => Err(UnknownEquivalence(other.to_string())),
        }
    }
}

/// The result of [`reduce`].
#[derive(Clone, Debug)]
pub struct Reduction {
    /// The quotient (for trace equivalences: the minimal deterministic LTS).
    pub quotient: Lts,
    /// For bisimulations: the quotient state of each covered state of the input (states
    /// beyond have no transitions and are unreachable). Empty for trace equivalences, whose
    /// quotient states are sets of input states.
    pub state_map: Vec<u32>,
    /// Number of partition-refinement rounds (for strong bisimulation: signature rounds and
    /// splitters processed).
    pub rounds: u32,
}

/// The quotient of `lts` modulo `equivalence` (see the module documentation), on one thread.
pub fn reduce(lts: &Lts, equivalence: Equivalence) -> Reduction {
    reduce_on(lts, equivalence, Threads::ONE)
}

/// As [`reduce`], with partition refinement on `threads` workers: the same quotient, state
/// numbering included, at every thread count.
pub fn reduce_on(lts: &Lts, equivalence: Equivalence, threads: Threads) -> Reduction {
    reduce_by(lts, equivalence, threads, BranchingAlgorithm::Auto)
}

/// As [`reduce_on`], computing the branching bisimulations with `algorithm` (the same
/// quotient with every algorithm).
pub fn reduce_by(
    lts: &Lts,
    equivalence: Equivalence,
    threads: Threads,
    algorithm: BranchingAlgorithm,
) -> Reduction {
    reduce_by_from(
        lts,
        equivalence,
        threads,
        algorithm,
        refinement::MIN_PARALLEL_EDGES,
    )
}

/// As [`reduce_by`], with the partition refined on `threads` workers from
/// `min_parallel_edges` edges on (see [`refinement::partition_by_from`]; tests pass 0): the
/// same quotient whatever the threshold.
pub fn reduce_by_from(
    lts: &Lts,
    equivalence: Equivalence,
    threads: Threads,
    algorithm: BranchingAlgorithm,
    min_parallel_edges: usize,
) -> Reduction {
    match equivalence {
        Equivalence::Strong
        | Equivalence::Branching
        | Equivalence::DivergencePreservingBranching => {
            let partition = refinement::partition_by_from(
                lts,
                equivalence,
                threads,
                algorithm,
                min_parallel_edges,
            );
            let (quotient, state_map) = quotient::quotient(lts, &partition);
            Reduction {
                quotient,
                state_map,
                rounds: partition.rounds,
            }
        }
        Equivalence::Trace | Equivalence::WeakTrace => {
            let weak = equivalence == Equivalence::WeakTrace;
            let dfa = determinise::determinise(lts, weak);
            let partition = refinement::partition_on(&dfa, Equivalence::Strong, threads);
            let (quotient, _) = quotient::quotient(&dfa, &partition);
            Reduction {
                quotient,
                state_map: Vec::new(),
                rounds: partition.rounds,
            }
        }
    }
}
