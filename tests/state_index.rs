//! `weft::explore::StateIndex` against a `HashMap` oracle: random key sequences in one thread
//! (proptest), one key at a time (`insert`) or in batches (`insert_many`), and many threads
//! inserting one large key set at once, each in its own order, through many growths of the
//! slot table.
//!
//! Run in release mode (`cargo test --release --test state_index`); the stress test does real
//! work.

use std::collections::HashMap;
use std::sync::Barrier;

use proptest::prelude::*;
use weft::explore::index::BLOCK;
use weft::explore::{IndexHandle, StateIndex};

/// One step of a random key sequence.
#[derive(Debug, Clone)]
enum Step {
    /// Insert this key (drawn from a small range, so it often repeats an earlier one).
    Fresh(Vec<u32>),
    /// Insert again the key of an earlier step (index taken modulo the steps so far).
    Again(usize),
}

/// A width, a number of handles (used in turn from one thread), a batch size and a key
/// sequence.
fn scenario() -> impl Strategy<Value = (usize, usize, usize, Vec<Step>)> {
    (
        1usize..6,
        1usize..4,
        prop_oneof![Just(1usize), 2usize..10, Just(100)],
        prop_oneof![Just(2u32), Just(5), Just(1 << 16)],
    )
        .prop_flat_map(|(width, handles, batch, range)| {
            let step = prop_oneof![
                3 => prop::collection::vec(0..range, width).prop_map(Step::Fresh),
                1 => any::<usize>().prop_map(Step::Again),
            ];
            (
                Just(width),
                Just(handles),
                Just(batch),
                // Up to 6000 steps: with the wide range, enough distinct keys to grow the table
                // (it starts with 4096 slots and grows when half full).
                prop::collection::vec(step, 0..6000),
            )
        })
}

/// The keys of `steps`, each `Again` resolved to the key of the step it names.
fn resolve(width: usize, steps: &[Step]) -> Vec<Vec<u32>> {
    let mut keys: Vec<Vec<u32>> = Vec::with_capacity(steps.len());
    for step in steps {
        let key = match step {
            Step::Fresh(key) => key.clone(),
            Step::Again(j) if !keys.is_empty() => keys[j % keys.len()].clone(),
            Step::Again(_) => vec![7; width],
        };
        keys.push(key);
    }
    keys
}

