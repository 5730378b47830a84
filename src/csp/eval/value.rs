//! Values of CSPm expressions and closed process terms.
//!
//! Every value is plain data: equality, ordering and hashing are structural, so a process
//! state ([`Proc`]) built from values is canonical and hashable. Sets are sorted and free of
//! duplicates. Dotted values (`c.1.true`, `B.0`) are kept flat: [`Value::Dot`] holds the
//! atoms, never a nested `Dot`, so `c.(B.0).true` and `c.B.0.true` are the same value; the
//! grouping of atoms into fields is recovered from the declared arities when needed.

use crate::reduce::Compression;
use std::sync::Arc;

pub use super::lazy_seq::{LazyComp, LazySeq};
pub use super::ranges::IntRanges;
pub use super::seq_value::SeqValue;
use super::FieldSet;

/// Index of a channel in its script (declaration order).
pub type ChanId = u32;
/// Index of a datatype constructor in its script (declaration order).
pub type CtorId = u32;

/// A CSPm value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A character (`'a'`, of the type `Char`); a string is a sequence of them.
    Char(char),
    /// A tuple of two or more values.
    Tuple(Arc<[Value]>),
    /// A finite set: sorted, no duplicates (with its hash, see [`SetElems`]).
    Set(SetElems),
    /// A sequence (a range of a shared buffer: its slices take constant time).
    Seq(SeqValue),
    /// An infinite sequence `<m..>` (after a finite prefix): the values of the prefix, then
    /// every integer from the second field on. Only its finite parts are ever computed
    /// (`head`, `tail`, patterns `<x>^xs`, `elem`); `#`, `set` and generators refuse it.
    InfSeq(SeqValue, i64),
    /// An infinite sequence made by a comprehension drawing from an infinite sequence
    /// (`<x | x <- <0..>, x % 2 == 1>`), computed as its elements are taken (see
    /// `eval::lazy_seq`).
    LazySeq(Arc<LazySeq>),
    /// A finite map `(| k => v, ... |)`: its pairs sorted by key, no key twice.
    Map(Arc<[(Value, Value)]>),
    /// A channel name (an event when the channel has no fields).
    Chan(ChanId),
    /// A datatype constructor (a complete value when it has no fields).
    Ctor(CtorId),
    /// A dotted value: two or more atoms, none of them a `Dot`.
    Dot(Arc<[Value]>),
    /// A set weft does not enumerate (`Int`, `{0..}`, `{| c |}` of a channel of an infinite
    /// type, `Seq(X)`, ...): membership tests only.
    Infinite(Arc<InfSet>),
    /// A function value.
    Func(Arc<Func>),
    /// A process.
    Proc(Proc),
}

impl Value {
    /// The atoms of a dotted value (the value itself when it is not dotted).
    pub fn atoms(&self) -> &[Value] {
        match self {
            Value::Dot(a) => a,
            other => std::slice::from_ref(other),
        }
    }

    /// The value made of `atoms` (a single atom stays itself; empty gives an empty tuple-free
    /// `Dot`, which callers never build).
    pub fn from_atoms(atoms: &[Value]) -> Value {
        if atoms.len() == 1 {
            atoms[0].clone()
        } else {
            Value::Dot(atoms.into())
        }
    }

    /// `a.b`: the concatenation of the atoms of `a` and `b`.
    pub fn dot(a: &Value, b: &Value) -> Value {
        let mut v: Vec<Value> = Vec::with_capacity(a.atoms().len() + b.atoms().len());
        v.extend_from_slice(a.atoms());
        v.extend_from_slice(b.atoms());
        Value::Dot(v.into())
    }

    /// The string `text` as a value: the sequence of its characters.
    pub fn string(text: &str) -> Value {
        Value::Seq(text.chars().map(Value::Char).collect())
    }

