//! What a state of a [`CspSystem`] is, shown as CSPm: the whole process, or one entry per
//! component of a network state as FDR's debugger shows it ([`ComponentState`]).

#![forbid(unsafe_code)]

use super::system::{in_section, CspState, CspSystem, Shape};
use super::terms::term;
use crate::csp::value::Proc;
use crate::term::TermId;

/// One component of a state of a parallel composition (a leaf of the network), as FDR's
/// debugger shows it: see [`CspSystem::describe_components`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ComponentState {
    /// Where the component sits: the operand taken at each static operator from the top of
    /// the process (the processes of a parallel or interleaving numbered from 0, set arguments
    /// not counted; 0 under a hiding or a renaming; 0 and 1 for the sides of a link). `[1, 0]`
    /// is the first process of the top operator's second one. Empty for a whole process.
    pub path: Vec<u32>,
    /// The component's process as CSPm: the named process it is (`PHIL(3)`) where it is the
    /// unfolding of one, its printed form otherwise; `Ω` for the terminated process.
    pub process: String,
}

impl ComponentState {
    /// The path written as `[1].[0]` (empty for a whole process).
    pub fn position(&self) -> String {
        let parts: Vec<String> = self.path.iter().map(|i| format!("[{i}]")).collect();
        parts.join(".")
    }
}

impl std::fmt::Display for ComponentState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.process)
        } else {
            write!(f, "{} {}", self.position(), self.process)
        }
    }
}

/// Words of component paths a state is shown with at most (see
/// [`CspSystem::describe_components`]): a network of 1,000 leaves each 1,000 deep.
pub const MOST_PATH_WORDS: u64 = 1 << 20;

impl CspSystem {
    /// The process of `state` printed as CSPm (`Ω` for the terminated process).
    pub fn describe(&self, state: CspState) -> String {
        match self.state_process(state) {
            Some(p) => self.shared.sem.enc.script.show_proc(&p),
            None => "Ω".to_string(),
        }
    }

    /// The state shown per component, as FDR's debugger does: for a network state one entry
    /// per leaf of the parallel composition, in the order of the leaves (left to right in
    /// the process), each with its path in the network and its process (see
    /// [`ComponentState`]). A state that is not a network, and Ω, give one entry with an
    /// empty path whose process is [`CspSystem::describe`]'s; so does a network whose paths
    /// take more than [`MOST_PATH_WORDS`] words in all (a chain of parallel operators 20,000
    /// deep has paths of 2·10^8 words: listing them took gigabytes, after the check).
    pub fn describe_components(&self, state: CspState) -> Vec<ComponentState> {
        let whole = || {
            vec![ComponentState {
                path: Vec::new(),
                process: self.describe(state),
            }]
        };
        let shared = &*self.shared;
        let Shape::Network {
            node,
            positions,
            layout,
            index,
            ..
        } = &shared.shape
        else {
            return whole();
        };
        if node.leaf_path_words() > MOST_PATH_WORDS {
            return whole();
        }
        let mut key = vec![0; index.width()];
        index.read_key(state.0, &mut key);
        if layout.get(&key, 0) == layout.reserved(0) {
            return whole();
        }
        let enc = &shared.sem.enc;
        let calls = enc.calls_by_term();
        in_section(|sec| {
            node.leaf_paths()
                .into_iter()
                .enumerate()
                .map(|(p, path)| {
                    let t = positions[p].term(layout.get(&key, p));
                    let process = match calls.get(&t) {
                        Some(call) => enc.script.show_proc(call),
                        None => match enc.to_proc(term(sec, t)) {
                            Some(proc) => enc.script.show_proc(&proc),
                            None => "Ω".to_string(),
                        },
                    };
                    ComponentState { path, process }
                })
                .collect()
        })
    }

    /// The process `state` stands for (`None` for Ω): a normalised process term, calls at
    /// active positions unfolded.
    pub fn state_process(&self, state: CspState) -> Option<Proc> {
        let shared = &*self.shared;
        in_section(|sec| {
            let to_proc = |t: TermId| shared.sem.enc.to_proc(term(sec, t));
            match &shared.shape {
                Shape::Network {
                    node,
                    positions,
                    layout,
                    index,
                    ..
                } => {
                    let mut key = vec![0; index.width()];
                    index.read_key(state.0, &mut key);
                    if layout.get(&key, 0) == layout.reserved(0) {
                        return None;
                    }
                    let leaves: Vec<Proc> = positions
                        .iter()
                        .enumerate()
                        .map(|(p, leaves)| {
                            // An operand that has terminated (Ω) is shown as `SKIP`.
                            to_proc(leaves.term(layout.get(&key, p)))
                                .unwrap_or_else(|| Proc::new(crate::csp::ProcNode::Skip))
                        })
                        .collect();
                    Some(node.to_proc(&leaves))
                }
                Shape::Term { .. } => to_proc(shared.leaves.term(state.0)),
            }
        })
    }
}