/// Inserts the keys of `steps`, `batch` at a time (`insert` when 1, `insert_many` otherwise),
/// through `handles` handles in turn, checking every answer against a `HashMap` oracle, then
/// checks every key's number and contents and the numbers' bound.
fn check_against_oracle(width: usize, handles: usize, batch: usize, steps: &[Step]) {
    let index = StateIndex::new(width);
    assert_eq!(index.width(), width);
    let mut hs: Vec<IndexHandle> = (0..handles).map(|_| index.handle()).collect();
    let mut oracle: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut by_number: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut out = vec![0u32; width];
    let mut found = Vec::new();
    for (c, chunk) in resolve(width, steps).chunks(batch).enumerate() {
        let handle = &mut hs[c % handles];
        found.clear();
        if batch == 1 {
            found.push(index.insert(handle, &chunk[0]).unwrap());
        } else {
            // `insert_many` appends: what is there already stays.
            found.push((u32::MAX, false));
            index
                .insert_many(handle, &chunk.concat(), &mut found)
                .unwrap();
            assert_eq!(found.remove(0), (u32::MAX, false));
        }
        assert_eq!(found.len(), chunk.len(), "one answer per key");
        for (key, &(number, new)) in chunk.iter().zip(&found) {
            match oracle.get(key) {
                Some(&known) => {
                    assert_eq!(number, known, "key {key:?} changed its number");
                    assert!(!new, "key {key:?} inserted twice");
                }
                None => {
                    assert!(new, "new key {key:?} reported as known (number {number})");
                    if let Some(other) = by_number.insert(number, key.clone()) {
                        panic!("keys {other:?} and {key:?} share number {number}");
                    }
                    oracle.insert(key.clone(), number);
                }
            }
            assert!(
                (number as u64) < index.numbers_bound(),
                "number {number} not below numbers_bound() {}",
                index.numbers_bound()
            );
            // The number's key is readable at once.
            index.read_key(number, &mut out);
            assert_eq!(&out, key);
        }
    }
    for (key, &number) in &oracle {
        index.read_key(number, &mut out);
        assert_eq!(&out, key, "read_key({number})");
        // A second insertion, after everything, still finds it.
        assert_eq!(index.insert(&mut hs[0], key).unwrap(), (number, false));
    }
    let distinct = oracle.len() as u64;
    let bound = index.numbers_bound();
    assert!(bound >= distinct);
    let block = BLOCK as u64;
    if batch == 1 {
        // Unused numbers are only the rest of each handle's current block.
        assert!(
            bound <= distinct + handles as u64 * block,
            "numbers_bound() {bound} for {distinct} keys and {handles} handles"
        );
        if handles == 1 {
            // One handle takes its numbers in order: they are exactly 0..distinct.
            let mut numbers: Vec<u32> = oracle.values().copied().collect();
            numbers.sort_unstable();
            assert!(numbers.iter().enumerate().all(|(i, &n)| n as usize == i));
        }
    } else {
        // A batch that does not fit in a handle's block leaves the rest of it (fewer numbers
        // than the batch) and takes a new one of at least `BLOCK` numbers.
        let batch = batch as u64;
        let blocks = bound.div_ceil(block);
        assert!(
            bound <= distinct + blocks * (batch - 1) + handles as u64 * block.max(batch),
            "numbers_bound() {bound} for {distinct} keys, {handles} handles, batches of {batch}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn one_thread_matches_a_hashmap((width, handles, batch, steps) in scenario()) {
        check_against_oracle(width, handles, batch, &steps);
    }
}

/// The oracle check on fixed sequences that grow the table many times (one and three handles,
/// one key at a time and in batches).
#[test]
fn one_thread_through_many_growths() {
    for (handles, batch) in [(1, 1), (3, 1), (1, 7), (3, 100)] {
        let steps: Vec<Step> = (0..150_000u32)
            .map(|i| {
                if i % 3 == 2 {
                    Step::Again(i as usize * 7919)
                } else {
                    Step::Fresh(vec![i % 251, i / 251, i.wrapping_mul(0x9e37_79b9)])
                }
            })
            .collect();
        check_against_oracle(3, handles, batch, &steps);
    }
}

/// A small deterministic generator (xorshift64*), for the threads' insertion orders.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A uniformly shuffled `0..n` (Fisher–Yates).
    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        order
    }
}

/// The stress test's keys: distinct, width 3, some sharing words (and so hash work).
fn stress_keys(count: u32) -> Vec<[u32; 3]> {
    (0..count)
        .map(|i| {
            [
                i % 1000,
                i / 1000,
                i.wrapping_mul(0x85eb_ca6b) ^ 0x5bd1_e995,
            ]
        })
        .collect()
}

/// The orders in which the stress test's threads insert the keys.
#[derive(Clone, Copy, Debug)]
enum Orders {
    /// Each thread its own random order: the threads race on the slot table's growth.
    Distinct,
    /// One random order for all: the threads also race to insert each key.
    Same,
}

/// Keys thread `t` of the stress test inserts at a time (`insert` for 1, `insert_many` else).
fn batch_size(t: usize) -> usize {
    [1, 5, 12, 1][t % 4]
}