    /// A map from arbitrary pairs: sorted by key; of two pairs with the same key the later
    /// one wins (as in `mapFromList` and `(| k => v, ... |)`).
    pub fn map_from(pairs: Vec<(Value, Value)>) -> Value {
        let mut sorted: std::collections::BTreeMap<Value, Value> = Default::default();
        for (k, v) in pairs {
            sorted.insert(k, v);
        }
        Value::Map(sorted.into_iter().collect())
    }

    /// The infinite sequence of `prefix` then every integer from `from` on, in its one
    /// representation (a prefix ending in `from - 1` is absorbed: `<0>^<1..>` is `<0..>`), so
    /// that equal sequences are equal values.
    pub fn inf_seq(mut prefix: Vec<Value>, mut from: i64) -> Value {
        while prefix.last() == Some(&Value::Int(from.wrapping_sub(1))) && from > i64::MIN {
            prefix.pop();
            from -= 1;
        }
        Value::InfSeq(prefix.into(), from)
    }

    /// A set from arbitrary elements (sorts and removes duplicates).
    pub fn set_from(mut items: Vec<Value>) -> Value {
        items.sort_unstable();
        items.dedup();
        Value::Set(items.into())
    }

    /// True for values that contain no process or function (those can be compared and put
    /// in sets).
    pub fn is_comparable(&self) -> bool {
        match self {
            Value::Func(_) | Value::Proc(_) => false,
            Value::Set(v) => v.iter().all(Value::is_comparable),
            Value::Tuple(v) | Value::Dot(v) => v.iter().all(Value::is_comparable),
            Value::Seq(v) | Value::InfSeq(v, _) => v.iter().all(Value::is_comparable),
            Value::LazySeq(l) => l.pending().iter().all(Value::is_comparable),
            Value::Map(m) => m
                .iter()
                .all(|(k, v)| k.is_comparable() && v.is_comparable()),
            _ => true,
        }
    }
}

/// The elements of a finite set (sorted, no duplicates) with their hash, computed once when
/// the set is made: hashing a set (a key of the memo, an argument of a process call, a
/// captured binding of a prefix) is then one word however large the set, and two sets with
/// different hashes differ without comparing their elements. Sets of sets hash in time
/// linear in their own size. The order of sets is that of their elements, as before.
#[derive(Clone, Debug)]
pub struct SetElems {
    items: Arc<[Value]>,
    hash: u64,
}

impl SetElems {
    /// The set of `items` (sorted, without duplicates: the caller's promise).
    pub fn new(items: Arc<[Value]>) -> SetElems {
        use std::hash::{Hash, Hasher};
        let mut h = crate::hash::WordHasher::default();
        items.hash(&mut h);
        SetElems {
            hash: h.finish(),
            items,
        }
    }

    /// The elements, shared.
    pub fn items(&self) -> &Arc<[Value]> {
        &self.items
    }
}

impl std::ops::Deref for SetElems {
    type Target = Arc<[Value]>;

    fn deref(&self) -> &Arc<[Value]> {
        &self.items
    }
}

impl PartialEq for SetElems {
    fn eq(&self, other: &SetElems) -> bool {
        // `Arc<[T]>`'s `==` compares the elements even of one shared set
        Arc::ptr_eq(&self.items, &other.items)
            || (self.hash == other.hash && self.items == other.items)
    }
}

impl Eq for SetElems {}

impl PartialOrd for SetElems {
    fn partial_cmp(&self, other: &SetElems) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SetElems {
    fn cmp(&self, other: &SetElems) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.items, &other.items) {
            return std::cmp::Ordering::Equal;
        }
        self.items.cmp(&other.items)
    }
}

