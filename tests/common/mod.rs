//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use weft::csp::{CspError, Proc, ProcNode, Script};

/// The shared test corpus: `$WEFT_CORPUS`, else `<crate>/../shared/corpus`, else
/// `/work/shared/corpus`.
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WEFT_CORPUS") {
        return PathBuf::from(dir);
    }
    let beside = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if beside.is_dir() {
        return beside;
    }
    PathBuf::from("/work/shared/corpus")
}

/// Visits every process term reachable from `root` by unfolding calls and prefixes (at most
/// `limit` terms), so that every prefix and call on the way is evaluated.
pub fn walk(script: &Script, root: &Proc, limit: usize) -> Result<usize, CspError> {
    let mut seen: HashSet<Proc> = HashSet::new();
    let mut queue = VecDeque::from([root.clone()]);
    while let Some(p) = queue.pop_front() {
        if seen.len() >= limit || !seen.insert(p.clone()) {
            continue;
        }
        match p.node() {
            ProcNode::Stop | ProcNode::Skip => {}
            ProcNode::Call(c) => queue.push_back(script.unfold(c)?),
            ProcNode::Prefix(pc) => {
                for (_, next) in script.prefix_transitions(pc)? {
                    queue.push_back(next);
                }
            }
            ProcNode::ExtChoice(ps) | ProcNode::IntChoice(ps) | ProcNode::Interleave(ps) => {
                queue.extend(ps.iter().cloned())
            }
            ProcNode::Parallel(_, ps) => queue.extend(ps.iter().cloned()),
            ProcNode::AlphaParallel(ps) => queue.extend(ps.iter().map(|(_, p)| p.clone())),
            ProcNode::Seq(a, b)
            | ProcNode::Link(a, _, b)
            | ProcNode::Interrupt(a, b)
            | ProcNode::Timeout(a, b) => {
                queue.push_back(a.clone());
                queue.push_back(b.clone());
            }
            ProcNode::Hide(a, _) | ProcNode::Rename(a, _) => queue.push_back(a.clone()),
        }
    }
    Ok(seen.len())
}