/// `threads` threads, released together by a barrier, each insert every key of `keys` (and read
/// each key back at once), in the order `orders` says, `batch_size(t)` keys at a time. Returns, per thread, `(number,
/// inserted)` by key position.
fn insert_concurrently(
    index: &StateIndex,
    keys: &[[u32; 3]],
    threads: usize,
    orders: Orders,
    seed: u64,
) -> Vec<Vec<(u32, bool)>> {
    let start = Barrier::new(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let start = &start;
                scope.spawn(move || {
                    let stream = match orders {
                        Orders::Distinct => t as u64 + 1,
                        Orders::Same => 0,
                    };
                    let order = XorShift(seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
                        .permutation(keys.len());
                    let mut handle = index.handle();
                    let mut results = vec![(u32::MAX, false); keys.len()];
                    let mut out = [0u32; 3];
                    start.wait();
                    let mut batch_keys = Vec::new();
                    let mut found = Vec::new();
                    for positions in order.chunks(batch_size(t)) {
                        found.clear();
                        if let [k] = positions {
                            found.push(index.insert(&mut handle, &keys[*k]).unwrap());
                        } else {
                            batch_keys.clear();
                            batch_keys.extend(positions.iter().flat_map(|&k| keys[k]));
                            index
                                .insert_many(&mut handle, &batch_keys, &mut found)
                                .unwrap();
                        }
                        for (&k, &(number, new)) in positions.iter().zip(&found) {
                            // Readable by this thread at once, while the others insert and grow.
                            index.read_key(number, &mut out);
                            assert_eq!(out, keys[k], "read_key({number}) during insertion");
                            results[k] = (number, new);
                        }
                    }
                    results
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    })
}

/// Several threads insert the same 200 000 keys at once (the table grows from 4096 slots to
/// 512Ki meanwhile), each in its own order or all in one, one key or a batch at a time: every
/// key gets one number, which all threads agree on, exactly one thread
/// inserted it, distinct keys have distinct numbers, and every key reads back.
#[test]
fn threads_agree_on_every_number() {
    const KEYS: u32 = 200_000;
    let keys = stress_keys(KEYS);
    for threads in [2, 4] {
        for (round, orders) in [
            Orders::Distinct,
            Orders::Same,
            Orders::Distinct,
            Orders::Same,
        ]
        .into_iter()
        .enumerate()
        {
            let seed = round as u64 * 31 + threads as u64;
            let index = StateIndex::new(3);
            let results = insert_concurrently(&index, &keys, threads, orders, seed);
            let bound = index.numbers_bound();
            let context = format!("{threads} threads, round {round} ({orders:?} orders)");
            assert!(bound >= KEYS as u64, "{context}: numbers_bound() {bound}");
            // Each thread holds at most one partly used block, and a batch that did not fit in
            // a thread's block left the rest of it (fewer numbers than the batch).
            let block = BLOCK as u64;
            let largest_batch = (0..threads).map(batch_size).max().unwrap() as u64;
            assert!(
                bound
                    <= KEYS as u64
                        + bound.div_ceil(block) * (largest_batch - 1)
                        + threads as u64 * block,
                "{context}: numbers_bound() {bound}: numbers taken but not given"
            );
            let mut owner = vec![u32::MAX; bound as usize];
            let mut out = [0u32; 3];
            for (k, key) in keys.iter().enumerate() {
                let number = results[0][k].0;
                assert!((number as u64) < bound);
                for (t, per_thread) in results.iter().enumerate() {
                    assert_eq!(
                        per_thread[k].0, number,
                        "{context}: thread {t} numbered key {k} differently"
                    );
                }
                let inserters = results.iter().filter(|r| r[k].1).count();
                assert_eq!(
                    inserters, 1,
                    "{context}: key {k} inserted by {inserters} threads"
                );
                assert_eq!(
                    owner[number as usize],
                    u32::MAX,
                    "{context}: keys {} and {k} share number {number}",
                    owner[number as usize]
                );
                owner[number as usize] = k as u32;
                index.read_key(number, &mut out);
                assert_eq!(&out, key);
            }
            // After the join, a fresh handle finds every key with its number.
            let mut late = index.handle();
            for (k, key) in keys.iter().enumerate() {
                assert_eq!(
                    index.insert(&mut late, key).unwrap(),
                    (results[0][k].0, false)
                );
            }
            // Lookups take no numbers beyond the late handle's one block.
            assert!(index.numbers_bound() <= bound + BLOCK as u64);
        }
    }
}