impl std::hash::Hash for SetElems {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl From<Arc<[Value]>> for SetElems {
    fn from(items: Arc<[Value]>) -> SetElems {
        SetElems::new(items)
    }
}

impl From<Vec<Value>> for SetElems {
    fn from(items: Vec<Value>) -> SetElems {
        SetElems::new(items.into())
    }
}

impl From<&[Value]> for SetElems {
    fn from(items: &[Value]) -> SetElems {
        SetElems::new(items.into())
    }
}

impl<const N: usize> From<[Value; N]> for SetElems {
    fn from(items: [Value; N]) -> SetElems {
        SetElems::new(Arc::from(items))
    }
}

impl FromIterator<Value> for SetElems {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> SetElems {
        SetElems::new(iter.into_iter().collect())
    }
}

/// A set that weft keeps as a description instead of enumerating it: FDR's infinite sets
/// (and sets too large to enumerate). It answers membership tests; what must enumerate it
/// (`card`, a generator, an input over it, printing its elements) fails with an error naming
/// it. Equal descriptions are equal sets; integer sets ([`InfSet::Ints`]) are canonical, so
/// for them the converse holds too.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InfSet {
    /// Integers, more than can be enumerated (`Int`, `{m..}`, ...).
    Ints(IntRanges),
    /// `Char`: every character.
    Chars,
    /// `Map(K, V)` with more maps than weft enumerates: the finite maps from keys in `K`
    /// to values in `V`.
    Maps(Value, Value),
    /// `Seq(X)`: the finite sequences with elements in the set `X`.
    Seqs(Value),
    /// `Set(X)` of an infinite set `X`: its finite subsets.
    Sets(Value),
    /// The values of a datatype (by index) that has infinitely many.
    DataType(u32),
    /// The dotted values `v1.v2...` with each `vi` in field type `i` (a name type such as
    /// `Int.Bool`), one of them infinite.
    Dotted(Arc<[FieldSet]>),
    /// The tuples `(v1, ..., vn)` with each `vi` in set `i`, one of them infinite.
    Tuples(Arc<[Value]>),
    /// `{| v |}`: the events of a channel (or values of a datatype) that extend `v`.
    Productions(Value),
    /// The union of two or more sets, one of them infinite.
    Union(Arc<[Value]>),
    /// The intersection of two or more sets, all of them infinite.
    Inter(Arc<[Value]>),
    /// The elements of the first set (infinite) not in the second.
    Diff(Value, Value),
    /// `Proc`: every process.
    Procs,
}

impl InfSet {
    /// The set as a value.
    pub fn value(self) -> Value {
        Value::Infinite(Arc::new(self))
    }
}

/// What a variable name is bound to in an environment.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Binding {
    /// A value (function parameter, generator or input variable, lambda parameter).
    Value(Value),
    /// A name defined in a `let` group: the group with the values of its free variables.
    Let(Arc<LetRef>),
}

/// A `let` group closed over the values of its free variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LetRef {
    /// Node id of the `let` expression.
    pub group: u32,
    /// Bindings of the group's free variables, in the order the checker lists them.
    pub captured: Arc<[Binding]>,
}

/// Built-in functions and constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Builtin {
    Union,
    Inter,
    Diff,
    UnionAll,
    InterAll,
    Member,
    Card,
    Empty,
    SetOfSeq,
    SeqOfSet,
    Powerset,
    Head,
    Tail,
    Concat,
    Null,
    Elem,
    Length,
    Productions,
    Extensions,
    /// `Seq(X)`, the type of sequences over `X`.
    SeqType,
    /// `show(x)`: the text of a value as a string.
    Show,
    /// `error(s)`: stops the evaluation with the message `s`.
    Error,
    /// `Map(K, V)`: the set of finite maps from `K` to `V`.
    MapType,
    MapFromList,
    MapToList,
    MapLookup,
    MapMember,
    MapUpdate,
    MapUpdateMultiple,
    MapDelete,
    /// `relational_image(R)`: the function `x -> {y | (x, y) <- R}`.
    RelationalImage,
    /// `relational_inverse_image(R)`: the function `y -> {x | (x, y) <- R}`.
    RelationalInverseImage,
    /// `transpose(R)`: `{(y, x) | (x, y) <- R}`.
    Transpose,
    /// `mtransclose(R, D)`: FDR's representatives of the symmetric transitive closure.
    Mtransclose,
    /// `loop(P)`: `P ; P ; ...`.
    Loop,
    /// `prioritise(P, <A1, ..., An>)`
    Prioritise,
    /// `prioritisepo(P, A, R, M)`
    PrioritisePo,
}

