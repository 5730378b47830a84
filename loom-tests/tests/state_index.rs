//! Loom models of the explorer's state index (`weft::explore::StateIndex`): lock-free insertion
//! (a compare-and-swap on an open-addressing slot) racing with other insertions and with the
//! replacement of the slot table, which runs in the exclusive section of the index's
//! busy-forbidden lock while insertions run in its shared sections.
//!
//! Under `cfg(loom)` the table starts with 2 slots, a thread takes one number at a time, and
//! the table doubles whenever the numbers taken would fill more than half of it: the second
//! number taken grows it to 4 slots, the third to 8. So every model below grows the table while
//! another thread probes it. The slot table sits in a loom `UnsafeCell`, so a growth that
//! overlaps a probe (or is not ordered after it) is reported as a race even when no answer
//! comes out wrong.
//!
//! The keys are chosen (by searching `hash_key`, outside the model) so that their probe
//! sequences meet: all start at the same slot in tables of 2, 4 and 8 slots, so the racing
//! compare-and-swaps are on one slot and the losers walk on along one chain, and in
//! `index_distinct_keys_during_growth` two keys have the same 32 hash bits, so the index must
//! compare the keys themselves.
//!
//! Run as `protocol.rs` (same command, same `LOOM_MAX_PREEMPTIONS`). With `--features mutant`
//! (a writer that enters its exclusive section without waiting for busy readers) every model
//! here must fail; the name filter `index_` selects them.
#![cfg(loom)]

mod common;

use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

use common::check;
use loom::sync::Arc;
use loom::thread;
use weft::explore::index::hash_key;
use weft::explore::{IndexHandle, StateIndex};

/// Slots of the largest table the models reach; keys that agree on their hash modulo this
/// start at one slot in every table of the models.
const LARGEST_TABLE: u64 = 16;

/// The first slot of `key` in a table of `LARGEST_TABLE` slots (the index probes from
/// `(hash >> 32) & (slots - 1)`).
fn start_slot(key: u32) -> u64 {
    (hash_key(&[key]) >> 32) % LARGEST_TABLE
}

/// `count` one-word keys, none in `avoid`, that start at `slot` in every table of the models.
/// None is 0, the contents of a key slot never written: a key read before its publication
/// must differ from the key.
fn keys_at_slot(slot: u64, count: usize, avoid: &[u32]) -> Vec<u32> {
    (1u32..)
        .filter(|k| start_slot(*k) == slot && !avoid.contains(k))
        .take(count)
        .collect()
}

/// Two distinct one-word keys with the same 32 hash bits (the slot entries' tag), found by the
/// birthday paradox (about 2^16 tries).
fn tag_twins() -> (u32, u32) {
    let mut seen: HashMap<u64, u32> = HashMap::new();
    for key in 1u32.. {
        let tag = hash_key(&[key]) >> 32;
        if let Some(&twin) = seen.get(&tag) {
            return (twin, key);
        }
        seen.insert(tag, key);
    }
    unreachable!("2^32 one-word keys have at most 2^32 tags, so two of them share one")
}

/// A thread's index handle that a thread unwinding from a failed model leaks instead of
/// dropping: dropping it leaves the index's lock, which takes the lock's mutex, and a writer
/// spinning on the failed thread (or the failed thread itself) may hold that mutex for ever,
/// turning the reported failure into a hang.
struct Member(Option<IndexHandle>);

impl Member {
    fn join(index: &StateIndex) -> Member {
        Member(Some(index.handle()))
    }
}

impl Deref for Member {
    type Target = IndexHandle;

    fn deref(&self) -> &IndexHandle {
        self.0
            .as_ref()
            .expect("a member holds its handle until dropped")
    }
}

impl DerefMut for Member {
    fn deref_mut(&mut self) -> &mut IndexHandle {
        self.0
            .as_mut()
            .expect("a member holds its handle until dropped")
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if std::thread::panicking() {
            std::mem::forget(self.0.take());
        }
    }
}

/// Inserts the one-word `key` and checks at once that its number reads back as `key`.
fn insert(index: &StateIndex, member: &mut Member, key: u32) -> (u32, bool) {
    let (number, inserted) = index
        .insert(member, &[key])
        .expect("a few keys fit in the index");
    let mut out = [0u32];
    index.read_key(number, &mut out);
    assert_eq!(
        out[0], key,
        "read_key({number}) right after inserting {key}"
    );
    (number, inserted)
}

/// After every thread was joined: each key reads back from its number, and a fresh handle
/// inserting it again gets the same number and `inserted == false` (the growths lost no entry).
fn check_all_kept(index: &StateIndex, numbered: &[(u32, u32)]) {
    let mut late = Member::join(index);
    let mut out = [0u32];
    for &(key, number) in numbered {
        index.read_key(number, &mut out);
        assert_eq!(out[0], key, "read_key({number}) after the join");
        assert_eq!(
            index.insert(&mut late, &[key]).unwrap(),
            (number, false),
            "key {key} lost or renumbered by a growth of the table"
        );
    }
    for (i, &(a, m)) in numbered.iter().enumerate() {
        for &(b, n) in &numbered[i + 1..] {
            assert!(a == b || m != n, "keys {a} and {b} share number {m}");
        }
        assert!((m as u64) < index.numbers_bound());
    }
}

