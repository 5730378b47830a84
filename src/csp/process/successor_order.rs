//! The canonical order of a network state's successors of one label (see "Canonical order of
//! successors" in [`super::system`]): by their vectors of leaves, position by position.

#![forbid(unsafe_code)]

use super::layout::Layout;
use super::leaves::Position;
use super::system::{CspSystem, Shape, ThreadContext};
use super::terms::{term, Section};

impl CspSystem {
    /// Among the successors `ctx.out[from..]` (in label order, the moves of `ctx.labels` with
    /// keys `ctx.next`), puts those of one label in the canonical order of their keys and
    /// removes duplicates.
    #[cold]
    pub(super) fn order_ties(&self, ctx: &mut ThreadContext, sec: &Section<'_>, from: usize) {
        let Shape::Network {
            positions,
            layout,
            all_explicit,
            ..
        } = &self.shared.shape
        else {
            unreachable!("a network's state");
        };
        let width = ctx.key.len();
        let (next, found) = (&ctx.next, &ctx.found);
        let key = |i: u32| &next[i as usize * width..(i as usize + 1) * width];
        let mut out = from;
        let mut at = 0;
        while at < ctx.labels.len() {
            let label = ctx.labels[at];
            let end = at + ctx.labels[at..].partition_point(|&l| l == label);
            let run = &mut ctx.perm;
            run.clear();
            run.extend(at as u32..end as u32);
            run.sort_unstable_by(|&i, &j| {
                if found[i as usize].0 == found[j as usize].0 {
                    std::cmp::Ordering::Equal
                } else if *all_explicit {
                    key(i).cmp(key(j))
                } else {
                    self.cmp_keys(sec, positions, layout, key(i), key(j))
                }
            });
            let mut last = None;
            for &i in run.iter() {
                let n = found[i as usize].0;
                if last != Some(n) {
                    ctx.out[out] = (label, n);
                    out += 1;
                    last = Some(n);
                }
            }
            at = end;
        }
        ctx.out.truncate(out);
    }

    /// The canonical order of two different network keys (not Ω): position by position, an
    /// explicit leaf by its number, a lazy one by its term.
    fn cmp_keys(
        &self,
        sec: &Section<'_>,
        positions: &[Position],
        layout: &Layout,
        a: &[u32],
        b: &[u32],
    ) -> std::cmp::Ordering {
        for (p, position) in positions.iter().enumerate() {
            let (x, y) = (layout.get(a, p), layout.get(b, p));
            if x == y {
                continue;
            }
            return match position {
                Position::Explicit(_) => x.cmp(&y),
                Position::Lazy(table) => self
                    .shared
                    .sem
                    .enc
                    .cmp_terms(term(sec, table.term(x)), term(sec, table.term(y))),
            };
        }
        std::cmp::Ordering::Equal
    }
}