impl Builtin {
    /// The CSPm name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Union => "union",
            Builtin::Inter => "inter",
            Builtin::Diff => "diff",
            Builtin::UnionAll => "Union",
            Builtin::InterAll => "Inter",
            Builtin::Member => "member",
            Builtin::Card => "card",
            Builtin::Empty => "empty",
            Builtin::SetOfSeq => "set",
            Builtin::SeqOfSet => "seq",
            Builtin::Powerset => "Set",
            Builtin::Head => "head",
            Builtin::Tail => "tail",
            Builtin::Concat => "concat",
            Builtin::Null => "null",
            Builtin::Elem => "elem",
            Builtin::Length => "length",
            Builtin::Productions => "productions",
            Builtin::Extensions => "extensions",
            Builtin::SeqType => "Seq",
            Builtin::Show => "show",
            Builtin::Error => "error",
            Builtin::MapType => "Map",
            Builtin::MapFromList => "mapFromList",
            Builtin::MapToList => "mapToList",
            Builtin::MapLookup => "mapLookup",
            Builtin::MapMember => "mapMember",
            Builtin::MapUpdate => "mapUpdate",
            Builtin::MapUpdateMultiple => "mapUpdateMultiple",
            Builtin::MapDelete => "mapDelete",
            Builtin::RelationalImage => "relational_image",
            Builtin::RelationalInverseImage => "relational_inverse_image",
            Builtin::Transpose => "transpose",
            Builtin::Mtransclose => "mtransclose",
            Builtin::Loop => "loop",
            Builtin::Prioritise => "prioritise",
            Builtin::PrioritisePo => "prioritisepo",
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Builtin::Union
            | Builtin::Inter
            | Builtin::Diff
            | Builtin::Member
            | Builtin::Elem
            | Builtin::MapType
            | Builtin::MapLookup
            | Builtin::MapMember
            | Builtin::MapUpdateMultiple
            | Builtin::MapDelete
            | Builtin::Mtransclose
            | Builtin::Prioritise => 2,
            Builtin::MapUpdate => 3,
            Builtin::PrioritisePo => 4,
            _ => 1,
        }
    }

    /// All built-in functions.
    pub const ALL: [Builtin; 37] = [
        Builtin::Union,
        Builtin::Inter,
        Builtin::Diff,
        Builtin::UnionAll,
        Builtin::InterAll,
        Builtin::Member,
        Builtin::Card,
        Builtin::Empty,
        Builtin::SetOfSeq,
        Builtin::SeqOfSet,
        Builtin::Powerset,
        Builtin::Head,
        Builtin::Tail,
        Builtin::Concat,
        Builtin::Null,
        Builtin::Elem,
        Builtin::Length,
        Builtin::Productions,
        Builtin::Extensions,
        Builtin::SeqType,
        Builtin::Show,
        Builtin::Error,
        Builtin::MapType,
        Builtin::MapFromList,
        Builtin::MapToList,
        Builtin::MapLookup,
        Builtin::MapMember,
        Builtin::MapUpdate,
        Builtin::MapUpdateMultiple,
        Builtin::MapDelete,
        Builtin::RelationalImage,
        Builtin::RelationalInverseImage,
        Builtin::Transpose,
        Builtin::Mtransclose,
        Builtin::Loop,
        Builtin::Prioritise,
        Builtin::PrioritisePo,
    ];
}

/// What a function value calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// A top-level definition (function or 0-ary binding), by index into the script's
    /// definitions.
    Global(u32),
    /// The definition with index `1` in a `let` group.
    Let(Arc<LetRef>, u32),
    /// A lambda (node id) closed over the bindings of its free variables.
    Lambda(u32, Arc<[Binding]>),
    /// A built-in function.
    Builtin(Builtin),
    /// A compression function (`normal`, `sbisim`, ...): applied to a process, it gives a
    /// [`ProcNode::Compressed`] process.
    Compression(&'static str),
}

