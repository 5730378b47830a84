//! The term library against its specification (§5.1.1–5.1.2 of the thesis): maximal sharing,
//! protection across garbage collection, and the same under concurrency and random inputs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use weft::sync::{ParkingLotRwLock, SectionLock, StdRwLock, Unsynchronised};
use weft::term::{RootSet, Symbol, Term, TermId, TermRef, TermTable, TermThread};

fn f() -> Symbol {
    Symbol::new("f", 2)
}
fn g() -> Symbol {
    Symbol::new("g", 1)
}
fn a() -> Symbol {
    Symbol::new("a", 0)
}

#[test]
fn equal_terms_share_one_address_and_distinct_terms_do_not() {
    let table = TermTable::new();
    let th = table.register_thread();
    let x = th.constant(a());
    let t1 = th.create(f(), &[x.as_ref(), x.as_ref()]);
    let t2 = th.create(f(), &[x.as_ref(), x.as_ref()]);
    let u = th.create(g(), &[x.as_ref()]);
    assert_eq!(t1, t2);
    assert_eq!(t1.as_ref().id(), t2.as_ref().id());
    assert_ne!(t1.as_ref().id(), u.as_ref().id());
    assert_eq!(t1.symbol(), f());
    assert_eq!(t1.arg(0), x.as_ref());
    assert_eq!(t1.as_ref().args().count(), 2);
    assert_eq!(t1.to_string(), "f(a, a)");
    let i = th.int(-42);
    assert_eq!(i.int_value(), Some(-42));
    assert_eq!(th.int(-42), i);
    assert_ne!(th.int(42), i);
    assert_eq!(t1.int_value(), None);
    let stats = {
        th.flush_counts();
        table.stats()
    };
    assert_eq!(stats.creations, 7);
    assert_eq!(stats.hits, 2);
}

#[test]
#[should_panic(expected = "takes 2 arguments")]
fn wrong_arity_is_refused() {
    let table = TermTable::new();
    let th = table.register_thread();
    let x = th.constant(a());
    let _ = th.create(f(), &[x.as_ref()]);
}

#[test]
fn collection_frees_unprotected_terms_and_keeps_protected_ones_in_place() {
    let table = TermTable::new();
    let th = table.register_thread();
    let x = th.constant(a());
    let kept = th.create(g(), &[x.as_ref()]);
    let kept_addr = kept.as_ref().id();
    {
        let mut t = th.int(0);
        for i in 0..10_000 {
            let n = th.int(i);
            t = th.create(f(), &[t.as_ref(), n.as_ref()]);
        }
    }
    th.collect_garbage();
    let after = table.stats();
    assert_eq!(after.live_terms, 2, "only a and g(a) are protected");
    assert!(after.collections >= 1);
    assert_eq!(kept.as_ref().id(), kept_addr);
    assert_eq!(kept.to_string(), "g(a)");
    // Re-creating a collected term works and gives one address again.
    let y = th.int(5);
    assert_eq!(th.int(5), y);
}

#[test]
fn clones_protect_independently() {
    let table = TermTable::new();
    let th = table.register_thread();
    let x = th.constant(a());
    let t = th.create(g(), &[x.as_ref()]);
    let copy = t.clone();
    drop(t);
    drop(x);
    th.collect_garbage();
    assert_eq!(table.stats().live_terms, 2);
    assert_eq!(copy.to_string(), "g(a)");
    drop(copy);
    th.collect_garbage();
    assert_eq!(table.stats().live_terms, 0);
}

struct Held(Mutex<Vec<TermId>>);

impl RootSet for Held {
    fn for_each_root(&self, visit: &mut dyn FnMut(TermId)) {
        self.0.lock().unwrap().iter().for_each(|&id| visit(id));
    }
}

#[test]
fn registered_root_sets_keep_their_terms() {
    let table = TermTable::new();
    let th = table.register_thread();
    let held = Arc::new(Held(Mutex::new(Vec::new())));
    let registration = table.register_roots(held.clone());
    {
        let _section = th.shared_section();
        let x = th.constant(a());
        let t = th.create(g(), &[x.as_ref()]);
        held.0.lock().unwrap().push(t.as_ref().id());
    }
    th.collect_garbage();
    assert_eq!(table.stats().live_terms, 2);
    let id = held.0.lock().unwrap()[0];
    // SAFETY: the root set holds the term and no collection runs while we read it.
    assert_eq!(unsafe { id.get() }.to_string(), "g(a)");
    drop(registration);
    th.collect_garbage();
    assert_eq!(table.stats().live_terms, 0);
}

#[test]
fn automatic_collection_keeps_the_live_set_bounded() {
    let table = TermTable::new();
    let th = table.register_thread();
    for round in 0..50 {
        let mut t = th.int(round);
        for i in 0..2_000 {
            let n = th.int(i + round * 10_000);
            t = th.create(f(), &[t.as_ref(), n.as_ref()]);
        }
    }
    th.flush_counts();
    let stats = table.stats();
    assert!(stats.collections > 0, "{stats:?}");
    // 200k terms were made, at most ~2 rounds' worth plus the countdown may be alive.
    assert!(stats.live_terms < 100_000, "{stats:?}");
}

/// A random term shape, built bottom-up.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Shape {
    A,
    Int(i64),
    G(Box<Shape>),
    F(Box<Shape>, Box<Shape>),
}

