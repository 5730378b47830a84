//! Loom models of the engine's level protocol (`weft::explore::engine`): workers offering
//! states to an exact index during one BFS level. A state met by two workers becomes one
//! candidate (one compare-and-swap wins the state's number), and the candidate keeps the least
//! key of the steps that found it, whichever worker stored its key first: the winner stores its
//! key before it publishes the candidate (release), and a loser lowers it only after it has
//! seen the candidate (acquire), so a lowering is never overwritten by the first store.
//!
//! Run as `protocol.rs` (same command, same `LOOM_MAX_PREEMPTIONS`).
#![cfg(loom)]

mod common;

use common::check;
use loom::sync::Arc;
use loom::thread;
use weft::explore::{LevelSlots, LevelWriter, NumberedVisited, Offer, Visited};
use weft::ts::{Label, TransitionSystem};

/// A system whose states are their own numbers (only the index is exercised).
struct Numbers;

impl TransitionSystem for Numbers {
    type State = u32;

    fn initial_state(&self) -> u32 {
        0
    }

    fn for_each_successor(&self, _: &u32, _: &mut dyn FnMut(Label, u32)) {}

    fn label_name(&self, _: Label) -> String {
        String::new()
    }

    fn state_number(&self, state: &u32) -> Option<weft::ts::StateNumber> {
        Some(weft::ts::StateNumber(*state))
    }
}

static NUMBERS: Numbers = Numbers;

/// Two workers offer one state with keys `a` and `b`: one offer makes it new, the other finds
/// it current, and its key is the least.
fn same_state(a: u64, b: u64) {
    let index = Arc::new(NumberedVisited::new(&NUMBERS));
    let slots = Arc::new(LevelSlots::new(0));
    let worker = |key: u64| {
        let index = index.clone();
        let slots = slots.clone();
        thread::spawn(move || index.offer(&7, key, &mut LevelWriter::new(&slots)))
    };
    let (first, second) = (worker(a), worker(b));
    let offers = [
        first.join().expect("worker"),
        second.join().expect("worker"),
    ];
    let new: Vec<weft::explore::ProvisionalId> = offers
        .iter()
        .filter_map(|o| match o {
            Offer::New(p) => Some(*p),
            _ => None,
        })
        .collect();
    assert_eq!(new.len(), 1, "{offers:?}");
    let prov = new[0];
    assert!(
        offers
            .iter()
            .any(|o| matches!(o, Offer::Current(p, _) if *p == prov)),
        "{offers:?}"
    );
    assert_eq!(slots.least_key(prov), Some(a.min(b)));
}

#[test]
fn level_one_state_keeps_the_least_key() {
    check("level_one_state_keeps_the_least_key", || same_state(5, 9));
    check("level_one_state_keeps_the_least_key_reversed", || {
        same_state(9, 5)
    });
}

#[test]
fn level_distinct_states_are_distinct_candidates() {
    check("level_distinct_states_are_distinct_candidates", || {
        let index = Arc::new(NumberedVisited::new(&NUMBERS));
        let slots = Arc::new(LevelSlots::new(0));
        let worker = |state: u32, key: u64| {
            let index = index.clone();
            let slots = slots.clone();
            thread::spawn(move || index.offer(&state, key, &mut LevelWriter::new(&slots)))
        };
        let (one, two) = (worker(1, 3), worker(2, 4));
        let (one, two) = (one.join().expect("worker"), two.join().expect("worker"));
        let (Offer::New(p), Offer::New(q)) = (one, two) else {
            panic!("{one:?} {two:?}");
        };
        assert_ne!(p, q);
        assert_eq!(slots.least_key(p), Some(3));
        assert_eq!(slots.least_key(q), Some(4));
    });
}