/// A function value: its target and the argument groups applied so far (curried functions
/// `f(x)(y)` take one group per application).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Func {
    /// What is called.
    pub target: Target,
    /// Argument groups already supplied.
    pub applied: Vec<Arc<[Value]>>,
}

/// A set of events, sorted: complete events, and, where the set is infinite, descriptions
/// ([`Value::Infinite`], which sort after every event) of the events it also holds.
pub type EventSet = Arc<[Value]>;

/// A pair relation on events (renaming `[[a <- b]]`, linking `[a <-> b]`), sorted. Besides
/// pairs of events, a pair `({| a |}, {| b |})` of [`InfSet::Productions`] stands for every
/// pair `(a.r, b.r)` where `a.r` is an event (a renaming of a channel of an infinite type).
pub type EventRelation = Arc<[(Value, Value)]>;

/// A closed process term: a canonical, hashable description of a process state.
///
/// The operators are evaluated eagerly (their sets and relations are explicit event lists);
/// named processes stay as [`ProcNode::Call`] (unfolded on demand with
/// `Evaluator::unfold`) and prefixes as [`ProcNode::Prefix`] closures (their events and
/// continuations come from `Evaluator::prefix_transitions`), so a term is always finite.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proc(pub Arc<ProcNode>);

impl Proc {
    /// Wraps a node.
    pub fn new(node: ProcNode) -> Self {
        Proc(Arc::new(node))
    }

    /// The node.
    pub fn node(&self) -> &ProcNode {
        &self.0
    }
}

/// A named process applied to its evaluated arguments: `P(3)` is `(P, [3])`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Call {
    /// The definition.
    pub target: Target,
    /// All arguments (all groups of a curried definition, concatenated).
    pub args: Arc<[Value]>,
}

/// A prefix `e?x!y -> P` closed over the bindings of its free variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PrefixClosure {
    /// Node id of the prefix expression.
    pub expr: u32,
    /// Bindings of its free variables, in the order the checker lists them.
    pub captured: Arc<[Binding]>,
    /// For a prefix with nondeterministic inputs (`c$x -> P`), the values its `$` fields
    /// were given by the internal choice (in field order); `None` before the choice (or
    /// for a prefix without `$`).
    pub choice: Option<Arc<[Value]>>,
}

/// The priority order of `prioritise`, `prioritisepo` and `:[tau priority over]:` (see
/// `csp::process::priority` for the firing rule).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PriorityOrder {
    /// `prioritise(P, <A1, ..., An>)`: the events of `Ai` beat those of `Aj` for `i < j`;
    /// tau and ✓ rank with `A1`.
    Levels(Vec<EventSet>),
    /// `prioritisepo(P, A, R, M)`: the pairs `(x, y)` (`x` beats `y`) of the transitive
    /// closure of `R`, and tau and ✓ beat every event of `A` not in `M`.
    Partial {
        /// The events ordered (`A`).
        events: EventSet,
        /// The order, transitively closed: `(x, y)` when `x` beats `y`.
        order: EventRelation,
        /// The events of `A` as high as tau and ✓ (`M`).
        maximal: EventSet,
    },
    /// `:[tau priority over]: A`: tau beats every event of `A`.
    TauOver(EventSet),
}

