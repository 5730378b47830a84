//! The canonical encodings of the states of a [`CspSystem`]
//! ([`TransitionSystem::encoded_width`](crate::ts::TransitionSystem::encoded_width)): what
//! lets a state leave the process that made it (to another process of a distributed run, or
//! to a checkpoint).
//!
//! - A network whose positions are all explicit encodes a state as its packed vector of leaf
//!   numbers: each position's leaves are numbered breadth first in the canonical order of
//!   their transitions when the system is made, so the vector depends on the script only.
//! - A process that is not a network, explored whole when the system was made
//!   ([`CspSystem::new`]: at most [`EXPLICIT_LEAVES`] states), encodes a state as its number (one word): its states are
//!   numbered breadth first in the canonical order of transitions, as an explicit leaf's are.
//!
//! Other systems number some processes as met and have no canonical encoding of a fixed
//! width; every system has the structural encoding of [`super::structural`] (of a varying
//! length), which writes such processes as their terms.

#![forbid(unsafe_code)]

use super::labels::TICK;
use super::layout::Layout;
use super::leaves::Position;
use super::system::{CspState, CspSystem, Shape, EXPLICIT_LEAVES};
use crate::csp::error::CspError;
use crate::ts::{Label, NoCanonicalEncoding};

impl CspSystem {
    /// The words of the canonical encoding of every state, or why there is none (see the
    /// module documentation).
    pub(super) fn encoding_width(&self) -> Result<usize, NoCanonicalEncoding> {
        match &self.shared.shape {
            // One more word when the last one's highest bit is used (see the trait).
            Shape::Network {
                layout,
                all_explicit: true,
                ..
            } => Ok(layout.words() + usize::from(!layout.top_bit_free())),
            Shape::Network { positions, .. } => {
                let lazy = positions
                    .iter()
                    .position(|p| matches!(p, Position::Lazy(_)))
                    .unwrap_or(0);
                Err(NoCanonicalEncoding(format!(
                    "component {} of the process has more than {EXPLICIT_LEAVES} states, or \
                     could not be explored on its own: its states are numbered as met, which \
                     another process or a later run would not repeat",
                    lazy + 1
                )))
            }
            // Fewer than 2^31 states: the top bit is free.
            Shape::Term {
                explored: Some(_), ..
            } => Ok(1),
            Shape::Term { explored: None } => Err(NoCanonicalEncoding(format!(
                "the process is not a parallel composition (a network) of processes explored \
                 on their own, and was not explored whole when it was made (it has more than \
                 {EXPLICIT_LEAVES} states, or could not be explored): its states are numbered \
                 as met, which another process or a later run would not repeat"
            ))),
        }
    }

    /// A bound on the encodings, in bits (see the trait).
    pub(super) fn encoding_bits(&self) -> Result<u32, NoCanonicalEncoding> {
        self.encoding_width()?;
        match &self.shared.shape {
            // An extra word, where there is one, is always 0.
            Shape::Network { layout, .. } => Ok(layout.bits()),
            Shape::Term { explored, .. } => {
                Ok(Layout::bits_for(u64::from(explored.unwrap_or(u32::MAX))))
            }
        }
    }

    /// Writes the encoding of `state` (a system with an encoding).
    pub(super) fn encode(&self, state: &CspState, words: &mut [u32]) {
        words.fill(0);
        match &self.shared.shape {
            Shape::Network { index, .. } => index.read_key(state.0, &mut words[..index.width()]),
            Shape::Term { .. } => words[0] = state.0,
        }
    }

    /// The state encoded by `words`, if any.
    pub(super) fn decode(&self, words: &[u32]) -> Option<CspState> {
        match &self.shared.shape {
            Shape::Term {
                explored: Some(count),
            } => (words.len() == 1 && words[0] < *count).then(|| CspState(words[0])),
            Shape::Network {
                all_explicit: true, ..
            } => self.decode_network(words),
            _ => None,
        }
    }

