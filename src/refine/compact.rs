//! The product search of a check kept in compact storage: each pair `(normal-form node,
//! implementation state)` is one `u64`, the implementation's canonical encoding
//! ([`crate::ts::TransitionSystem::encoded_bits`]) with the node's number in the bits above
//! it, held in the explorer's [`CompactSet`] (the implementation is driven as a
//! [`crate::explore::compact::Packed`] system); no ids, no parents, only the level being
//! expanded ([`RunOptions::frontier_only`]). A check that holds then costs about what a count-only
//! exploration of the implementation costs (a dozen bytes per pair), where the indexed search
//! keeps a number, a parent and an antichain entry per pair.
//!
//! The pairs are exact (no antichain: a pair is covered only by itself), so the search visits
//! the reachable product, which is the same at every thread count. Its first failing level is
//! the indexed search's too (a pair pruned by the antichain has a subset pair at the same or
//! an earlier level, from which every violation is at most as far), so a failing check is
//! rerun indexed, stopping at that level, for the canonical shortest counterexample.
//!
//! Divergences are found as in the indexed search, remembered by encoding
//! ([`crate::ts::TransitionSystem::state_key`]).
//!
//! Where the nodes do not fit beside the encoding, or the encoding takes more than two words,
//! a pair is kept as the node followed by the encoding ([`EncodedPairs`], in a [`WideSet`]).
//!
//! A distributed run shares the search among its processes through [`SharedPairSearch`],
//! which `dist` implements and the CLI hands in ([`SystemOptions::distributed`]): the pairs
//! travel as keys ([`crate::explore::keyed`]), of one `u64` or of the node and a wider
//! encoding, so `refine` knows nothing of processes. A check that fails there is searched
//! again by the processes, numbering the pairs as the engine does (an antichain kept by the
//! owner of each implementation state, [`Antichained`]), and the path to the least violation
//! they rebuild is replayed here ([`search_product_witness_shared`], [`replay_witness`]).

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};

use super::product::{Product, SpecEvents};
use super::shared_normal::SharedNormalForm;
use super::{CheckStats, Model, RefineError, SystemOptions};
use crate::explore::compact::{pair_key, CompactSet, Packed};
use crate::explore::keyed::{
    EncodedKeys, FoundAt, KeyedProduct, PackedKeys, PairOptions, PairSearch, PairWitness, WideSet,
};
use crate::explore::{
    Driven, Engine, Found, LevelWriter, Offer, ProvisionalId, RunOptions, StopReason, StopSignal,
    Visited,
};
use crate::ts::{Label, TransitionSystem};

/// A search of the pairs of a product shared among the processes of a distributed run, each
/// pair kept by one of them: what `dist` offers (the CLI hands it in through
/// [`SystemOptions::distributed`]), so that `refine` needs to know nothing of processes. Every
/// process of the run makes the same searches, in the same order, with the same products.
pub trait SharedPairSearch: Send + Sync {
    /// Searches `product` breadth first (its pairs keyed alike in every process) to the end
    /// of its first level with a violation, or until a level adds nothing; the same result
    /// in every process. An error (a lost process, processes at different searches) is a
    /// message.
    fn search(
        &self,
        product: &dyn KeyedProduct,
        opts: &PairOptions,
        stop: &StopSignal,
    ) -> Result<PairSearch, String>;
}

/// The visited pairs of a compact product search: exact pairs packed into one `u64` each.
pub(crate) struct PackedPairs {
    set: CompactSet,
    /// Bits of the implementation's encoding; the node goes above them.
    shift: u32,
    /// Set when a node's number does not fit above the encoding (the search then stops as if
    /// full, and the check is run indexed).
    overflow: AtomicBool,
    /// Raised with [`StopReason::MemoryLimit`] when the set's table cannot grow (a stop with
    /// statistics, never an abort).
    stop: Option<StopSignal>,
}

