//! The product searches of a check shared by the processes of a distributed run
//! ([`SharedPairSearch`], which `dist` implements): the pairs keyed as one `u64` of packed
//! encoding and node, as the node and a wider encoding, or, for an implementation with no
//! fixed-width encoding, as the node and its structural encoding padded to a width the
//! search chooses ([`StructuralPairKeys`]: a search whose keys turn out too narrow, which
//! every process learns at the same level, is made again with keys twice as wide); the
//! counterexample of a failing check rebuilt by the processes and replayed here.

use super::super::product::{Product, SpecEvents};
use super::super::shared_normal::SharedNormalForm;
use super::super::{CheckStats, Model, RefineError, SystemOptions};
use super::CompactSearch;
use crate::explore::compact::{pair_key, Packed};
use crate::explore::keyed::{
    first_key_words, wider_keys, write_structural_key, EncodedKeys, FoundAt, KeyTrouble,
    KeyedProduct, PackedKeys, PairOptions, PairSearch, PairWitness, SharedSearchError,
    StructuralPairKeys,
};
use crate::explore::{Driven, Found, RunOptions, StopSignal};
use crate::ts::{Label, TransitionSystem};

/// A search of the pairs of a product shared among the processes of a distributed run, each
/// pair kept by one of them: what `dist` offers (the CLI hands it in through
/// [`SystemOptions::distributed`]), so that `refine` needs to know nothing of processes. Every
/// process of the run makes the same searches, in the same order, with the same products.
pub trait SharedPairSearch: Send + Sync {
    /// Searches `product` breadth first (its pairs keyed alike in every process) to the end
    /// of its first level with a violation, or until a level adds nothing; the same result
    /// in every process. An error: keys too narrow for a pair (every process learns it at the
    /// same level: the caller makes the search again with wider keys), or a failure (a lost
    /// process, processes at different searches) as a message.
    fn search(
        &self,
        product: &dyn KeyedProduct,
        opts: &PairOptions,
        stop: &StopSignal,
    ) -> Result<PairSearch, SharedSearchError>;

    /// The words of the keys a search of an implementation keyed by its structural encoding
    /// starts with (`None`: [`crate::explore::keyed::FIRST_KEY_WORDS`], or what the initial
    /// state needs). Tests set it small to make searches start again.
    fn first_key_words(&self) -> Option<usize> {
        None
    }
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
    if let Some(keys) = EncodedKeys::new(&product, imp) {
        let keys = OverNodes {
            keys: &keys,
            nf,
            antichain: false,
        };
        return search_shared(&keys, kind, spec_sets, 0, system_opts, opts, stop);
    }
    widening(imp, system_opts, |width| {
        let keys = StructuralPairKeys::new(&product, imp, width);
        let keys = OverNodes {
            keys: &keys,
            nf,
            antichain: false,
        };
        try_search_shared(&keys, kind, spec_sets, 0, system_opts, opts, stop)
    })
}