/// The operators of process terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProcNode {
    /// `STOP`
    Stop,
    /// `SKIP`
    Skip,
    /// `DIV`: diverges (a tau to itself, forever).
    Div,
    /// A named process with its arguments (unfold with `Evaluator::unfold`).
    Call(Call),
    /// A prefix (initial events and continuations from `Evaluator::prefix_transitions`).
    Prefix(PrefixClosure),
    /// External choice of two or more processes (binary `[]` gives two; the replicated
    /// form one per binding; an empty replicated choice is `STOP`).
    ExtChoice(Vec<Proc>),
    /// Internal choice (never empty).
    IntChoice(Vec<Proc>),
    /// Interleaving (an empty replicated interleaving is `SKIP`).
    Interleave(Vec<Proc>),
    /// Generalised parallel: all components synchronise on the set (and on tick).
    Parallel(EventSet, Vec<Proc>),
    /// Alphabetised parallel: each component with its alphabet.
    AlphaParallel(Vec<(EventSet, Proc)>),
    /// `P ; Q`
    Seq(Proc, Proc),
    /// `P \ A`
    Hide(Proc, EventSet),
    /// `P [[a <- b]]`: pairs (old event, new event).
    Rename(Proc, EventRelation),
    /// `P [a <-> b] Q`: pairs (event of P, event of Q), hidden after synchronising.
    Link(Proc, EventRelation, Proc),
    /// `P /\ Q`
    Interrupt(Proc, Proc),
    /// `P [> Q` (sliding choice / timeout)
    Timeout(Proc, Proc),
    /// A process of a timed section (tock-CSP).
    Timed(Arc<TimedProc>),
    /// A compression function applied to a process (`normal(P)`, `sbisim(P)`, ...): the
    /// process explored, compressed, and run as an explicit LTS.
    Compressed(Compression, Proc),
    /// `P [| A |> Q`: `P` until it does an event of `A`, then `Q`.
    Exception(Proc, EventSet, Proc),
    /// `P` under a priority order.
    Prioritise(Proc, Arc<PriorityOrder>),
}

/// The processes that timed sections add (`Timed(et) { ... }`, tock-CSP as FDR defines it;
/// see `csp::eval::timed`). Each holds the section's `tock` event.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimedProc {
    /// `STOP` in a timed section (FDR's `TSTOP`): only time passes, `tock -> TSTOP`.
    Stop(Value),
    /// `SKIP` in a timed section (FDR's `TSKIP`): `(tock -> TSKIP) [] SKIP`.
    Skip(Value),
    /// Exactly `n` tocks (`n >= 1`) and nothing else, then the process: the time an event
    /// takes after it happens, and `WAIT(n)` (`n` tocks, then `TSKIP`).
    Delay(Value, i64, Proc),
    /// A prefix written in a timed section: it lets time pass until its event `e` happens,
    /// which then takes `et(e)` tocks. The value is the section's header, the pair
    /// `(tock, et)`.
    Prefix(PrefixClosure, Value),
    /// Synchronising external choice `P1 [+A+] P2 ...` (FDR's `[+ +]`; the meaning of `[]`
    /// in a timed section, with `A = {tock}`): an external choice whose events in `A` are
    /// performed by all operands together and do not resolve it.
    SyncChoice(EventSet, Vec<Proc>),
    /// Synchronising interrupt `P /+A+\ Q` (the meaning of `/\` in a timed section, with
    /// `A = {tock}`): `P` and `Q` perform the events of `A` together, which do not interrupt.
    SyncInterrupt(Proc, EventSet, Proc),
    /// `timed_priority(P)`: `P` where `tock` is possible only in states with no tau and no
    /// ✓ (maximal progress; FDR's `prioritise(P, <{}, {tock}>)`).
    Priority(Value, Proc),
    /// An operand `P` of a parallel written in a timed section (`|||`, `[|A|]`, `[A||B]` and
    /// their replicated forms): `P`, except that its ✓ leaves [`TimedProc::Terminated`]
    /// instead of Ω, so that time still passes once it has terminated.
    Operand(Value, Proc),
    /// A terminated operand of a parallel of a timed section: like Ω it waits for the other
    /// operands to terminate (the parallel's distributed termination), and it agrees to every
    /// `tock` meanwhile (the tick-tock reading of termination in parallel, which FDR's
    /// timed sections show; see `csp::eval::timed`).
    Terminated(Value),
}
