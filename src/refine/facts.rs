//! Derived facts of an LTS that the checker needs for every state: stability and divergence.
//!
//! Interim: these belong to `lts/` (as `Lts::is_stable` and `Lts::is_divergent`); this private
//! copy is replaced by those methods once they land.

use crate::lts::Lts;
use crate::ts::TAU;

/// Per-state stability and divergence of one LTS.
pub(crate) struct StateFacts {
    stable: Vec<bool>,
    divergent: Vec<bool>,
}

impl StateFacts {
    /// Computes the facts of every state of `lts`.
    pub(crate) fn new(lts: &Lts) -> StateFacts {
        let stable = (0..lts.num_states())
            .map(|s| !lts.outgoing(s).0.contains(&TAU))
            .collect();
        StateFacts {
            stable,
            divergent: divergent_states(lts),
        }
    }

    /// `state` has no outgoing tau transition.
    #[inline]
    pub(crate) fn is_stable(&self, state: u32) -> bool {
        self.stable[state as usize]
    }

    /// An infinite tau path starts in `state`.
    #[inline]
    pub(crate) fn is_divergent(&self, state: u32) -> bool {
        self.divergent[state as usize]
    }
}

const UNVISITED: u32 = u32::MAX;

/// Marks every state from which an infinite tau path starts: a state that reaches, by taus, a
/// tau-SCC with a cycle. Tarjan's algorithm (iterative) on the tau edges; SCCs complete in
/// reverse topological order, so the tau-successors outside an SCC are decided before it.
fn divergent_states(lts: &Lts) -> Vec<bool> {
    let n = lts.num_states() as usize;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut divergent = vec![false; n];
    let mut done = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut calls: Vec<(u32, usize)> = Vec::new();
    let mut members: Vec<u32> = Vec::new();
    let mut counter = 0u32;
    for root in 0..n as u32 {
        if index[root as usize] != UNVISITED {
            continue;
        }
        index[root as usize] = counter;
        low[root as usize] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        calls.push((root, 0));
        while let Some(&(v, start)) = calls.last() {
            let (labels, targets) = lts.outgoing(v);
            let mut pos = start;
            let mut next = None;
            while pos < labels.len() {
                let i = pos;
                pos += 1;
                if labels[i] != TAU {
                    continue;
                }
                let w = targets[i];
                if index[w as usize] == UNVISITED {
                    next = Some(w);
                    break;
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
            }
            if let Some(top) = calls.last_mut() {
                top.1 = pos;
            }
            if let Some(w) = next {
                index[w as usize] = counter;
                low[w as usize] = counter;
                counter += 1;
                stack.push(w);
                on_stack[w as usize] = true;
                calls.push((w, 0));
                continue;
            }
            calls.pop();
            if low[v as usize] == index[v as usize] {
                members.clear();
                loop {
                    let w = stack.pop().expect("Tarjan stack holds the SCC");
                    on_stack[w as usize] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                let mut cyclic = members.len() > 1;
                for &m in &members {
                    for (l, t) in lts.successors(m) {
                        if l != TAU {
                            continue;
                        }
                        // A tau edge inside the SCC of a single state is a self-loop; an edge
                        // to a completed SCC carries that SCC's divergence.
                        if t == m || (done[t as usize] && divergent[t as usize]) {
                            cyclic = true;
                        }
                    }
                }
                for &m in &members {
                    divergent[m as usize] = cyclic;
                    done[m as usize] = true;
                }
            }
            if let Some(&(u, _)) = calls.last() {
                low[u as usize] = low[u as usize].min(low[v as usize]);
            }
        }
    }
    divergent
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lts(n: u32, t: &[(u32, u32, u32)]) -> Lts {
        Lts::from_transitions(0, n, vec!["tau".into(), "a".into()], t)
    }

    #[test]
    fn divergence_through_tau_cycles_and_self_loops() {
        // 0 -tau-> 1 -tau-> 2 -tau-> 1 (cycle), 3 -tau-> 3 (self-loop), 4 -a-> 4, 5 -tau-> 4
        let l = lts(
            6,
            &[
                (0, 0, 1),
                (1, 0, 2),
                (2, 0, 1),
                (3, 0, 3),
                (4, 1, 4),
                (5, 0, 4),
            ],
        );
        let f = StateFacts::new(&l);
        let div: Vec<bool> = (0..6).map(|s| f.is_divergent(s)).collect();
        assert_eq!(div, vec![true, true, true, true, false, false]);
        let stable: Vec<bool> = (0..6).map(|s| f.is_stable(s)).collect();
        assert_eq!(stable, vec![false, false, false, false, true, false]);
    }

    #[test]
    fn a_visible_cycle_is_not_a_divergence() {
        let l = lts(2, &[(0, 1, 1), (1, 1, 0), (0, 0, 1)]);
        let f = StateFacts::new(&l);
        assert!(!f.is_divergent(0));
        assert!(!f.is_divergent(1));
    }
}