impl Shape {
    fn build<'t, L: SectionLock>(&self, th: &'t TermThread<L>) -> Term<'t, L> {
        match self {
            Shape::A => th.constant(a()),
            Shape::Int(v) => th.int(*v),
            Shape::G(x) => {
                let x = x.build(th);
                th.create(g(), &[x.as_ref()])
            }
            Shape::F(x, y) => {
                let x = x.build(th);
                let y = y.build(th);
                th.create(f(), &[x.as_ref(), y.as_ref()])
            }
        }
    }

    /// Reads a term back structurally (the oracle for "unchanged contents").
    fn read(t: TermRef<'_>) -> Shape {
        if let Some(v) = t.int_value() {
            return Shape::Int(v);
        }
        match (t.symbol().name(), t.arity()) {
            ("a", 0) => Shape::A,
            ("g", 1) => Shape::G(Box::new(Shape::read(t.arg(0)))),
            ("f", 2) => Shape::F(
                Box::new(Shape::read(t.arg(0))),
                Box::new(Shape::read(t.arg(1))),
            ),
            other => panic!("unexpected symbol {other:?}"),
        }
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![Just(Shape::A), (0i64..4).prop_map(Shape::Int)];
    leaf.prop_recursive(5, 40, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| Shape::G(Box::new(x))),
            (inner.clone(), inner).prop_map(|(x, y)| Shape::F(Box::new(x), Box::new(y))),
        ]
    })
}

fn address_iff_structure<L: SectionLock>(shapes: &[Shape], collect_between: bool) {
    let table: Arc<TermTable<L>> = Arc::new(TermTable::default());
    let th = table.register_thread();
    let terms: Vec<_> = shapes.iter().map(|s| s.build(&th)).collect();
    if collect_between {
        th.collect_garbage();
    }
    let again: Vec<_> = shapes.iter().rev().map(|s| s.build(&th)).collect();
    let again: Vec<_> = again.into_iter().rev().collect();
    for (i, si) in shapes.iter().enumerate() {
        assert_eq!(Shape::read(terms[i].as_ref()), *si);
        assert_eq!(terms[i], again[i]);
        for (j, sj) in shapes.iter().enumerate() {
            assert_eq!(terms[i] == terms[j], si == sj, "{si:?} vs {sj:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn address_equality_is_structural_equality(shapes in prop::collection::vec(shape(), 1..12), gc in any::<bool>()) {
        address_iff_structure::<weft::sync::BusyForbidden>(&shapes, gc);
        address_iff_structure::<ParkingLotRwLock>(&shapes, gc);
        address_iff_structure::<StdRwLock>(&shapes, gc);
        address_iff_structure::<Unsynchronised>(&shapes, gc);
    }
}

/// Several threads create, drop and re-create random terms while collections run (both
/// triggered and on demand). Checks: a held term keeps its address and contents; terms held at
/// the same time by any threads are equal iff they have one address.
#[test]
fn concurrent_creation_and_collection_stress() {
    const THREADS: usize = 4;
    const STEPS: usize = 20_000;
    let table = TermTable::new();
    // Structure -> (address, number of handles held across all threads).
    let registry: Arc<Mutex<HashMap<Shape, (usize, usize)>>> = Arc::default();
    let handles: Vec<_> = (0..THREADS)
        .map(|seed| {
            let table = table.clone();
            let registry = registry.clone();
            std::thread::spawn(move || {
                let th = table.register_thread();
                let mut rng = seed as u64 * 0x9E37_79B9_7F4A_7C15 + 1;
                let mut next = move || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng
                };
                let mut held: Vec<(Shape, usize, Term<'_>)> = Vec::new();
                for step in 0..STEPS {
                    let r = next();
                    if r % 3 != 0 || held.is_empty() {
                        let s = random_shape(&mut next, 4);
                        let t = s.build(&th);
                        let addr = t.as_ref().id().addr();
                        {
                            let mut reg = registry.lock().unwrap();
                            let entry = reg.entry(s.clone()).or_insert((addr, 0));
                            if entry.1 > 0 {
                                assert_eq!(entry.0, addr, "two live copies of {s:?}");
                            }
                            *entry = (addr, entry.1 + 1);
                        }
                        held.push((s, addr, t));
                    } else {
                        let (s, addr, t) = held.swap_remove((r as usize / 3) % held.len());
                        assert_eq!(t.as_ref().id().addr(), addr, "{s:?} moved");
                        assert_eq!(Shape::read(t.as_ref()), s, "contents changed");
                        registry.lock().unwrap().get_mut(&s).unwrap().1 -= 1;
                        drop(t);
                    }
                    if step % 4_000 == 0 && seed == 0 {
                        th.collect_garbage();
                    }
                }
                for (s, addr, t) in held.drain(..) {
                    assert_eq!(t.as_ref().id().addr(), addr);
                    assert_eq!(Shape::read(t.as_ref()), s);
                    registry.lock().unwrap().get_mut(&s).unwrap().1 -= 1;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let th = table.register_thread();
    th.collect_garbage();
    assert_eq!(table.stats().live_terms, 0);
    assert!(table.stats().collections >= 1);
}

fn random_shape(next: &mut impl FnMut() -> u64, depth: u32) -> Shape {
    let r = next();
    if depth == 0 || r.is_multiple_of(4) {
        return if r.is_multiple_of(8) {
            Shape::A
        } else {
            Shape::Int((r >> 8) as i64 % 50)
        };
    }
    if r % 4 == 1 {
        Shape::G(Box::new(random_shape(next, depth - 1)))
    } else {
        Shape::F(
            Box::new(random_shape(next, depth - 1)),
            Box::new(random_shape(next, depth - 1)),
        )
    }
}