/// Makes `search` with keys of the structural encoding of `imp` (which has no fixed-width
/// one) of the words the run starts with, then twice as many each time the processes find
/// them too narrow; `None` without a distributed run or a structural encoding of `imp`'s
/// initial state.
fn widening<I: TransitionSystem, R>(
    imp: &I,
    system_opts: &SystemOptions,
    mut search: impl FnMut(usize) -> Result<Option<R>, SharedSearchError>,
) -> Result<Option<R>, RefineError> {
    let Some(shared) = &system_opts.distributed else {
        return Ok(None);
    };
    let Ok(mut width) = first_key_words(imp, shared.first_key_words()) else {
        return Ok(None);
    };
    loop {
        match search(width) {
            Err(SharedSearchError::KeysTooNarrow) => {
                width = wider_keys(width).map_err(|e| RefineError::Distributed(e.to_string()))?;
            }
            result => return result.map_err(|e| RefineError::Distributed(e.to_string())),
        }
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
    try_search_shared(
        product,
        fingerprint_kind,
        spec_sets,
        bits,
        system_opts,
        opts,
        stop,
    )
    .map_err(|e| RefineError::Distributed(e.to_string()))
}

/// [`search_shared`], keys too narrow told apart from other failures.
fn try_search_shared(
    product: &dyn KeyedProduct,
    fingerprint_kind: u8,
    spec_sets: u64,
    bits: u32,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<CompactSearch>, SharedSearchError> {
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

/// A numbered shared search ([`search_witness_shared`]): its product, what names it in the
/// processes' fingerprint, and what it rebuilds.
pub(crate) struct WitnessSearch<'a> {
    /// The product searched.
    pub(crate) product: &'a dyn KeyedProduct,
    /// The kind of search (the fingerprint tells searches of one product apart).
    pub(crate) kind: u8,
    /// The specification's sets (or another figure of the search's product), for the
    /// fingerprint.
    pub(crate) spec_sets: u64,
    /// The bits of the packed implementation states (0 for keys of another kind).
    pub(crate) bits: u32,
    /// Whether, where there is no violation, the least path to the pair of the greatest
    /// node is rebuilt ([`PairOptions::deepest_path`]).
    pub(crate) deepest: bool,
}

/// Searches `search.product` as [`search_shared`] does, numbering its pairs canonically (as
/// the engine numbers those of an exact search), to the end of its first level with a
/// violation, and rebuilds the least path to the least one across the processes
/// ([`PairOptions::witness_path`]); with `search.deepest`, where there is none, the least
/// path to the pair of the greatest node ([`PairOptions::deepest_path`]). `None` without a
/// distributed run.
pub(crate) fn search_witness_shared(
    search: &WitnessSearch<'_>,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<PairSearch>, RefineError> {
    try_search_witness_shared(search, system_opts, opts, stop)
        .map_err(|e| RefineError::Distributed(e.to_string()))
}

/// [`search_witness_shared`], keys too narrow told apart from other failures.
fn try_search_witness_shared(
    search: &WitnessSearch<'_>,
    system_opts: &SystemOptions,
    opts: &RunOptions,
    stop: &StopSignal,
) -> Result<Option<PairSearch>, SharedSearchError> {
    let product = search.product;
    shared_pairs(
        product,
        [
            search.kind as u32 | (product.has_antichain() as u32) << 8,
            search.spec_sets as u32,
            (search.spec_sets >> 32) as u32,
            search.bits,
        ],
        if search.deepest {
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
/// engine's [`crate::refine::antichain::ConcurrentAntichain`]), else exact. Its marks are the nodes
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

    fn padded_keys(&self) -> bool {
        self.keys.padded_keys()
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

    fn trouble(&self) -> Option<&KeyTrouble> {
        self.keys.trouble()
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
    pub(crate) witness: super::super::product::ProductWitness,
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
        let search = WitnessSearch {
            product,
            kind,
            spec_sets,
            bits,
            deepest: false,
        };
        try_search_witness_shared(&search, system_opts, opts, stop)
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
            (
                searched(&keys, bits).map_err(distributed)?,
                Box::new(key_of),
            )
        }
        None => {
            let product = Product::new(nf, events, imp, model, stop).limited_to(opts.max_states);
            match EncodedKeys::new(&product, imp) {
                Some(keys) => {
                    let width = keys.key_width();
                    let found = searched(&keys, 0).map_err(distributed)?;
                    let key_of = move |(node, state): &(u32, I::State)| {
                        let mut key = vec![0u32; width];
                        key[0] = *node;
                        imp.encode_state(state, &mut key[1..]);
                        key
                    };
                    (found, Box::new(key_of))
                }
                None => {
                    // Keyed by the structural encoding, as the search that found the
                    // violation was (from the first width again: every process alike).
                    let mut width = 0;
                    let found = widening(imp, system_opts, |words| {
                        width = words;
                        searched(&StructuralPairKeys::new(&product, imp, words), 0)
                    })?;
                    let key_of = move |(node, state): &(u32, I::State)| {
                        let mut key = vec![0u32; 1 + width];
                        key[0] = *node;
                        let trouble = KeyTrouble::default();
                        write_structural_key(imp, state, &mut key[1..], &mut Vec::new(), &trouble);
                        key
                    };
                    (found, Box::new(key_of))
                }
            }
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
) -> Result<Option<PairSearch>, SharedSearchError> {
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
    shared.search(product, &pair_opts, stop).map(Some)
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

/// A failure of a shared search as the check's error.
fn distributed(e: SharedSearchError) -> RefineError {
    RefineError::Distributed(e.to_string())
}