impl PackedPairs {
    pub(crate) fn new(bits: u32) -> Self {
        PackedPairs {
            set: CompactSet::new(),
            shift: bits,
            overflow: AtomicBool::new(false),
            stop: None,
        }
    }

    /// The same, stopping the search on `stop` when the set cannot grow.
    pub(crate) fn stopping(bits: u32, stop: &StopSignal) -> Self {
        PackedPairs {
            stop: Some(stop.clone()),
            ..PackedPairs::new(bits)
        }
    }

    /// Whether a node's number did not fit.
    pub(crate) fn overflowed(&self) -> bool {
        // Ordering: Relaxed; read after the search's workers joined.
        self.overflow.load(Ordering::Relaxed)
    }

    /// Bytes the set's tables take.
    pub(crate) fn bytes(&self) -> u64 {
        self.set.bytes()
    }

    #[inline]
    fn key(&self, &pair: &(u32, u64)) -> Option<u64> {
        pair_key(self.shift, pair)
    }
}

impl Visited<(u32, u64)> for PackedPairs {
    #[inline]
    fn prefetch(&self, pair: &(u32, u64)) {
        if let Some(key) = self.key(pair) {
            self.set.prefetch(key);
        }
    }

    #[inline]
    fn offer(&self, pair: &(u32, u64), _key: u64, _level: &mut LevelWriter<'_>) -> Offer {
        let Some(key) = self.key(pair) else {
            // Ordering: Relaxed; read after the workers joined.
            self.overflow.store(true, Ordering::Relaxed);
            return Offer::Full;
        };
        // No provisional ids: a frontier-only run keeps none.
        match self.set.try_insert(key) {
            Ok(true) => Offer::New(ProvisionalId(u32::MAX)),
            Ok(false) => Offer::Old(ProvisionalId(u32::MAX)),
            Err(bytes) => match &self.stop {
                Some(stop) => {
                    // The memory limit is the first reason raised: the engine's own for
                    // `Full` (the state limit) comes after it and is ignored.
                    stop.stop(StopReason::MemoryLimit);
                    Offer::Full
                }
                None => {
                    let layout = std::alloc::Layout::from_size_align(bytes as usize, 8)
                        .unwrap_or(std::alloc::Layout::new::<u64>());
                    std::alloc::handle_alloc_error(layout)
                }
            },
        }
    }
}

/// What a compact product search (in this process or distributed) decided.
pub(crate) struct CompactSearch {
    /// The figures of the search (time not filled in); `pair_bytes` the visited set's.
    pub(crate) stats: CheckStats,
    /// Whether the last level expanded has a violation (its counterexample is then searched
    /// for by the indexed search).
    pub(crate) violated: bool,
    /// Why the search stopped early, if it did.
    pub(crate) stopped: Option<StopReason>,
    /// A search shared by the processes of a distributed run: the union of the processes'
    /// marks ([`KeyedProduct::marks`]; for a check, the normal-form nodes asked for).
    pub(crate) marks: Vec<u32>,
}