/// Two threads each insert a private key (so that the table grows while the other probes),
/// then both insert one shared key: both get one number for it, exactly one of them inserted
/// it, and every key is kept with its number.
#[test]
fn index_same_key_during_growth() {
    let keys = keys_at_slot(3, 3, &[]);
    let (private, shared) = ([keys[0], keys[1]], keys[2]);
    check("index_same_key_during_growth", move || {
        let index = Arc::new(StateIndex::new(1));
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let index = index.clone();
                thread::spawn(move || {
                    let mut me = Member::join(&index);
                    let mine = insert(&index, &mut me, private[t]);
                    assert!(
                        mine.1,
                        "private key {} found before it was inserted",
                        private[t]
                    );
                    (mine.0, insert(&index, &mut me, shared))
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let [(private0, shared0), (private1, shared1)] = [results[0], results[1]];
        assert_eq!(shared0.0, shared1.0, "one key, two numbers");
        assert!(
            shared0.1 != shared1.1,
            "the shared key inserted by {} threads",
            shared0.1 as u8 + shared1.1 as u8
        );
        check_all_kept(
            &index,
            &[
                (private[0], private0),
                (private[1], private1),
                (shared, shared0.0),
            ],
        );
    });
}

/// Two threads each insert two distinct keys, all starting at one slot, the second keys with
/// the same 32 hash bits: the table grows twice while the other thread probes, the racing
/// compare-and-swaps are on one chain, and only a comparison of the keys tells the second keys
/// apart. All four get distinct numbers and are kept through the growths.
#[test]
fn index_distinct_keys_during_growth() {
    let (twin0, twin1) = tag_twins();
    let firsts = keys_at_slot(start_slot(twin0), 2, &[twin0, twin1]);
    let keys = [[firsts[0], twin0], [firsts[1], twin1]];
    check("index_distinct_keys_during_growth", move || {
        let index = Arc::new(StateIndex::new(1));
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let index = index.clone();
                thread::spawn(move || {
                    let mut me = Member::join(&index);
                    keys[t].map(|key| {
                        let (number, inserted) = insert(&index, &mut me, key);
                        assert!(inserted, "key {key} found before it was inserted");
                        number
                    })
                })
            })
            .collect();
        let numbers: Vec<[u32; 2]> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let numbered: Vec<(u32, u32)> = (0..2)
            .flat_map(|t| (0..2).map(move |i| (t, i)))
            .map(|(t, i)| (keys[t][i], numbers[t][i]))
            .collect();
        check_all_kept(&index, &numbered);
    });
}

/// Three threads insert one key at once: the three numbers they take grow the table twice
/// while the others probe it. All three get one number, exactly one inserted it.
#[test]
fn index_same_key_three_threads() {
    let key = keys_at_slot(1, 1, &[])[0];
    check("index_same_key_three_threads", move || {
        let index = Arc::new(StateIndex::new(1));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let index = index.clone();
                thread::spawn(move || {
                    let mut me = Member::join(&index);
                    insert(&index, &mut me, key)
                })
            })
            .collect();
        let results: Vec<(u32, bool)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        assert!(
            results.iter().all(|r| r.0 == results[0].0),
            "one key, several numbers: {results:?}"
        );
        let inserters = results.iter().filter(|r| r.1).count();
        assert_eq!(inserters, 1, "the key inserted by {inserters} threads");
        check_all_kept(&index, &[(key, results[0].0)]);
    });
}

/// Two threads each number a batch (`insert_many`, one shared section) of a private key, a
/// shared key and the private key again; the second batch's numbers grow the table while the
/// first batch probes it. Both get one number for the shared key, exactly one inserted it, and
/// the repeat in a batch finds the key its first occurrence inserted.
#[test]
fn index_batches_during_growth() {
    let keys = keys_at_slot(5, 3, &[]);
    let (private, shared) = ([keys[0], keys[1]], keys[2]);
    check("index_batches_during_growth", move || {
        let index = Arc::new(StateIndex::new(1));
        let threads: Vec<_> = (0..2)
            .map(|t| {
                let index = index.clone();
                thread::spawn(move || {
                    let mut me = Member::join(&index);
                    let mut found = Vec::new();
                    index
                        .insert_many(&mut me, &[private[t], shared, private[t]], &mut found)
                        .expect("a few keys fit in the index");
                    let mut out = [0u32];
                    for (key, &(number, _)) in [private[t], shared, private[t]].iter().zip(&found) {
                        index.read_key(number, &mut out);
                        assert_eq!(out[0], *key, "read_key({number}) right after the batch");
                    }
                    assert_eq!(found.len(), 3, "one answer per key of the batch");
                    assert!(
                        found[0].1,
                        "private key {} found before it was inserted",
                        private[t]
                    );
                    assert_eq!(
                        found[2],
                        (found[0].0, false),
                        "a key repeated in a batch numbered twice"
                    );
                    (found[0].0, found[1])
                })
            })
            .collect();
        let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let [(private0, shared0), (private1, shared1)] = [results[0], results[1]];
        assert_eq!(shared0.0, shared1.0, "one key, two numbers");
        assert!(
            shared0.1 != shared1.1,
            "the shared key inserted by {} threads",
            shared0.1 as u8 + shared1.1 as u8
        );
        check_all_kept(
            &index,
            &[
                (private[0], private0),
                (private[1], private1),
                (shared, shared0.0),
            ],
        );
    });
}