    /// The state of a network whose positions are all explicit encoded by `words`, if any.
    fn decode_network(&self, words: &[u32]) -> Option<CspState> {
        let Shape::Network {
            positions,
            layout,
            index,
            omega,
            ..
        } = &self.shared.shape
        else {
            return None;
        };
        let width = layout.words();
        if Ok(words.len()) != self.encoding_width() || words[width..].iter().any(|&w| w != 0) {
            return None;
        }
        let words = &words[..width];
        if words == layout.omega().as_slice() {
            return Some(CspState(*omega));
        }
        // Every field must name a leaf of its position, and bits outside fields be clear.
        let mut rebuilt = vec![0; layout.words()];
        for (p, position) in positions.iter().enumerate() {
            let Position::Explicit(lts) = position else {
                return None;
            };
            let n = layout.get(words, p);
            if n as usize >= lts.terms.len() {
                return None;
            }
            layout.set(&mut rebuilt, p, n);
        }
        if rebuilt != words {
            return None;
        }
        self.with_context(|ctx, _| {
            let handle = ctx.handle.as_mut()?;
            index.insert(handle, words).ok().map(|(n, _)| CspState(n))
        })
    }

    /// The successors of the encoding `words`, as encodings, in the order
    /// [`TransitionSystem::for_each_successor`](crate::ts::TransitionSystem::for_each_successor)
    /// gives the same states: an explored term's transitions as they were numbered, a
    /// network's computed on the encoding.
    pub(super) fn encoded_successors(
        &self,
        words: &[u32],
        emit: &mut dyn FnMut(Label, &[u32]),
    ) -> Result<(), CspError> {
        match &self.shared.shape {
            Shape::Term { .. } => {
                // Every state of an explored term has its transitions.
                if let Some(moves) = self.shared.leaves.known_moves(words[0]) {
                    for &(label, target) in moves.iter() {
                        emit(label, &[target]);
                    }
                }
                Ok(())
            }
            Shape::Network { .. } => self.encoded_network_successors(words, emit),
        }
    }

    /// The successors of the canonical encoding `words` of a network state whose positions
    /// are all explicit, as encodings, in the order [`CspSystem::network_successors`] gives
    /// the same states: no state is numbered (see
    /// [`TransitionSystem::for_each_encoded_successor`]).
    fn encoded_network_successors(
        &self,
        words: &[u32],
        emit: &mut dyn FnMut(Label, &[u32]),
    ) -> Result<(), CspError> {
        let Shape::Network { layout, .. } = &self.shared.shape else {
            unreachable!("a network's state");
        };
        let width = layout.words();
        let mut result = Ok(());
        self.with_context(|ctx, sec| {
            ctx.key.clear();
            ctx.key.extend_from_slice(&words[..width]);
            let tick = match self.successor_keys(ctx, sec) {
                Ok(Some(tick)) => tick,
                Ok(None) => return,
                Err(e) => {
                    result = Err(e);
                    return;
                }
            };
            // As `network_successors` orders them: labels in the order of `ctx.labels`, the
            // keys of one label increasing and without duplicates (the canonical order of an
            // all-explicit network, see `order_ties`), ✓ where that puts it.
            let (next, labels) = (&ctx.next, &ctx.labels);
            let key = |i: u32| &next[i as usize * width..(i as usize + 1) * width];
            let perm = &mut ctx.perm;
            perm.clear();
            let mut at = 0;
            while at < labels.len() {
                let end = at + labels[at..].partition_point(|&l| l == labels[at]);
                let run = perm.len();
                perm.extend(at as u32..end as u32);
                perm[run..].sort_unstable_by(|&i, &j| key(i).cmp(key(j)));
                let mut kept = run;
                for r in run..perm.len() {
                    if kept == run || key(perm[kept - 1]) != key(perm[r]) {
                        perm[kept] = perm[r];
                        kept += 1;
                    }
                }
                perm.truncate(kept);
                at = end;
            }
            let tick_at = if tick {
                perm.partition_point(|&i| labels[i as usize] < TICK)
            } else {
                usize::MAX
            };
            let mut out = std::mem::take(&mut ctx.found_words);
            out.clear();
            out.resize(words.len(), 0);
            // Only a state with ✓ needs Ω (made here, so that other states allocate nothing).
            let omega = if tick { layout.omega() } else { Vec::new() };
            for (n, &i) in perm.iter().enumerate() {
                if n == tick_at {
                    out[..width].copy_from_slice(&omega);
                    emit(TICK, &out);
                }
                out[..width].copy_from_slice(key(i));
                emit(labels[i as usize], &out);
            }
            if tick_at == perm.len() {
                out[..width].copy_from_slice(&omega);
                emit(TICK, &out);
            }
            ctx.found_words = out;
        });
        result
    }
}
