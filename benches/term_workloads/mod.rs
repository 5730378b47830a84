//! The six micro-benchmarks of Figure 5.4 of the thesis, for any lock variant of the term
//! table. Shared by the criterion benchmark (`benches/terms.rs`) and the CSV runner
//! (`benches/terms_csv.rs`, run by `scripts/bench-terms.sh`).
//!
//! - `create-new-shared` (a): every thread creates t_N, t_0 = c, t_i = f(t_{i-1}, t_{i-1}), in
//!   an empty table; operations per thread: N.
//! - `create-new-distinct` (b): thread i creates t_{N/threads} over its own constant c_i.
//! - `create-existing-shared` (c): t_N exists; every thread creates it `reps/threads` times;
//!   operations per thread: N * reps / threads.
//! - `create-existing-distinct` (d): thread i's own t_N (over c_i) exists; it creates it
//!   `reps/threads` times.
//! - `traverse-shared` (e), `traverse-distinct` (f): `reps/threads` breadth-first traversals
//!   of t_20 that do not use its sharing; operations: arguments visited.

#![allow(dead_code)]

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use weft::sync::{BusyForbidden, ParkingLotRwLock, SectionLock, StdRwLock, Unsynchronised};
use weft::term::{Symbol, TermRef, TermTable, TermThread};

/// The workloads, in the order of Figure 5.4.
pub const WORKLOADS: [&str; 6] = [
    "create-new-shared",
    "create-new-distinct",
    "create-existing-shared",
    "create-existing-distinct",
    "traverse-shared",
    "traverse-distinct",
];

/// The lock variants of the table.
pub const VARIANTS: [&str; 4] = ["bf", "rwlock-pl", "rwlock-std", "sequential"];

/// Sizes of one run.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// N of t_N for the creation workloads.
    pub depth: usize,
    /// Total repetitions of the existing-term creations, split over the threads.
    pub create_reps: usize,
    /// Depth of the traversed term (the thesis: 20).
    pub traverse_depth: usize,
    /// Total traversals, split over the threads.
    pub traverse_reps: usize,
}

/// One measurement.
#[derive(Clone, Copy, Debug)]
pub struct Measurement {
    pub seconds: f64,
    /// Operations performed by one thread.
    pub ops_per_thread: u64,
}

impl Measurement {
    pub fn ns_per_op(&self) -> f64 {
        self.seconds * 1e9 / self.ops_per_thread.max(1) as f64
    }
}

/// Runs `workload` on a fresh table of lock `variant` with `threads` threads.
pub fn run(variant: &str, workload: &str, threads: usize, sizes: Sizes) -> Measurement {
    match variant {
        "bf" => run_with::<BusyForbidden>(workload, threads, sizes),
        "rwlock-pl" => run_with::<ParkingLotRwLock>(workload, threads, sizes),
        "rwlock-std" => run_with::<StdRwLock>(workload, threads, sizes),
        "sequential" => {
            assert_eq!(threads, 1, "the sequential table runs on one thread");
            run_with::<Unsynchronised>(workload, threads, sizes)
        }
        other => panic!("unknown variant {other}"),
    }
}

fn symbols() -> (Symbol, Symbol) {
    (Symbol::new("f", 2), Symbol::new("c", 0))
}

fn own_constant(thread: usize) -> Symbol {
    Symbol::new(&format!("c{thread}"), 0)
}

/// Creates t_n over `c` and returns the number of creations done.
fn create_chain<L: SectionLock>(th: &TermThread<L>, c: Symbol, n: usize) -> u64 {
    let (f, _) = symbols();
    let mut t = th.constant(c);
    for _ in 0..n {
        t = th.create(f, &[t.as_ref(), t.as_ref()]);
    }
    std::hint::black_box(&t);
    n as u64 + 1
}