/// Runs `product` (over a [`crate::explore::compact::Packed`] implementation of `bits` bits)
/// frontier-only with packed exact pairs, or `None` when a node's number did not fit beside
/// the encodings (nothing decided).
pub(crate) fn search<D>(
    engine: &Engine,
    product: &D,
    bits: u32,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Option<CompactSearch>
where
    D: crate::explore::Driven<State = (u32, u64)>,
{
    let pairs = PackedPairs::stopping(bits, stop);
    let opts = RunOptions {
        record_transitions: false,
        frontier_only: true,
        ..opts.clone()
    };
    let run = engine.run(product, &pairs, &opts, stop);
    if pairs.overflowed() {
        return None;
    }
    // Nodes are counted by the caller.
    let mut stats = super::run_stats(&run, 0, engine);
    stats.pair_bytes = Some(pairs.bytes());
    Some(CompactSearch {
        stats,
        violated: run.witness.is_some(),
        stopped: run.stats.stopped,
        marks: Vec::new(),
    })
}

/// Searches the product of `nf` and `imp` compactly in this process: pairs of one `u64`
/// where the implementation's packed encoding leaves room for the nodes, else (a wider
/// encoding, or a node that did not fit) the node and the encoding of any width; `None`
/// when `imp` has no canonical encoding.
pub(crate) fn search_in_process<I: TransitionSystem>(
    engine: &Engine,
    nf: &SharedNormalForm<'_>,
    events: &SpecEvents,
    imp: &I,
    model: Model,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Option<CompactSearch> {
    if let Some(packed) = Packed::new(imp) {
        let product = Product::new(nf, events, &packed, model, stop).limited_to(opts.max_states);
        if let Some(searched) = search(engine, &product, packed.bits(), opts, stop) {
            return Some(searched);
        }
        // A node did not fit beside the encodings (the search stopped as if full): the
        // pairs are kept wide.
        stop.withdraw(StopReason::StateLimit);
    }
    let product = Product::new(nf, events, imp, model, stop).limited_to(opts.max_states);
    search_encoded(engine, &product, imp, opts, stop)
}

/// Nodes of a normal form built whole for a distributed check, at most.
const DISTRIBUTED_NODES: usize = 1 << 20;

/// Whether a check in `model` can be searched by the processes of a distributed run: the
/// model's nodes are the normal form's own (refusal testing and revivals make nodes of
/// admissible members as the search goes), and the normal form, built whole here in a fixed
/// order so that every process numbers its nodes alike, is small enough. The same answer in
/// every process.
pub(crate) fn distributable(model: Model, nf: &SharedNormalForm<'_>) -> bool {
    matches!(
        model,
        Model::Traces | Model::Failures | Model::FailuresDivergences
    ) && nf.complete(DISTRIBUTED_NODES)
}

/// A pair with the largest node of `nf` (complete) fits in one `u64` beside `bits` bits.
fn nodes_fit(nf: &SharedNormalForm<'_>, bits: u32) -> bool {
    pair_key(bits, (nf.num_sets().saturating_sub(1) as u32, 0)).is_some()
}

/// Searches the product of `nf` (complete: [`distributable`]) and `imp` with the processes
/// of the distributed run of `system_opts`, if it has one and `imp` has a canonical
/// encoding (else `None`): pairs of one `u64` where the nodes fit beside a packed encoding
/// of at most two words, else the node and the encoding of any width.
pub(crate) fn search_product_shared<I: TransitionSystem>(
    nf: &SharedNormalForm<'_>,
    events: &SpecEvents,
    imp: &I,
    model: Model,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<CompactSearch>, RefineError> {
    let spec_sets = nf.num_sets() as u64;
    let kind = 1 + model as u8;
    // The figures say how many nodes a normal form built on demand would have made.
    nf.record_asked();
    if let Some(packed) = Packed::new(imp).filter(|p| nodes_fit(nf, p.bits())) {
        let product = Product::new(nf, events, &packed, model, stop).limited_to(opts.max_states);
        let keys = PackedKeys {
            product: &product,
            bits: packed.bits(),
        };
        let keys = OverNodes {
            keys: &keys,
            nf,
            antichain: false,
        };
        return search_shared(
            &keys,
            kind,
            spec_sets,
            packed.bits(),
            system_opts,
            opts,
            stop,
        );
    }
    let product = Product::new(nf, events, imp, model, stop).limited_to(opts.max_states);
    match EncodedKeys::new(&product, imp) {
        Some(keys) => {
            let keys = OverNodes {
                keys: &keys,
                nf,
                antichain: false,
            };
            search_shared(&keys, kind, spec_sets, 0, system_opts, opts, stop)
        }
        None => Ok(None),
    }
}

/// Searches `product` (its pairs keyed by `product`) with the processes of the distributed
/// run of `system_opts`, if it has one (else `None`). `fingerprint_kind` names the kind of
/// search, `spec_sets` and `bits` its specification's size and its encoding's bits (every
/// process must be at the same search).
pub(crate) fn search_shared(
    product: &dyn KeyedProduct,
    fingerprint_kind: u8,
    spec_sets: u64,
    bits: u32,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<CompactSearch>, RefineError> {
    let Some(searched) = shared_pairs(
        product,
        [
            fingerprint_kind as u32,
            spec_sets as u32,
            (spec_sets >> 32) as u32,
            bits,
        ],
        Numbering::Exact,
        system_opts,
        opts,
        stop,
    )?
    else {
        return Ok(None);
    };
    let pairs = searched.pairs;
    Ok(Some(CompactSearch {
        stats: CheckStats {
            pairs_explored: pairs,
            pairs_discovered: pairs,
            max_working: searched.widest_level,
            antichain_hits: searched.transitions.saturating_sub(pairs.saturating_sub(1)),
            antichain_misses: pairs,
            max_antichain: pairs,
            transitions: searched.transitions,
            spec_sets,
            pair_bytes: Some(searched.bytes),
            seconds: 0.0,
            levels: searched.levels,
            threads: searched.workers,
            shared: true,
        },
        violated: searched.violated,
        stopped: searched.stopped,
        marks: searched.marks,
    }))
}

/// Searches `product` as [`search_shared`] does, numbering its pairs canonically (as the
/// engine numbers those of an exact search), to the end of its first level with a violation,
/// and rebuilds the least path to the least one across the processes
/// ([`PairOptions::witness_path`]); with `deepest`, where there is none, the least path to
/// the pair of the greatest node ([`PairOptions::deepest_path`]). `None` without a
/// distributed run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_witness_shared(
    product: &dyn KeyedProduct,
    fingerprint_kind: u8,
    spec_sets: u64,
    bits: u32,
    deepest: bool,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<PairSearch>, RefineError> {
    shared_pairs(
        product,
        [
            fingerprint_kind as u32 | (product.has_antichain() as u32) << 8,
            spec_sets as u32,
            (spec_sets >> 32) as u32,
            bits,
        ],
        if deepest {
            Numbering::NumberedDeepest
        } else {
            Numbering::Numbered
        },
        system_opts,
        opts,
        stop,
    )
}

/// How a shared search keeps its pairs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Numbering {
    /// Exact pairs, no ids: a search that decides only.
    Exact,
    /// Numbered pairs and the path to the least violation.
    Numbered,
    /// Numbered, and where there is no violation the path to the deepest pair.
    NumberedDeepest,
}

/// The pairs of a product over the normal form `nf` (made whole, asked nodes recorded:
/// [`SharedNormalForm::record_asked`]), as a distributed search keeps them: with `antichain`,
/// as an antichain kept by the owners of a numbered search (a pair is covered by one of the
/// same implementation state whose normal-form node is a subset of its own, as in the
/// engine's [`super::antichain::ConcurrentAntichain`]), else exact. Its marks are the nodes
/// whose successors this process's expansions asked for.
struct OverNodes<'a, 'n> {
    keys: &'a dyn KeyedProduct,
    nf: &'a SharedNormalForm<'n>,
    antichain: bool,
}

impl KeyedProduct for OverNodes<'_, '_> {
    fn key_width(&self) -> usize {
        self.keys.key_width()
    }

    fn initial_key(&self, key: &mut [u32]) {
        self.keys.initial_key(key);
    }

    fn expand_key(&self, key: &[u32], emit: &mut dyn FnMut(&[u32])) -> Option<FoundAt> {
        self.keys.expand_key(key, emit)
    }

    fn node_of(&self, key: &[u32]) -> u32 {
        self.keys.node_of(key)
    }

    fn state_part(&self, key: &[u32], state: &mut [u32]) {
        self.keys.state_part(key, state);
    }

    fn has_antichain(&self) -> bool {
        self.antichain
    }

    fn covers(&self, a: u32, b: u32) -> bool {
        if self.antichain {
            self.nf.is_subset(a, b)
        } else {
            a == b
        }
    }

    fn marks(&self) -> Vec<u32> {
        self.nf.asked()
    }
}

/// The key a search gives a pair (or a state) of a system replayed here.
type KeyOf<'a, S> = dyn Fn(&S) -> Vec<u32> + 'a;

/// The key a search gives a pair of a normal form and `I`.
type PairKeyOf<'a, I> = KeyOf<'a, (u32, <I as TransitionSystem>::State)>;

/// A path replayed on a system: its steps `(label, state reached)`, and the violation that
/// expanding its last state finds.
pub(crate) type Replayed<D> = (Vec<(Label, <D as Driven>::State)>, <D as Driven>::Witness);

/// What the processes of a distributed run found for a failing check, replayed in this
/// process.
pub(crate) struct SharedWitness<S> {
    /// The numbered search's figures and its witness.
    pub(crate) search: PairSearch,
    /// The path to the pair where the violation shows: `(label, pair reached)` per step.
    pub(crate) path: Vec<(Label, (u32, S))>,
    /// The pair where it shows.
    pub(crate) pair: (u32, S),
    /// The violation.
    pub(crate) witness: super::product::ProductWitness,
}

/// Searches the product of `nf` (complete: [`distributable`]) and `imp` with the processes of
/// the distributed run of `system_opts` for the least violation, numbering the pairs as the
/// engine numbers them (with `antichain`, keeping an antichain of them as the engine's does,
/// else every pair), and replays the path they rebuild on the product here. `None` without a
/// distributed run or a canonical encoding of `imp`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search_product_witness_shared<I: TransitionSystem>(
    nf: &SharedNormalForm<'_>,
    events: &SpecEvents,
    imp: &I,
    model: Model,
    antichain: bool,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<SharedWitness<I::State>>, RefineError> {
    let kind = 1 + model as u8;
    let original = Product::new(nf, events, imp, model, stop).limited_to(opts.max_states);
    let searched = |keys: &dyn KeyedProduct, bits: u32| {
        let product = OverNodes {
            keys,
            nf,
            antichain,
        };
        let product: &dyn KeyedProduct = &product;
        let spec_sets = nf.num_sets() as u64;
        search_witness_shared(
            product,
            kind,
            spec_sets,
            bits,
            false,
            system_opts,
            opts,
            stop,
        )
    };
    let (found, key_of): (_, Box<PairKeyOf<'_, I>>) = match Packed::new(imp)
        .filter(|p| nodes_fit(nf, p.bits()))
    {
        Some(packed) => {
            let product =
                Product::new(nf, events, &packed, model, stop).limited_to(opts.max_states);
            let (bits, width) = (packed.bits(), packed.width());
            let keys = PackedKeys {
                product: &product,
                bits,
            };
            let key_of = move |(node, state): &(u32, I::State)| {
                let mut words = [0u32; 2];
                imp.encode_state(state, &mut words[..width]);
                let packed = crate::explore::compact::pack(&words[..width]);
                pair_key(bits, (*node, packed))
                    .map_or_else(Vec::new, |k| crate::explore::keyed::split(k).to_vec())
            };
            (searched(&keys, bits)?, Box::new(key_of))
        }
        None => {
            let product = Product::new(nf, events, imp, model, stop).limited_to(opts.max_states);
            let Some(keys) = EncodedKeys::new(&product, imp) else {
                return Ok(None);
            };
            let width = keys.key_width();
            let found = searched(&keys, 0)?;
            let key_of = move |(node, state): &(u32, I::State)| {
                let mut key = vec![0u32; width];
                key[0] = *node;
                imp.encode_state(state, &mut key[1..]);
                key
            };
            (found, Box::new(key_of))
        }
    };
    let Some(search) = found else {
        return Ok(None);
    };
    if let Some(reason) = search.stopped {
        return Err(RefineError::Stopped(reason));
    }
    let witness = search.witness.as_ref().ok_or_else(|| {
        RefineError::Distributed(
            "the processes found a violation, then none when they numbered the pairs".into(),
        )
    })?;
    let (path, violation) = replay_witness(&original, witness, &*key_of)?;
    let pair = path
        .last()
        .map_or_else(|| original.initial_state(), |(_, p)| p.clone());
    Ok(Some(SharedWitness {
        search,
        path,
        pair,
        witness: violation,
    }))
}

/// A search of `product` by the processes of the distributed run of `system_opts`, if it has
/// one; `what` names the search in the processes' common fingerprint.
fn shared_pairs(
    product: &dyn KeyedProduct,
    what: [u32; 4],
    numbering: Numbering,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<PairSearch>, RefineError> {
    let Some(shared) = &system_opts.distributed else {
        return Ok(None);
    };
    let mut words = what.to_vec();
    words.push(numbering as u32);
    let pair_opts = PairOptions {
        max_pairs: opts.max_states,
        on_level: opts.on_level.clone(),
        fingerprint: crate::hash::hash_words(&words),
        witness_path: numbering != Numbering::Exact,
        deepest_path: numbering == Numbering::NumberedDeepest,
    };
    shared
        .search(product, &pair_opts, stop)
        .map(Some)
        .map_err(RefineError::Distributed)
}

/// Replays the path of `witness` (found by [`search_witness_shared`] over keys that
/// `key_of` makes of `system`'s states) on `system`: from the initial state, each step the
/// one of its index among the steps out of its source, each state reached checked against the
/// path's key. Returns the steps `(label, state reached)` and the violation that expanding
/// the last state finds (where the witness says it shows).
pub(crate) fn replay_witness<D: Driven>(
    system: &D,
    witness: &PairWitness,
    key_of: &dyn Fn(&D::State) -> Vec<u32>,
) -> Result<Replayed<D>, RefineError> {
    let path = replay_path(system, &witness.keys, &witness.steps, key_of)?;
    let state = path
        .last()
        .map_or_else(|| system.initial_state(), |(_, s)| s.clone());
    match system.expand(&state, &mut |_, _| {}) {
        Some(found) if FoundAt::from(&found) == witness.at => Ok((
            path,
            match found {
                Found::AtState(w) | Found::AtStep(w) => w,
            },
        )),
        _ => Err(replay_failed("ends at a pair without its violation".into())),
    }
}

/// The error of a path rebuilt by the processes that is not a path of the system here.
fn replay_failed(what: String) -> RefineError {
    RefineError::ReplayFailed(format!(
        "the path rebuilt by the processes of the distributed run {what}"
    ))
}

/// Replays a path rebuilt by the processes of a distributed run (the `keys` of its pairs, and
/// the index of each step among the steps out of its source) on `system`, whose states
/// `key_of` keys as the search did: from the initial state, each step the one of its index,
/// each state reached checked against the path's key. Returns the steps `(label, state
/// reached)`.
pub(crate) fn replay_path<D: Driven>(
    system: &D,
    keys: &[Vec<u32>],
    steps: &[u32],
    key_of: &dyn Fn(&D::State) -> Vec<u32>,
) -> Result<Vec<(Label, D::State)>, RefineError> {
    let failed = replay_failed;
    let mut state = system.initial_state();
    if keys.first() != Some(&key_of(&state)) {
        return Err(failed("does not start at the initial pair".into()));
    }
    let mut path = Vec::with_capacity(steps.len());
    let mut successors: Vec<(Label, D::State)> = Vec::new();
    for (i, &k) in steps.iter().enumerate() {
        successors.clear();
        let _ = system.expand(&state, &mut |label, target| {
            successors.push((label, target))
        });
        let Some((label, target)) = successors.get(k as usize).cloned() else {
            return Err(failed(format!(
                "has a step {k} that pair {i} does not have"
            )));
        };
        if keys.get(i + 1) != Some(&key_of(&target)) {
            return Err(failed(format!(
                "reaches another pair by step {k} of pair {i}"
            )));
        }
        path.push((label, target.clone()));
        state = target;
    }
    Ok(path)
}

/// The visited pairs of a compact product search over an implementation whose encoding, or
/// whose encoding with the node beside it, is wider than a `u64`: exact pairs kept as the
/// node followed by the encoding ([`EncodedKeys`]'s keys) in a [`WideSet`].
pub(crate) struct EncodedPairs<'a, T> {
    ts: &'a T,
    set: WideSet,
    width: usize,
}

/// Words of a key kept on the stack (wider keys take a vector).
const STACK_KEY_WORDS: usize = 16;

impl<'a, T: TransitionSystem> EncodedPairs<'a, T> {
    /// An empty set of the pairs of `ts`, if it has a canonical encoding.
    pub(crate) fn new(ts: &'a T) -> Option<Self> {
        let width = ts.encoded_width().ok()? + 1;
        Some(EncodedPairs {
            ts,
            set: WideSet::new(width),
            width,
        })
    }
}

impl<T: TransitionSystem> Visited<(u32, T::State)> for EncodedPairs<'_, T> {
    fn offer(
        &self,
        (node, state): &(u32, T::State),
        _key: u64,
        _level: &mut LevelWriter<'_>,
    ) -> Offer {
        let mut on_stack = [0u32; STACK_KEY_WORDS];
        let mut on_heap = Vec::new();
        let key: &mut [u32] = if self.width <= STACK_KEY_WORDS {
            &mut on_stack[..self.width]
        } else {
            on_heap.resize(self.width, 0);
            &mut on_heap
        };
        key[0] = *node;
        self.ts.encode_state(state, &mut key[1..]);
        // No provisional ids: a frontier-only run keeps none.
        if self.set.insert(key) {
            Offer::New(ProvisionalId(u32::MAX))
        } else {
            Offer::Old(ProvisionalId(u32::MAX))
        }
    }
}

/// Runs `product` (over `imp`, which has a canonical encoding) frontier-only with exact
/// pairs kept by their encodings ([`EncodedPairs`]), or `None` when `imp` has no encoding.
pub(crate) fn search_encoded<I, D>(
    engine: &Engine,
    product: &D,
    imp: &I,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Option<CompactSearch>
where
    I: TransitionSystem,
    D: Driven<State = (u32, I::State)>,
{
    let pairs = EncodedPairs::new(imp)?;
    let opts = RunOptions {
        record_transitions: false,
        frontier_only: true,
        ..opts.clone()
    };
    let run = engine.run(product, &pairs, &opts, stop);
    let mut stats = super::run_stats(&run, 0, engine);
    stats.pair_bytes = Some(pairs.set.bytes());
    Some(CompactSearch {
        stats,
        violated: run.witness.is_some(),
        stopped: run.stats.stopped,
        marks: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_go_above_the_encoding_or_not_at_all() {
        let pairs = PackedPairs::new(40);
        assert_eq!(pairs.key(&(3, 5)), Some(3 << 40 | 5));
        assert_eq!(
            pairs.key(&((1 << 24) - 1, 1)),
            Some(((1 << 24) - 1) << 40 | 1)
        );
        assert_eq!(pairs.key(&(1 << 24, 1)), None);
        let full = PackedPairs::new(64);
        assert_eq!(full.key(&(0, u64::MAX)), Some(u64::MAX));
        assert_eq!(full.key(&(1, 0)), None);
        let narrow = PackedPairs::new(20);
        assert_eq!(
            narrow.key(&(u32::MAX, 1)),
            Some((u32::MAX as u64) << 20 | 1)
        );
    }
}
