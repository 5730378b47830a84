//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;

use weft::csp::{CspError, Proc, ProcNode, Script};

pub mod failures_oracle;

/// Runs the `weft` binary with `args`: exit code, stdout, stderr.
pub fn weft(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .output()
        .expect("run weft");
    (
        out.status.code().expect("exit code"),
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

/// The test corpus, `<crate>/tests/corpus` (real inputs with their oracles; see its README), or
/// `$WEFT_CORPUS` if set. The suite reads nothing outside the checkout.
pub fn corpus_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WEFT_CORPUS") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Reads a tab-separated oracle file: the header row's column names and the data rows.
pub fn read_tsv(path: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines
        .next()
        .unwrap_or_else(|| panic!("{} is empty", path.display()))
        .split('\t')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// Slow, obviously correct versions of the derived facts of `weft::lts`, for comparison.
pub mod naive {
    use std::collections::{BTreeSet, VecDeque};
    use weft::lts::Lts;
    use weft::ts::TAU;

    /// States reachable from `from` by tau steps, at least `min_steps` (0 or 1) of them.
    pub fn tau_reach(lts: &Lts, from: u32, min_steps: usize) -> BTreeSet<u32> {
        let mut seen = BTreeSet::new();
        let mut queue = VecDeque::new();
        if min_steps == 0 {
            seen.insert(from);
            queue.push_back(from);
        } else {
            for (l, t) in lts.successors(from) {
                if l == TAU && seen.insert(t) {
                    queue.push_back(t);
                }
            }
        }
        while let Some(s) = queue.pop_front() {
            for (l, t) in lts.successors(s) {
                if l == TAU && seen.insert(t) {
                    queue.push_back(t);
                }
            }
        }
        seen
    }

    /// Divergence by search: `s` diverges iff some `t` tau-reachable from `s` lies on a tau
    /// cycle (reaches itself in one or more tau steps).
    pub fn divergent(lts: &Lts) -> Vec<bool> {
        let on_cycle: Vec<bool> = (0..lts.num_states())
            .map(|t| tau_reach(lts, t, 1).contains(&t))
            .collect();
        (0..lts.num_states())
            .map(|s| tau_reach(lts, s, 0).iter().any(|&t| on_cycle[t as usize]))
            .collect()
    }

    /// States reachable from the initial state by any transitions.
    pub fn reachable(lts: &Lts) -> Vec<bool> {
        let mut seen = vec![false; lts.num_states() as usize];
        let mut stack = vec![lts.initial()];
        seen[lts.initial() as usize] = true;
        while let Some(s) = stack.pop() {
            for (_, t) in lts.successors(s) {
                if !seen[t as usize] {
                    seen[t as usize] = true;
                    stack.push(t);
                }
            }
        }
        seen
    }

    /// Sorted distinct visible labels of `s`.
    pub fn enabled(lts: &Lts, s: u32) -> Vec<u32> {
        let set: BTreeSet<u32> = lts
            .successors(s)
            .map(|(l, _)| l)
            .filter(|&l| l != TAU)
            .collect();
        set.into_iter().collect()
    }

    /// No reachable state has a tau transition or one label leading to two targets.
    pub fn deterministic(lts: &Lts) -> bool {
        let reachable = reachable(lts);
        (0..lts.num_states())
            .filter(|&s| reachable[s as usize])
            .all(|s| {
                let out: Vec<(u32, u32)> = lts.successors(s).collect();
                out.iter()
                    .all(|&(l, t)| l != TAU && out.iter().all(|&(l2, t2)| l2 != l || t2 == t))
            })
    }

    /// The transitions as `(source, label name, target)`, sorted.
    pub fn named_transitions(lts: &Lts) -> Vec<(u32, String, u32)> {
        let mut out: Vec<(u32, String, u32)> = lts
            .transitions()
            .map(|(s, l, t)| (s, lts.label_names()[l as usize].clone(), t))
            .collect();
        out.sort();
        out
    }
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
            ProcNode::Stop | ProcNode::Skip | ProcNode::Div => {}
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
            | ProcNode::Timeout(a, b)
            | ProcNode::Exception(a, _, b) => {
                queue.push_back(a.clone());
                queue.push_back(b.clone());
            }
            ProcNode::Hide(a, _)
            | ProcNode::Rename(a, _)
            | ProcNode::Compressed(_, a)
            | ProcNode::Prioritise(a, _) => queue.push_back(a.clone()),
            ProcNode::Timed(t) => queue.extend(script.timed_parts(t)?),
        }
    }
    Ok(seen.len())
}
pub mod csp_oracle;