/// Visits every argument of `t` breadth first without using sharing, level by level (the
/// arguments of the terms of one level are visited, and those with arguments form the next);
/// returns the number of arguments visited. `levels` are the thread's two level buffers, kept
/// between traversals so that their memory is allocated (and faulted in) once.
fn traverse<'a>(t: TermRef<'a>, levels: &mut [Vec<TermRef<'a>>; 2]) -> u64 {
    let [current, next] = levels;
    let mut visited = 0u64;
    current.clear();
    current.push(t);
    while !current.is_empty() {
        next.clear();
        for x in current.iter() {
            visited += x.arity() as u64;
            // Arguments without arguments of their own are visited, not queued.
            next.extend(x.args().filter(|a| a.arity() > 0));
        }
        std::mem::swap(current, next);
    }
    visited
}

fn run_with<L: SectionLock>(workload: &str, threads: usize, sizes: Sizes) -> Measurement {
    let table: Arc<TermTable<L>> = Arc::new(TermTable::default());
    let barrier = Arc::new(Barrier::new(threads + 1));
    let workload = workload.to_string();
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let table = table.clone();
            let barrier = barrier.clone();
            let workload = workload.clone();
            std::thread::spawn(move || worker(&table, &barrier, &workload, i, threads, sizes))
        })
        .collect();
    barrier.wait(); // setup done everywhere
    let start = Instant::now();
    barrier.wait(); // go
    let ops: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let seconds = start.elapsed().as_secs_f64();
    Measurement {
        seconds,
        ops_per_thread: ops.into_iter().max().unwrap_or(0),
    }
}

fn worker<L: SectionLock>(
    table: &Arc<TermTable<L>>,
    barrier: &Barrier,
    workload: &str,
    index: usize,
    threads: usize,
    sizes: Sizes,
) -> u64 {
    let th = table.register_thread();
    let (f, c) = symbols();
    let mine = own_constant(index);
    let per_thread = |total: usize| total.div_ceil(threads).max(1);
    // Setup (untimed): the terms that must exist before the measurement.
    let build = |c: Symbol, n: usize| {
        let mut t = th.constant(c);
        for _ in 0..n {
            t = th.create(f, &[t.as_ref(), t.as_ref()]);
        }
        t
    };
    let kept = match workload {
        "create-existing-shared" => Some(build(c, sizes.depth)),
        "create-existing-distinct" => Some(build(mine, sizes.depth)),
        "traverse-shared" => Some(build(c, sizes.traverse_depth)),
        "traverse-distinct" => Some(build(mine, sizes.traverse_depth)),
        _ => None,
    };
    // A level holds at most 2^depth terms; allocate the two level buffers and fault their
    // pages in before the measurement, which times the traversal, not the allocator.
    let mut levels: [Vec<TermRef<'_>>; 2] = match &kept {
        Some(t) if workload.starts_with("traverse") => {
            [0, 1].map(|_| vec![t.as_ref(); 1usize << sizes.traverse_depth])
        }
        _ => [Vec::new(), Vec::new()],
    };
    barrier.wait();
    barrier.wait();
    let ops = match workload {
        "create-new-shared" => create_chain(&th, c, sizes.depth),
        "create-new-distinct" => create_chain(&th, mine, sizes.depth / threads),
        "create-existing-shared" => (0..per_thread(sizes.create_reps))
            .map(|_| create_chain(&th, c, sizes.depth))
            .sum(),
        "create-existing-distinct" => (0..per_thread(sizes.create_reps))
            .map(|_| create_chain(&th, mine, sizes.depth))
            .sum(),
        "traverse-shared" | "traverse-distinct" => {
            let t = kept.as_ref().expect("built in setup");
            (0..per_thread(sizes.traverse_reps))
                .map(|_| traverse(t.as_ref(), &mut levels))
                .sum()
        }
        other => panic!("unknown workload {other}"),
    };
    drop(kept);
    ops
}

/// Median of `runs` measurements.
pub fn median(mut runs: Vec<Measurement>) -> Measurement {
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    runs[runs.len() / 2]
}

/// A duration in seconds, for criterion's custom timing.
pub fn duration(m: Measurement) -> Duration {
    Duration::from_secs_f64(m.seconds)
}
