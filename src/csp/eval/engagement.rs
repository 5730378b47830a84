//! Whether a process must perform an event before it terminates: the left operand of a `;`
//! that does guards what follows it as a prefix does (`(a -> SKIP) ; P`), which decides
//! whether a definition named there while it is being evaluated may stand for itself (see
//! `guards::recursive_reference`).

use super::*;

/// Most process nodes (and named calls) [`Evaluator::must_engage`] looks at; beyond, it
/// answers no (the safe answer).
const ENGAGEMENT_BUDGET: u32 = 4096;

impl Evaluator {
    /// True if every way `p` can terminate (✓) passes a visible event first (a process that
    /// cannot terminate at all qualifies). False when unsure: a hiding or a link parallel
    /// (their events may be hidden), a call not unfolded yet, a larger process than the
    /// budget.
    pub(super) fn must_engage(&self, p: &Proc) -> bool {
        let mut budget = ENGAGEMENT_BUDGET;
        self.engages(p, &mut budget)
    }

    fn engages(&self, p: &Proc, budget: &mut u32) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let all = |ps: &[Proc], budget: &mut u32| ps.iter().all(|q| self.engages(q, budget));
        match p.node() {
            // STOP and DIV never terminate
            ProcNode::Stop | ProcNode::Div | ProcNode::Prefix(_) => true,
            ProcNode::Skip => false,
            ProcNode::Call(c) => match self.memo.unfolds.get(c).map(|body| body.clone()) {
                Some(body) => self.engages(&body, budget),
                None => false,
            },
            ProcNode::ExtChoice(ps) | ProcNode::IntChoice(ps) => all(ps, budget),
            // a parallel terminates when every component has: one that must engage first
            // is enough (its events stay visible, synchronised or not)
            ProcNode::Interleave(ps) | ProcNode::Parallel(_, ps) => {
                ps.iter().any(|q| self.engages(q, budget))
            }
            ProcNode::AlphaParallel(cs) => cs.iter().any(|(_, q)| self.engages(q, budget)),
            ProcNode::Seq(l, r) => self.engages(l, budget) || self.engages(r, budget),
            ProcNode::Hide(..) | ProcNode::Link(..) => false,
            ProcNode::Rename(q, _)
            | ProcNode::Compressed(_, q)
            | ProcNode::Prioritise(q, _)
            // `P [| A |> Q` terminates as `P` does, or after an event of `A`
            | ProcNode::Exception(q, _, _) => self.engages(q, budget),
            // either side may end it
            ProcNode::Interrupt(l, r) | ProcNode::Timeout(l, r) => {
                self.engages(l, budget) && self.engages(r, budget)
            }
            ProcNode::Timed(t) => match &**t {
                // `TSTOP`, a timed prefix and `WAIT(n)` (n >= 1) perform `tock` or their
                // event first; `TSKIP` may terminate at once
                TimedProc::Stop(_) | TimedProc::Prefix(..) | TimedProc::Delay(..) => true,
                TimedProc::Skip(_) => false,
                TimedProc::SyncChoice(_, ps) => all(ps, budget),
                TimedProc::SyncInterrupt(l, _, r) => {
                    self.engages(l, budget) && self.engages(r, budget)
                }
                TimedProc::Priority(_, q) | TimedProc::Operand(_, q) => self.engages(q, budget),
                // the terminated operand of a timed parallel (made by the firing rules, not
                // written): unsure, the safe answer
                TimedProc::Terminated(_) => false,
            },
        }
    }
}
